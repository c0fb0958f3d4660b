import type { FakeContents } from "./github-fake-contents"
import {
  docs,
  githubError,
  json,
  notAccessibleByIntegration,
  notAccessibleByToken,
  notFound,
  paginate,
  type Reply,
  requiresAuthentication,
  validationFailed,
} from "./github-fake-http"
import type { FakeRender } from "./github-fake-render"
import type { FakeReviews } from "./github-fake-reviews"
import type {
  FakeGithubActor,
  FakeGithubPull,
  FakeGithubReaction,
  FakeGithubRepo,
  FakeReactionContent,
  GithubPermission,
} from "./github-fake-types"
import { canRead, canWrite, type FakeWorld } from "./github-fake-world"

// The REST routes of the GitHub fake, below `/repos/{owner}/{repo}/` (or `/repositories/{id}/`, the
// form GitHub's pagination links use). Each route names the documentation page GitHub puts in its
// errors' `documentation_url`.

export interface RouteContext {
  url: URL
  request: Request
  actor: FakeGithubActor | null
  repo: FakeGithubRepo
  permission: GithubPermission
  params: Record<string, string>
  body: Record<string, unknown>
}

export interface RepoRoute {
  method: string
  /**
   * Segments after the repository: literal, ":name" for one non-empty segment, or "*name" (last
   * only) for the rest of the path, its segments joined by "/" and possibly empty
   * (`contents/{path}`, where octokit sends the path's slashes encoded and curl sends them raw).
   */
  pattern: string[]
  docs: string
  run(context: RouteContext): Reply
}

const reactionContents: FakeReactionContent[] = ["+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"]
/** Measured: 262,144 UTF-8 bytes pass, one more fails, although the message says 65536 characters. */
const maxBodyBytes = 262_144
/** "Responses include a maximum of 3000 files." */
const maxListedFiles = 3000
/** The diff media type answers 406 past 300 files or 20,000 lines. */
const maxDiffFiles = 300
const maxDiffLines = 20_000

export function createRoutes(
  world: FakeWorld,
  render: FakeRender,
  reviews: FakeReviews,
  contents: FakeContents,
): RepoRoute[] {
  const { state } = world

  const pullOf = (context: RouteContext): FakeGithubPull | null => {
    const number = Number(context.params.number)
    return Number.isInteger(number) ? (world.findPull(context.repo, number) ?? null) : null
  }

  /** Who may write: a bot needs write access; a human may comment and review with read access. */
  const refuseWrite = (context: RouteContext, documentationUrl: string, humansNeed: "read" | "write"): Reply | null => {
    if (!context.actor) return requiresAuthentication(documentationUrl)
    if (context.actor.user.type === "Bot")
      return canWrite(context.permission) ? null : notAccessibleByIntegration(documentationUrl)
    const allowed = humansNeed === "read" ? canRead(context.permission) : canWrite(context.permission)
    return allowed ? null : notAccessibleByToken(documentationUrl)
  }

  const linkBase = (context: RouteContext, rest: string) => `${world.baseUrl}/repositories/${context.repo.id}/${rest}`

  const list = <T>(context: RouteContext, rest: string, items: T[], renderItem: (item: T) => unknown) => {
    const { page, headers } = paginate(items, context.url, linkBase(context, rest))
    return json(200, page.map(renderItem), headers)
  }

  const checkBody = (input: Record<string, unknown>, documentationUrl: string, resource: string): Reply | string => {
    if (!("body" in input)) return githubError(422, `Invalid request.\n\n"body" wasn't supplied.`, documentationUrl)
    const body = input.body
    if (typeof body !== "string")
      return githubError(
        422,
        `Invalid request.\n\nFor 'properties/body', ${body === null ? "nil" : JSON.stringify(body)} is not a string.`,
        documentationUrl,
      )
    if (body.trim() === "")
      return validationFailed(
        [{ resource, code: "unprocessable", field: "data", message: "Body cannot be blank" }],
        documentationUrl,
      )
    if (new TextEncoder().encode(body).length > maxBodyBytes)
      return validationFailed(
        [{ resource, code: "unprocessable", field: "data", message: "Body is too long (maximum is 65536 characters)" }],
        documentationUrl,
      )
    return body
  }

  const issueCommentOf = (context: RouteContext) => {
    const id = Number(context.params.id)
    return state.issueComments.find((comment) => comment.id === id && comment.repo === context.repo.fullName) ?? null
  }

  const reviewCommentOf = (context: RouteContext) => {
    const id = Number(context.params.id)
    const comment = state.reviewComments.find(
      (candidate) => candidate.id === id && candidate.repo === context.repo.fullName,
    )
    return comment && !reviews.isPending(comment) ? comment : null
  }

  const react = (context: RouteContext, reactions: FakeGithubReaction[], documentationUrl: string): Reply => {
    const refused = refuseWrite(context, documentationUrl, "read")
    if (refused) return refused
    const content = context.body.content
    if (typeof content !== "string" || !reactionContents.includes(content as FakeReactionContent))
      return githubError(
        422,
        `Invalid request.\n\nFor 'properties/content', ${JSON.stringify(content ?? null)} is not one of ${JSON.stringify(reactionContents).replaceAll(",", ", ")}.`,
        documentationUrl,
      )
    const actor = context.actor!
    const existing = reactions.find((reaction) => reaction.user.id === actor.user.id && reaction.content === content)
    // "A response with an HTTP 200 status means that you already added the reaction type."
    if (existing) return json(200, render.reaction(existing))
    const id = world.nextId("reaction")
    const reaction: FakeGithubReaction = {
      id,
      nodeId: world.nodeId("REA", id),
      user: actor.user,
      content: content as FakeReactionContent,
      createdAt: world.now(),
    }
    reactions.push(reaction)
    return json(201, render.reaction(reaction))
  }

  const listReactions = (context: RouteContext, rest: string, reactions: FakeGithubReaction[]) => {
    const content = context.url.searchParams.get("content")
    return list(
      context,
      rest,
      content ? reactions.filter((reaction) => reaction.content === content) : reactions,
      render.reaction,
    )
  }

  return [
    {
      method: "GET",
      pattern: ["pulls", ":number"],
      docs: docs.getPull,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.getPull)
        const accept = context.request.headers.get("accept") ?? ""
        if (/application\/vnd\.github(\.v3)?\.diff/.test(accept)) {
          const head = pull.versions.at(-1)!
          const lines = head.diff.split("\n").length
          if (head.files.length > maxDiffFiles || lines > maxDiffLines) {
            const what = head.files.length > maxDiffFiles ? `files (${maxDiffFiles})` : `lines (${maxDiffLines})`
            return githubError(
              406,
              `Sorry, the diff exceeded the maximum number of ${what}. Consider using 'List pull requests files' API or locally cloning the repository instead.`,
              docs.listFiles,
              { errors: [{ resource: "PullRequest", field: "diff", code: "too_large" }] },
            )
          }
          return { status: 200, text: head.diff, contentType: "application/vnd.github.diff; charset=utf-8" }
        }
        return json(200, render.pull(pull, context.repo))
      },
    },
    {
      method: "GET",
      pattern: ["pulls", ":number", "files"],
      docs: docs.listFiles,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.listFiles)
        const head = pull.versions.at(-1)!
        return list(context, `pulls/${pull.number}/files`, head.files.slice(0, maxListedFiles), (file) =>
          render.file(file, context.repo, head.headSha),
        )
      },
    },
    {
      method: "GET",
      pattern: ["pulls", ":number", "reviews"],
      docs: docs.listReviews,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.listReviews)
        const items = state.reviews.filter(
          (review) =>
            review.repo === context.repo.fullName &&
            review.pullNumber === pull.number &&
            (review.state !== "PENDING" || review.user.id === context.actor?.user.id),
        )
        return list(context, `pulls/${pull.number}/reviews`, items, (review) => render.review(review, context.repo))
      },
    },
    {
      method: "POST",
      pattern: ["pulls", ":number", "reviews"],
      docs: docs.createReview,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.createReview)
        const refused = refuseWrite(context, docs.createReview, "read")
        if (refused) return refused
        return reviews.createReview(context.actor!, context.repo, pull, context.body)
      },
    },
    {
      method: "PUT",
      pattern: ["pulls", ":number", "reviews", ":review_id", "dismissals"],
      docs: docs.dismissReview,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.dismissReview)
        // Write access, for people too ("repository administrators or people with write access can
        // dismiss a review"); branch protection's dismissal restrictions are not modelled.
        const refused = refuseWrite(context, docs.dismissReview, "write")
        if (refused) return refused
        const reviewId = Number(context.params.review_id)
        if (!Number.isInteger(reviewId)) return notFound(docs.dismissReview)
        return reviews.dismissReview(context.actor!, context.repo, pull, reviewId, context.body)
      },
    },
    {
      method: "GET",
      pattern: ["pulls", ":number", "comments"],
      docs: docs.listReviewComments,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.listReviewComments)
        return list(context, `pulls/${pull.number}/comments`, reviews.listComments(context.repo, pull), (comment) =>
          render.reviewComment(comment, context.repo),
        )
      },
    },
    {
      method: "POST",
      pattern: ["pulls", ":number", "comments"],
      docs: docs.createReviewComment,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.createReviewComment)
        const refused = refuseWrite(context, docs.createReviewComment, "read")
        if (refused) return refused
        return reviews.createReviewComment(context.actor!, context.repo, pull, context.body)
      },
    },
    {
      method: "POST",
      pattern: ["pulls", ":number", "comments", ":id", "replies"],
      docs: docs.createReply,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.createReply)
        const refused = refuseWrite(context, docs.createReply, "read")
        if (refused) return refused
        return reviews.createReply(context.actor!, context.repo, pull, Number(context.params.id), context.body)
      },
    },
    {
      method: "GET",
      pattern: ["issues", ":number", "comments"],
      docs: docs.listIssueComments,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.listIssueComments)
        const since = context.url.searchParams.get("since")
        const items = state.issueComments
          .filter((comment) => comment.repo === context.repo.fullName && comment.issueNumber === pull.number)
          .filter((comment) => !since || comment.updatedAt >= since)
          .sort((a, b) => a.id - b.id)
        return list(context, `issues/${pull.number}/comments`, items, (comment) =>
          render.issueComment(comment, context.repo),
        )
      },
    },
    {
      method: "POST",
      pattern: ["issues", ":number", "comments"],
      docs: docs.createIssueComment,
      run(context) {
        const pull = pullOf(context)
        if (!pull) return notFound(docs.createIssueComment)
        const refused = refuseWrite(context, docs.createIssueComment, "read")
        if (refused) return refused
        const body = checkBody(context.body, docs.createIssueComment, "IssueComment")
        if (typeof body !== "string") return body
        const id = world.nextId("comment")
        const now = world.now()
        const comment = {
          id,
          nodeId: world.nodeId("IC", id),
          repo: context.repo.fullName,
          issueNumber: pull.number,
          user: context.actor!.user,
          body,
          createdAt: now,
          updatedAt: now,
          reactions: [],
        }
        state.issueComments.push(comment)
        const rendered = render.issueComment(comment, context.repo)
        return json(201, rendered, { Location: rendered.url })
      },
    },
    {
      method: "GET",
      pattern: ["issues", "comments", ":id"],
      docs: "https://docs.github.com/rest/issues/comments#get-an-issue-comment",
      run(context) {
        const comment = issueCommentOf(context)
        if (!comment) return notFound("https://docs.github.com/rest/issues/comments#get-an-issue-comment")
        return json(200, render.issueComment(comment, context.repo))
      },
    },
    {
      method: "PATCH",
      pattern: ["issues", "comments", ":id"],
      docs: docs.updateIssueComment,
      run(context) {
        const comment = issueCommentOf(context)
        if (!comment) return notFound(docs.updateIssueComment)
        const own = context.actor?.user.id === comment.user.id
        const refused = refuseWrite(context, docs.updateIssueComment, own ? "read" : "write")
        if (refused) return refused
        const body = checkBody(context.body, docs.updateIssueComment, "IssueComment")
        if (typeof body !== "string") return body
        comment.body = body
        comment.updatedAt = world.now()
        return json(200, render.issueComment(comment, context.repo))
      },
    },
    {
      method: "DELETE",
      pattern: ["issues", "comments", ":id"],
      docs: docs.deleteIssueComment,
      run(context) {
        const comment = issueCommentOf(context)
        if (!comment) return notFound(docs.deleteIssueComment)
        const own = context.actor?.user.id === comment.user.id
        const refused = refuseWrite(context, docs.deleteIssueComment, own ? "read" : "write")
        if (refused) return refused
        state.issueComments.splice(state.issueComments.indexOf(comment), 1)
        return { status: 204 }
      },
    },
    {
      method: "GET",
      pattern: ["issues", "comments", ":id", "reactions"],
      docs: docs.listIssueCommentReactions,
      run(context) {
        const comment = issueCommentOf(context)
        if (!comment) return notFound(docs.listIssueCommentReactions)
        return listReactions(context, `issues/comments/${comment.id}/reactions`, comment.reactions)
      },
    },
    {
      method: "POST",
      pattern: ["issues", "comments", ":id", "reactions"],
      docs: docs.issueCommentReactions,
      run(context) {
        const comment = issueCommentOf(context)
        if (!comment) return notFound(docs.issueCommentReactions)
        return react(context, comment.reactions, docs.issueCommentReactions)
      },
    },
    {
      method: "GET",
      pattern: ["pulls", "comments", ":id", "reactions"],
      docs: docs.listReviewCommentReactions,
      run(context) {
        const comment = reviewCommentOf(context)
        if (!comment) return notFound(docs.listReviewCommentReactions)
        return listReactions(context, `pulls/comments/${comment.id}/reactions`, comment.reactions)
      },
    },
    {
      method: "POST",
      pattern: ["pulls", "comments", ":id", "reactions"],
      docs: docs.reviewCommentReactions,
      run(context) {
        const comment = reviewCommentOf(context)
        if (!comment) return notFound(docs.reviewCommentReactions)
        return react(context, comment.reactions, docs.reviewCommentReactions)
      },
    },
    {
      method: "GET",
      pattern: ["contents", "*path"],
      docs: docs.getContent,
      run(context) {
        const { searchParams } = context.url
        const accept = context.request.headers.get("accept") ?? ""
        return contents.getContent(context.repo, context.params.path ?? "", searchParams.get("ref"), accept)
      },
    },
    {
      method: "GET",
      pattern: ["git", "trees", "*sha"],
      docs: docs.getTree,
      run(context) {
        // "Setting this parameter to any value returns the objects or subtrees": `0` and `false` too.
        return contents.getTree(context.repo, context.params.sha ?? "", context.url.searchParams.has("recursive"))
      },
    },
    {
      method: "GET",
      pattern: ["collaborators", ":username", "permission"],
      docs: docs.collaboratorPermission,
      run(context) {
        const user = world.userByLogin(context.params.username ?? "")
        if (!user) return notFound(docs.collaboratorPermission)
        const actor = world.actors.find((candidate) => candidate.user.id === user.id)
        // The configured role, not the public-repository read access everyone has.
        const permission = actor ? (actor.repos[context.repo.fullName] ?? actor.permission) : "none"
        return json(200, render.collaboratorPermission(user, permission))
      },
    },
  ]
}

/** Finds the route for the segments after the repository. */
export function matchRoute(
  routes: RepoRoute[],
  method: string,
  segments: string[],
): { route: RepoRoute; params: Record<string, string> } | null {
  for (const route of routes) {
    if (route.method !== method) continue
    const params = matchPattern(route.pattern, segments)
    if (params) return { route, params }
  }
  return null
}

function matchPattern(pattern: string[], segments: string[]): Record<string, string> | null {
  const params: Record<string, string> = {}
  for (const [index, part] of pattern.entries()) {
    if (part.startsWith("*")) {
      params[part.slice(1)] = segments.slice(index).join("/")
      return params
    }
    const segment = segments[index]
    if (segment === undefined) return null
    if (part.startsWith(":")) {
      if (segment === "") return null
      params[part.slice(1)] = segment
    } else if (part !== segment) return null
  }
  return segments.length === pattern.length ? params : null
}
