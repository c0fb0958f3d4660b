import { type AccessLevel, githubAccess, type Logger } from "@opencode-reviewer/core"
import type { GithubContext } from "./context"
import { GithubCreateLandedError } from "./errors"
import { createGithubClients, createGithubFetch, type GithubFetch, type GithubLandedRequest } from "./requester"

// The calls the provider makes, typed by what it reads. Every call goes through our request layer
// (requester.ts); a create that may have been stored behind a 5xx is looked for by the unique
// hidden marker its body carries (docs/github.md, "Failures") and never sent twice.

/** A user as REST names them. `type` is `User` or `Bot`. */
export interface ApiUser {
  login: string
  type: string
}

export interface ApiPull {
  number: number
  title: string
  body: string | null
  state: string
  draft?: boolean
  html_url: string
  user: ApiUser | null
  changed_files?: number
  head: { sha: string; ref: string; repo: { full_name: string } | null }
  base: { sha: string; ref: string; repo: { full_name: string } }
}

export interface ApiFile {
  filename: string
  previous_filename?: string
  status: string
  patch?: string
}

export interface ApiIssueComment {
  id: number
  body?: string
  user: ApiUser | null
  created_at: string
}

export interface ApiReview {
  id: number
  body: string
  state: string
  commit_id: string | null
  user: ApiUser | null
  submitted_at?: string
}

export interface ApiReviewComment {
  id: number
  body: string
  path: string
  line?: number | null
  original_line?: number | null
  commit_id: string
  original_commit_id: string
  in_reply_to_id?: number
  user: ApiUser | null
  created_at: string
}

/** A review thread as GraphQL reports it; comments oldest first. */
export interface ApiThread {
  id: string
  isResolved: boolean
  isOutdated: boolean
  path: string
  line: number | null
  comments: { databaseId: number; body: string; author: { login: string; __typename: string } | null }[]
}

/** An inline comment of a review to create: line and side, optionally a range from start_line. */
export interface ReviewCommentInput {
  path: string
  body: string
  line: number
  side: "LEFT" | "RIGHT"
  start_line?: number
  start_side?: "LEFT" | "RIGHT"
}

export type ReviewEvent = "APPROVE" | "REQUEST_CHANGES" | "COMMENT"

export interface GithubClient {
  pull(): Promise<ApiPull>
  /** The pull request's diff text, or null when GitHub refuses it as too large (406). */
  diff(): Promise<string | null>
  files(): Promise<ApiFile[]>
  /** The user the token belongs to, or null for an installation token (GitHub answers 403). */
  authenticatedUser(): Promise<ApiUser | null>
  issueComments(): Promise<ApiIssueComment[]>
  createIssueComment(body: string): Promise<ApiIssueComment>
  updateIssueComment(id: number, body: string): Promise<ApiIssueComment>
  deleteIssueComment(id: number): Promise<void>
  reviews(): Promise<ApiReview[]>
  createReview(input: {
    commitId: string
    event: ReviewEvent
    body: string
    comments: ReviewCommentInput[]
  }): Promise<ApiReview>
  dismissReview(id: number, message: string): Promise<void>
  reviewComments(): Promise<ApiReviewComment[]>
  reply(commentId: number, body: string): Promise<ApiReviewComment>
  threads(): Promise<ApiThread[]>
  resolveThread(id: string, resolved: boolean): Promise<void>
  /** A file's text at a ref, or null when the path (or ref) does not exist there or is not a file. */
  fileAt(path: string, ref: string): Promise<string | null>
  /** Every entry of the tree at a ref, recursively; null when the ref is unknown. */
  tree(ref: string): Promise<{ entries: { path: string; mode: string; type: string }[]; truncated: boolean } | null>
  /** A user's access to the repository on core's ladder (`none` … `admin`), from their collaborator role. */
  permission(login: string): Promise<AccessLevel>
  addReaction(commentId: number, kind: "conversation" | "review", content: "eyes" | "+1"): Promise<void>
}

export interface GithubClientOptions {
  context: GithubContext
  fetch?: GithubFetch
  sleep?: (ms: number) => Promise<void>
  now?: () => number
  timeoutMs?: number
  maxAttempts?: number
  /** Longest total wait of one request (rate limits, backoff); default 60 s. */
  maxWaitMs?: number
  log: Logger
}

// The markers whose value is unique to one create: a landed check finds the create by them.
const uniqueMarker = /<!-- opencode-reviewer:(?:summary|review|reply)=[A-Za-z0-9:_-]+ -->/

const threadsQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes {
          id isResolved isOutdated path line
          comments(first: 100) { nodes { databaseId body author { login __typename } } }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}`

interface ThreadsPage {
  repository: {
    pullRequest: {
      reviewThreads: {
        nodes: (Omit<ApiThread, "comments"> & { comments: { nodes: ApiThread["comments"] } })[]
        pageInfo: { hasNextPage: boolean; endCursor: string | null }
      }
    } | null
  } | null
}

/** The provider's GitHub calls for one pull request, on our request layer. */
export function createGithubClient(options: GithubClientOptions): GithubClient {
  const { context, log } = options
  const owner = context.owner
  const repo = context.repo
  const number = context.number
  const apiPath = new URL(context.apiUrl).pathname.replace(/\/+$/, "")
  let client: GithubClient | null = null

  const fetch = createGithubFetch({
    fetch: options.fetch,
    sleep: options.sleep,
    now: options.now,
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
    maxWaitMs: options.maxWaitMs,
    log,
    landed: (request) => landed(request),
  })
  const { rest, graphql } = createGithubClients({
    apiUrl: context.apiUrl,
    graphqlUrl: context.graphqlUrl,
    token: context.token,
    fetch,
    log,
  })
  const base = { owner, repo }

  // After a 502/503/504 or a dropped connection on a create: was it stored? By the marker only our
  // create can carry (a nonce, or a reply's tag); resolving a thread or reacting may simply repeat.
  async function landed(request: GithubLandedRequest): Promise<boolean | null> {
    const self = client as GithubClient
    if (/\/graphql$/.test(request.path)) return /\b(?:un)?resolveReviewThread\b/.test(request.body ?? "") ? false : null
    const path = request.path.slice(apiPath.length)
    if (/\/reactions$/.test(path)) return false
    const body = (request.json as { body?: unknown } | undefined)?.body
    const marker = typeof body === "string" ? uniqueMarker.exec(body)?.[0] : undefined
    if (!marker) return null
    const has = (items: readonly { body?: string | null }[]) => items.some((item) => item.body?.includes(marker))
    if (/\/issues\/\d+\/comments$/.test(path)) return has(await self.issueComments())
    if (/\/pulls\/\d+\/reviews$/.test(path)) return has(await self.reviews())
    if (/\/pulls\/\d+\/comments\/\d+\/replies$/.test(path)) return has(await self.reviewComments())
    return null
  }

  // A create the landed check found stored: the stored object, found again by the same marker.
  async function created<T extends { body?: string | null }>(
    call: Promise<T>,
    body: string,
    list: () => Promise<T[]>,
  ): Promise<T> {
    try {
      return await call
    } catch (error) {
      if (!(error instanceof GithubCreateLandedError)) throw error
      const marker = uniqueMarker.exec(body)?.[0]
      const found = marker ? (await list()).find((item) => item.body?.includes(marker)) : undefined
      if (!found) throw error
      return found
    }
  }

  client = {
    async pull() {
      return (await rest.pulls.get({ ...base, pull_number: number })).data as ApiPull
    },
    async diff() {
      try {
        const answer = await rest.pulls.get({ ...base, pull_number: number, mediaType: { format: "diff" } })
        return answer.data as unknown as string
      } catch (error) {
        if ((error as { status?: number }).status === 406) return null
        throw error
      }
    },
    async files() {
      return (await rest.paginate(rest.pulls.listFiles, { ...base, pull_number: number, per_page: 100 })) as ApiFile[]
    },
    async authenticatedUser() {
      try {
        return (await rest.users.getAuthenticated()).data as ApiUser
      } catch (error) {
        if ((error as { status?: number }).status === 403) return null
        throw error
      }
    },
    async issueComments() {
      return (await rest.paginate(rest.issues.listComments, {
        ...base,
        issue_number: number,
        per_page: 100,
      })) as ApiIssueComment[]
    },
    async createIssueComment(body) {
      return created(
        rest.issues
          .createComment({ ...base, issue_number: number, body })
          .then((answer) => answer.data as ApiIssueComment),
        body,
        () => (client as GithubClient).issueComments(),
      )
    },
    async updateIssueComment(id, body) {
      return (await rest.issues.updateComment({ ...base, comment_id: id, body })).data as ApiIssueComment
    },
    async deleteIssueComment(id) {
      await rest.issues.deleteComment({ ...base, comment_id: id })
    },
    async reviews() {
      return (await rest.paginate(rest.pulls.listReviews, {
        ...base,
        pull_number: number,
        per_page: 100,
      })) as ApiReview[]
    },
    async createReview(input) {
      return created(
        rest.pulls
          .createReview({
            ...base,
            pull_number: number,
            commit_id: input.commitId,
            event: input.event,
            body: input.body,
            comments: input.comments,
          })
          .then((answer) => answer.data as ApiReview),
        input.body,
        () => (client as GithubClient).reviews(),
      )
    },
    async dismissReview(id, message) {
      await rest.pulls.dismissReview({ ...base, pull_number: number, review_id: id, message, event: "DISMISS" })
    },
    async reviewComments() {
      return (await rest.paginate(rest.pulls.listReviewComments, {
        ...base,
        pull_number: number,
        per_page: 100,
      })) as ApiReviewComment[]
    },
    async reply(commentId, body) {
      return created(
        rest.pulls
          .createReplyForReviewComment({ ...base, pull_number: number, comment_id: commentId, body })
          .then((answer) => answer.data as ApiReviewComment),
        body,
        () => (client as GithubClient).reviewComments(),
      )
    },
    async threads() {
      const threads: ApiThread[] = []
      let after: string | null = null
      for (;;) {
        const page: ThreadsPage = await graphql<ThreadsPage>(threadsQuery, { owner, name: repo, number, after })
        const connection = page.repository?.pullRequest?.reviewThreads
        if (!connection) return threads
        for (const node of connection.nodes) threads.push({ ...node, comments: node.comments.nodes })
        if (!connection.pageInfo.hasNextPage || !connection.pageInfo.endCursor) return threads
        after = connection.pageInfo.endCursor
      }
    },
    async resolveThread(id, resolved) {
      const mutation = resolved
        ? "mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id isResolved } } }"
        : "mutation($id: ID!) { unresolveReviewThread(input: { threadId: $id }) { thread { id isResolved } } }"
      await graphql(mutation, { id })
    },
    async fileAt(path, ref) {
      try {
        const answer = await rest.repos.getContent({ ...base, path, ref })
        const data = answer.data as { type?: string; encoding?: string; content?: string }
        if (Array.isArray(answer.data) || data.type !== "file") return null
        if (data.encoding !== "base64" || data.content === undefined) {
          log.warn({ path, ref, encoding: data.encoding }, "file too large for the contents API; treated as unreadable")
          return null
        }
        return Buffer.from(data.content, "base64").toString("utf8")
      } catch (error) {
        if ((error as { status?: number }).status === 404) return null
        throw error
      }
    },
    async tree(ref) {
      try {
        const answer = await rest.git.getTree({ ...base, tree_sha: ref, recursive: "1" })
        return {
          entries: answer.data.tree.map((entry) => ({
            path: entry.path ?? "",
            mode: entry.mode ?? "",
            type: entry.type ?? "",
          })),
          truncated: answer.data.truncated,
        }
      } catch (error) {
        if ((error as { status?: number }).status === 404) return null
        throw error
      }
    },
    async permission(login) {
      try {
        const { data } = await rest.repos.getCollaboratorPermissionLevel({ ...base, username: login })
        return githubAccess({ roleName: data.role_name, permission: data.permission })
      } catch (error) {
        if ((error as { status?: number }).status === 404) return "none"
        throw error
      }
    },
    async addReaction(commentId, kind, content) {
      if (kind === "conversation")
        await rest.reactions.createForIssueComment({ ...base, comment_id: commentId, content })
      else await rest.reactions.createForPullRequestReviewComment({ ...base, comment_id: commentId, content })
    },
  }
  return client
}
