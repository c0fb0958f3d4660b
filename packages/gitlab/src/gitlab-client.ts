import { Gitlab } from "@gitbeaker/rest"
import { type Logger, silentLogger } from "@opencode-reviewer/core"
import { ApiDiffFile } from "./api-diff"
import {
  ApiApprovals,
  ApiMergeRequest,
  ApiNote,
  ApiReviewer,
  ApiTreeEntry,
  ApiUser,
  type Discussion,
  parseDiscussions,
  parseList,
  parseOne,
} from "./api-schemas"
import { GitlabRequestError } from "./errors"
import type { TextPosition } from "./position"
import type { GitlabRequester } from "./requester"

/** The merge request calls the provider makes, parsed. Reads go through gitbeaker; creates go straight through our requester so each carries its own "did it land?" check. */
export interface GitlabClient {
  readonly problems: string[]
  currentUser(): Promise<ApiUser>
  /** A user's access level on the project, inherited membership included (30 is Developer); null for a non-member. */
  memberAccess(userId: number): Promise<number | null>
  mergeRequest(): Promise<ApiMergeRequest>
  diffs(): Promise<ApiDiffFile[]>
  discussions(): Promise<Discussion[]>
  discussion(id: string): Promise<Discussion>
  /** A file on a branch or commit; null when it does not exist there (404). */
  rawFile(path: string, ref: string): Promise<string | null>
  /** Every entry under a folder at a ref, recursively (all pages); null when GitLab answers 404. */
  tree(path: string, ref: string): Promise<ApiTreeEntry[] | null>
  createNote(body: string, landed: () => Promise<ApiNote | undefined>): Promise<ApiNote>
  /** Posts a note made of quick actions only; GitLab may answer without a note (it executes and drops it). */
  postCommand(command: string, landed: () => Promise<unknown>): Promise<void>
  editNote(noteId: number, body: string): Promise<ApiNote>
  /** Deletes one of the bot's notes (a thread's only note deletes the thread); a note already gone is not an error. */
  deleteNote(noteId: number): Promise<void>
  createThread(body: string, position: TextPosition, landed: () => Promise<Discussion | undefined>): Promise<Discussion>
  reply(discussionId: string, body: string, landed: () => Promise<ApiNote | undefined>): Promise<ApiNote>
  resolveThread(discussionId: string, resolved: boolean): Promise<void>
  approve(sha: string): Promise<void>
  unapprove(): Promise<void>
  approvals(): Promise<ApiApprovals>
  reviewers(): Promise<ApiReviewer[]>
  setReviewers(ids: number[]): Promise<void>
  /** POST `<server>/api/graphql`; variables must be snake_case-proof (we send them as given). */
  graphql(
    query: string,
    variables: Record<string, unknown>,
    landed?: () => Promise<unknown>,
  ): Promise<{ data: unknown; errors: string[] }>
}

/** Where the merge request is and how to reach it. */
export interface ClientOptions {
  requester: GitlabRequester
  serverUrl: string
  projectId: string
  iid: number
  log?: Logger
}

/** Builds the client: gitbeaker with our requester (`requesterFn`), plus direct calls for creates. */
export function createGitlabClient(options: ClientOptions): GitlabClient {
  const { requester, projectId, iid } = options
  const log = options.log ?? silentLogger
  const problems: string[] = []
  const api = new Gitlab({
    host: requester.apiUrl.replace(/\/api\/v4$/, ""),
    requesterFn: requester.requesterFn,
    // Our requester times each attempt out itself; gitbeaker's one signal would span all retries.
    queryTimeout: null,
  })
  const mr = `projects/${encodeURIComponent(projectId)}/merge_requests/${iid}`

  const noted = (list: string[]) => {
    for (const problem of list.splice(0)) {
      problems.push(problem)
      log.warn({ problem }, "gitlab response item skipped")
    }
  }
  const list = <T>(schema: Parameters<typeof parseList<T>>[0], value: unknown, what: string): T[] => {
    const found: string[] = []
    const items = parseList(schema, value, what, found)
    noted(found)
    return items
  }
  const discussionsOf = (value: unknown): Discussion[] => {
    const found: string[] = []
    const items = parseDiscussions(value, found)
    noted(found)
    return items
  }

  const approvals = async () =>
    parseOne(
      ApiApprovals,
      await api.MergeRequestApprovals.showConfiguration(projectId, { mergerequestIId: iid }),
      `GET ${mr}/approvals`,
    )

  return {
    problems,
    async currentUser() {
      return parseOne(ApiUser, await api.Users.showCurrentUser(), "GET /user")
    },
    async memberAccess(userId) {
      try {
        const member = (await api.ProjectMembers.show(projectId, userId, { includeInherited: true })) as {
          access_level?: unknown
        }
        return typeof member.access_level === "number" ? member.access_level : null
      } catch (error) {
        if (error instanceof GitlabRequestError && error.data.status === 404) return null
        throw error
      }
    },
    async mergeRequest() {
      return parseOne(ApiMergeRequest, await api.MergeRequests.show(projectId, iid), `GET ${mr}`)
    },
    async diffs() {
      return list(ApiDiffFile, await api.MergeRequests.allDiffs(projectId, iid, { perPage: 100 }), "diffs")
    },
    async discussions() {
      return discussionsOf(await api.MergeRequestDiscussions.all(projectId, iid, { perPage: 100 }))
    },
    async discussion(id) {
      const [discussion] = discussionsOf([await api.MergeRequestDiscussions.show(projectId, iid, id)])
      if (!discussion)
        throw new GitlabRequestError({
          method: "GET",
          path: `${mr}/discussions/${id}`,
          status: null,
          description: "unreadable discussion",
          attempts: 1,
          ambiguous: false,
        })
      return discussion
    },
    async rawFile(path, ref) {
      try {
        const body: unknown = await api.RepositoryFiles.showRaw(projectId, path, ref)
        if (typeof body === "string") return body
        if (body instanceof Blob) return await body.text()
        return JSON.stringify(body)
      } catch (error) {
        if (error instanceof GitlabRequestError && error.data.status === 404) return null
        throw error
      }
    },
    async tree(path, ref) {
      try {
        // 404 "Tree Not Found" for an unknown ref, "invalid revision or path Not Found" for a
        // folder that is missing at the ref (or is a file).
        const entries: unknown = await api.Repositories.allRepositoryTrees(projectId, {
          ...(path === "" ? {} : { path }),
          ref,
          recursive: true,
          perPage: 100,
        })
        return list(ApiTreeEntry, entries, "repository tree")
      } catch (error) {
        if (error instanceof GitlabRequestError && error.data.status === 404) return null
        throw error
      }
    },
    async createNote(body, landed) {
      const response = await requester.request({ method: "POST", path: `${mr}/notes`, json: { body }, landed })
      return parseOne(ApiNote, response.body, `POST ${mr}/notes`)
    },
    async postCommand(command, landed) {
      await requester.request({ method: "POST", path: `${mr}/notes`, json: { body: command }, landed })
    },
    async editNote(noteId, body) {
      return parseOne(
        ApiNote,
        await api.MergeRequestNotes.edit(projectId, iid, noteId, { body }),
        `PUT ${mr}/notes/${noteId}`,
      )
    },
    async deleteNote(noteId) {
      try {
        await api.MergeRequestNotes.remove(projectId, iid, noteId)
      } catch (error) {
        if (error instanceof GitlabRequestError && error.data.status === 404) return
        throw error
      }
    },
    async createThread(body, position, landed) {
      // JSON, not gitbeaker's multipart: its form encoding cuts a path at "&" (docs/gitlab.md#multipart-and-decamelised-bodies).
      const response = await requester.request({
        method: "POST",
        path: `${mr}/discussions`,
        json: { body, position },
        landed,
      })
      const [discussion] = discussionsOf([response.body])
      if (!discussion)
        throw new GitlabRequestError({
          method: "POST",
          path: `${mr}/discussions`,
          status: response.status,
          description: "unreadable discussion in the answer",
          attempts: 1,
          ambiguous: false,
        })
      return discussion
    },
    async reply(discussionId, body, landed) {
      const path = `${mr}/discussions/${encodeURIComponent(discussionId)}/notes`
      const response = await requester.request({ method: "POST", path, json: { body }, landed })
      return parseOne(ApiNote, response.body, `POST ${path}`)
    },
    async resolveThread(discussionId, resolved) {
      await api.MergeRequestDiscussions.resolve(projectId, iid, discussionId, resolved)
    },
    async approve(sha) {
      await requester.request({
        method: "POST",
        path: `${mr}/approve`,
        json: { sha },
        landed: async () => ((await approvals()).user_has_approved ? {} : undefined),
      })
    },
    async unapprove() {
      await requester.request({
        method: "POST",
        path: `${mr}/unapprove`,
        json: {},
        landed: async () => ((await approvals()).user_has_approved ? undefined : {}),
      })
    },
    approvals,
    async reviewers() {
      return list(ApiReviewer, await api.MergeRequests.showReviewers(projectId, iid), "reviewers")
    },
    async setReviewers(ids) {
      await api.MergeRequests.edit(projectId, iid, { reviewerIds: ids })
    },
    async graphql(query, variables, landed) {
      const response = await requester.request({
        method: "POST",
        path: `${options.serverUrl.replace(/\/+$/, "")}/api/graphql`,
        json: { query, variables },
        landed,
      })
      const body = (response.body ?? {}) as { data?: unknown; errors?: unknown }
      const errors = Array.isArray(body.errors)
        ? body.errors.map((error) =>
            typeof error === "object" && error !== null && "message" in error
              ? String((error as { message: unknown }).message)
              : JSON.stringify(error),
          )
        : []
      return { data: body.data ?? null, errors }
    },
  }
}
