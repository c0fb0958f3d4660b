import { diffHunk, followLine, resolveLine } from "./github-fake-diff"
import { docs, githubError, json, notFound, type Reply, unprocessable, validationFailed } from "./github-fake-http"
import type { FakeRender } from "./github-fake-render"
import type {
  FakeGithubActor,
  FakeGithubPull,
  FakeGithubRepo,
  FakeGithubReview,
  FakeGithubUser,
  FakeGithubVersion,
  FakeReviewComment,
  FakeReviewState,
  FakeReviewThread,
} from "./github-fake-types"
import type { FakeWorld } from "./github-fake-world"

// Reviews and review comments: `POST …/pulls/{n}/reviews` with inline comments validated against
// the diff of the commit they name (docs/github.md, "Line and side", "Reviews"), dismissals,
// single review comments, replies, and threads followed (or outdated) on push.

const events = { APPROVE: "APPROVED", REQUEST_CHANGES: "CHANGES_REQUESTED", COMMENT: "COMMENTED" } as const

interface DraftComment {
  path: string
  body: string
  side: "LEFT" | "RIGHT"
  line: number
  startSide: "LEFT" | "RIGHT" | null
  startLine: number | null
  diffHunk: string
}

export type FakeReviews = ReturnType<typeof createReviews>

export function createReviews(world: FakeWorld, render: FakeRender) {
  const { state } = world
  const legacy = world.options.lineErrors === "legacy"

  const versionOf = (pull: FakeGithubPull, sha: string) => pull.versions.find((version) => version.headSha === sha)

  /** Checks one inline comment against a version's diff; returns the draft or the reasons it fails. */
  const checkComment = (raw: unknown, version: FakeGithubVersion): DraftComment | { errors: string[] } => {
    const input = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>
    const path = typeof input.path === "string" ? input.path : ""
    const body = typeof input.body === "string" ? input.body : ""
    const side = input.side === "LEFT" ? "LEFT" : "RIGHT"
    const startSide = input.start_line === undefined ? null : input.start_side === "LEFT" ? "LEFT" : "RIGHT"
    const file = version.files.find((candidate) => candidate.filename === path)
    if (!file) return { errors: ["Path could not be resolved"] }
    const line = typeof input.line === "number" ? input.line : null
    const at = line === null ? null : resolveLine(file, side, line)
    const startLine = typeof input.start_line === "number" ? input.start_line : null
    const startAt = startLine === null || startSide === null ? null : resolveLine(file, startSide, startLine)
    const errors: string[] = []
    if (!at) {
      if (legacy) errors.push("Pull request review thread line must be part of the diff")
      else return { errors: ["Line could not be resolved"] }
    }
    if (startLine !== null && startSide !== null) {
      if (startSide === side && line !== null && startLine >= line)
        return { errors: ["Pull request review thread start line must precede the end line."] }
      if (!startAt) {
        if (!legacy) return { errors: ["Line could not be resolved"] }
        errors.push("Pull request review thread start line must be part of the same hunk as the line.")
      } else if (legacy && at && startAt.hunk !== at.hunk) {
        errors.push("Pull request review thread start line must be part of the same hunk as the line.")
      }
    }
    if (!at) errors.push("Pull request review thread diff hunk can't be blank")
    if (errors.length > 0 || !at || line === null) return { errors: [toSentence(errors)] }
    return { path, body, side, line, startSide, startLine, diffHunk: diffHunk(file, at) }
  }

  const storeReview = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    reviewState: FakeReviewState,
    body: string,
    commitId: string,
  ): FakeGithubReview => {
    const id = world.nextId("review")
    const review: FakeGithubReview = {
      id,
      nodeId: world.nodeId("PRR", id),
      repo: repo.fullName,
      pullNumber: pull.number,
      user: actor.user,
      body,
      state: reviewState,
      commitId,
      submittedAt: reviewState === "PENDING" ? null : world.now(),
      dismissal: null,
    }
    state.reviews.push(review)
    return review
  }

  const storeThread = (
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    review: FakeGithubReview,
    user: FakeGithubUser,
    draft: DraftComment,
    commitId: string,
  ): FakeReviewComment => {
    const threadId = world.nextId("thread")
    const thread: FakeReviewThread = {
      id: threadId,
      nodeId: world.nodeId("PRRT", threadId),
      repo: repo.fullName,
      pullNumber: pull.number,
      path: draft.path,
      side: draft.side,
      startSide: draft.startSide,
      line: draft.line,
      startLine: draft.startLine,
      originalLine: draft.line,
      originalStartLine: draft.startLine,
      isResolved: false,
      resolvedBy: null,
      isOutdated: false,
      commentIds: [],
    }
    state.threads.push(thread)
    return storeComment(thread, review, user, draft.body, null, draft.diffHunk, commitId)
  }

  const storeComment = (
    thread: FakeReviewThread,
    review: FakeGithubReview,
    user: FakeGithubUser,
    body: string,
    inReplyToId: number | null,
    hunk: string,
    commitId: string,
  ): FakeReviewComment => {
    const id = world.nextId("reviewComment")
    const now = world.now()
    const comment: FakeReviewComment = {
      id,
      nodeId: world.nodeId("PRRC", id),
      repo: thread.repo,
      pullNumber: thread.pullNumber,
      reviewId: review.id,
      threadId: thread.id,
      inReplyToId,
      user,
      body,
      path: thread.path,
      side: thread.side,
      startSide: thread.startSide,
      line: thread.line,
      startLine: thread.startLine,
      originalLine: thread.originalLine,
      originalStartLine: thread.originalStartLine,
      commitId,
      originalCommitId: commitId,
      diffHunk: hunk,
      createdAt: now,
      updatedAt: now,
      reactions: [],
    }
    state.reviewComments.push(comment)
    thread.commentIds.push(id)
    return comment
  }

  /** POST /repos/{o}/{r}/pulls/{n}/reviews */
  const createReview = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    input: Record<string, unknown>,
  ): Reply => {
    const head = pull.versions.at(-1)!
    const event = input.event
    if (event !== undefined && event !== null && !(typeof event === "string" && event in events)) {
      return githubError(
        422,
        `Invalid request.\n\nFor 'properties/event', ${JSON.stringify(event)} is not one of ["APPROVE", "REQUEST_CHANGES", "COMMENT"].`,
        docs.createReview,
      )
    }
    const commitId = typeof input.commit_id === "string" ? input.commit_id : head.headSha
    const version = versionOf(pull, commitId)
    if (!version) return unprocessable(["commit_id is not part of the pull request"])
    const body = typeof input.body === "string" ? input.body : ""
    const isAuthor = actor.user.id === pull.author.id
    if (event === "APPROVE" && isAuthor) return unprocessable(["Review Can not approve your own pull request"])
    if (event === "REQUEST_CHANGES" && isAuthor)
      return unprocessable(["Review Can not request changes on your own pull request"])
    if (event === "APPROVE" && actor.user.login === "github-actions[bot]" && !repo.actionsCanApprove)
      return unprocessable(["GitHub Actions is not permitted to approve pull requests."])
    if ((event === "REQUEST_CHANGES" || event === "COMMENT") && body.trim() === "")
      return unprocessable(["Body is required for REQUEST_CHANGES and COMMENT events"])
    const pendingState = event === undefined || event === null
    if (
      pendingState &&
      state.reviews.some(
        (review) =>
          review.repo === repo.fullName &&
          review.pullNumber === pull.number &&
          review.user.id === actor.user.id &&
          review.state === "PENDING",
      )
    ) {
      return {
        status: 422,
        body: {
          message: "Unprocessable Entity",
          errors: [
            {
              resource: "PullRequestReview",
              code: "custom",
              message: "User can only have one pending review per pull request",
            },
          ],
          documentation_url: docs.createReview,
          status: "422",
        },
      }
    }
    const rawComments = Array.isArray(input.comments) ? input.comments : []
    const drafts: DraftComment[] = []
    const errors: string[] = []
    for (const raw of rawComments) {
      const checked = checkComment(raw, version)
      if ("errors" in checked) errors.push(...checked.errors)
      else drafts.push(checked)
    }
    // One comment that does not resolve fails the whole review: nothing is stored.
    if (errors.length > 0) return unprocessable([...new Set(errors)])
    const reviewState: FakeReviewState = pendingState ? "PENDING" : events[event as keyof typeof events]
    const review = storeReview(actor, repo, pull, reviewState, body, commitId)
    for (const draft of drafts) storeThread(repo, pull, review, actor.user, draft, commitId)
    if (version !== head) followThreads(repo.fullName, pull)
    return json(200, render.review(review, repo))
  }

  /**
   * PUT /repos/{o}/{r}/pulls/{n}/reviews/{id}/dismissals (docs/github.md, "Dismissing a review"). The
   * caller's write access is checked by the route. Only APPROVED and CHANGES_REQUESTED reviews can be
   * dismissed; the review stays, as DISMISSED, with its body.
   */
  const dismissReview = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    reviewId: number,
    input: Record<string, unknown>,
  ): Reply => {
    if (!("message" in input))
      return githubError(422, `Invalid request.\n\n"message" wasn't supplied.`, docs.dismissReview)
    const message = input.message
    if (typeof message !== "string")
      return githubError(
        422,
        `Invalid request.\n\nFor 'properties/message', ${message === null ? "nil" : JSON.stringify(message)} is not a string.`,
        docs.dismissReview,
      )
    if (input.event !== undefined && input.event !== "DISMISS")
      return githubError(
        422,
        `Invalid request.\n\nFor 'properties/event', ${JSON.stringify(input.event)} is not one of ["DISMISS"].`,
        docs.dismissReview,
      )
    const review = state.reviews.find(
      (candidate) =>
        candidate.id === reviewId &&
        candidate.repo === repo.fullName &&
        candidate.pullNumber === pull.number &&
        // Someone else's PENDING review is invisible, so it is not found either.
        (candidate.state !== "PENDING" || candidate.user.id === actor.user.id),
    )
    if (!review) return notFound(docs.dismissReview)
    const refused = { COMMENTED: "commented", PENDING: "pending", DISMISSED: "dismissed" } as const
    if (review.state === "COMMENTED" || review.state === "PENDING" || review.state === "DISMISSED")
      return validationFailed([`Can not dismiss a ${refused[review.state]} pull request review`], docs.dismissReview)
    review.state = "DISMISSED"
    review.dismissal = { message, user: actor.user, at: world.now() }
    return json(200, render.review(review, repo))
  }

  /** POST /repos/{o}/{r}/pulls/{n}/comments: one comment (a review of its own), or a reply via in_reply_to. */
  const createReviewComment = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    input: Record<string, unknown>,
  ): Reply => {
    for (const field of ["body", ...(input.in_reply_to === undefined ? ["commit_id", "path"] : [])]) {
      if (!(field in input))
        return githubError(422, `Invalid request.\n\n"${field}" wasn't supplied.`, docs.createReviewComment)
    }
    if (typeof input.in_reply_to === "number") {
      const parent = visibleComment(repo, pull, input.in_reply_to)
      if (!parent)
        return validationFailed(
          [{ resource: "PullRequestReviewComment", code: "invalid", field: "in_reply_to" }],
          docs.createReviewComment,
        )
      return reply(actor, repo, pull, parent, String(input.body))
    }
    const commitId = String(input.commit_id)
    const version = versionOf(pull, commitId)
    if (!version)
      return validationFailed(
        [
          {
            resource: "PullRequestReviewComment",
            code: "invalid",
            field: "commit_id",
            message: "commit_id is not part of the pull request",
          },
        ],
        docs.createReviewComment,
      )
    const checked = checkComment(input, version)
    if ("errors" in checked) {
      const errors: object[] = [
        {
          resource: "PullRequestReviewComment",
          code: "custom",
          field: "pull_request_review_thread.line",
          message: "pull_request_review_thread.line must be part of the diff",
        },
      ]
      if (typeof input.start_line === "number")
        errors.push({
          resource: "PullRequestReviewComment",
          code: "custom",
          field: "pull_request_review_thread.start_line",
          message: "pull_request_review_thread.start_line must be part of the same hunk as the line.",
        })
      errors.push({
        resource: "PullRequestReviewComment",
        code: "missing_field",
        field: "pull_request_review_thread.diff_hunk",
      })
      return validationFailed(errors, docs.createReviewComment)
    }
    const review = storeReview(actor, repo, pull, "COMMENTED", "", commitId)
    const comment = storeThread(repo, pull, review, actor.user, checked, commitId)
    return json(201, render.reviewComment(comment, repo), { Location: render.reviewComment(comment, repo).url })
  }

  const visibleComment = (repo: FakeGithubRepo, pull: FakeGithubPull, id: number) =>
    state.reviewComments.find(
      (comment) =>
        comment.id === id &&
        comment.repo === repo.fullName &&
        comment.pullNumber === pull.number &&
        !isPending(comment),
    )

  const isPending = (comment: FakeReviewComment) =>
    state.reviews.find((review) => review.id === comment.reviewId)?.state === "PENDING"

  /** A reply joins the parent's thread and, as on GitHub, comes with a COMMENTED review of its own. */
  const reply = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    parent: FakeReviewComment,
    body: string,
  ): Reply => {
    const thread = state.threads.find((candidate) => candidate.id === parent.threadId)!
    const head = pull.versions.at(-1)!.headSha
    const review = storeReview(actor, repo, pull, "COMMENTED", "", head)
    const root = thread.commentIds[0] ?? parent.id
    const comment = storeComment(thread, review, actor.user, body, root, parent.diffHunk, parent.commitId)
    return json(201, render.reviewComment(comment, repo), { Location: render.reviewComment(comment, repo).url })
  }

  /** POST /repos/{o}/{r}/pulls/{n}/comments/{id}/replies */
  const createReply = (
    actor: FakeGithubActor,
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    id: number,
    input: Record<string, unknown>,
  ): Reply => {
    if (!("body" in input)) return githubError(422, `Invalid request.\n\n"body" wasn't supplied.`, docs.createReply)
    const parent = visibleComment(repo, pull, id)
    if (!parent) return githubError(404, "Parent comment not found", docs.createReply)
    return reply(actor, repo, pull, parent, String(input.body))
  }

  /** Review comments of a pull request as `GET …/pulls/{n}/comments` lists them: submitted only, by id. */
  const listComments = (repo: FakeGithubRepo, pull: FakeGithubPull) =>
    state.reviewComments
      .filter((comment) => comment.repo === repo.fullName && comment.pullNumber === pull.number && !isPending(comment))
      .sort((a, b) => a.id - b.id)

  /**
   * Follows every thread of the pull request to its current head: a line that can be traced keeps
   * its thread current (the comments move to the head commit); one that cannot makes the thread
   * outdated, `line: null` (docs/github.md, "Outdated threads").
   */
  const followThreads = (repoName: string, pull: FakeGithubPull) => {
    const head = pull.versions.at(-1)!
    for (const thread of state.threads) {
      if (thread.repo !== repoName || thread.pullNumber !== pull.number || thread.isOutdated) continue
      const comments = state.reviewComments.filter((comment) => comment.threadId === thread.id)
      const first = comments[0]
      if (!first || first.commitId === head.headSha || thread.line === null) continue
      const base = versionOf(pull, first.commitId)
      if (!base) continue
      const line = followLine(base, head, thread.path, thread.side, thread.line)
      const startLine =
        thread.startLine !== null && thread.startSide
          ? followLine(base, head, thread.path, thread.startSide, thread.startLine)
          : null
      const outdated = line === null || (thread.startLine !== null && startLine === null)
      thread.isOutdated = outdated
      thread.line = outdated ? null : line
      thread.startLine = outdated ? null : startLine
      for (const comment of comments) {
        comment.line = thread.line
        comment.startLine = thread.startLine
        if (!outdated) comment.commitId = head.headSha
      }
    }
  }

  return {
    createReview,
    dismissReview,
    createReviewComment,
    createReply,
    listComments,
    visibleComment,
    isPending,
    followThreads,
  }
}

/** Rails' Array#to_sentence: "a", "a and b", "a, b, and c". */
function toSentence(items: string[]): string {
  if (items.length <= 1) return items[0] ?? ""
  if (items.length === 2) return `${items[0]} and ${items[1]}`
  return `${items.slice(0, -1).join(", ")}, and ${items.at(-1)}`
}
