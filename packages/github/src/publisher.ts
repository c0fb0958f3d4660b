import { randomBytes } from "node:crypto"
import {
  closingReplies,
  continuationOf,
  createPublishLog,
  type DiffFile,
  errorText,
  findingFingerprints,
  findingMarkers,
  fitComment,
  type InlineFinding,
  type Logger,
  oneLine,
  type PublishReport,
  postableSuggestion,
  type ReviewFinding,
  type ReviewPlatform,
  type ReviewRecord,
  renderFailureSummary,
  renderSummary,
  renderThread,
  reopenText,
  reviewIncomplete,
  type Severity,
  type SummaryOutcome,
  shortSha,
  threadMatcher,
  type UnreadFile,
  upsertSummary,
} from "@opencode-reviewer/core"
import {
  type AskedComment,
  type BotIdentity,
  botThreadOf,
  type HumanComment,
  isBot,
  isBotAuthor,
  ownThreads,
} from "./bot"
import type { ApiPull, ApiReview, ApiThread, GithubClient, ReviewCommentInput, ReviewEvent } from "./client"
import type { GithubContext } from "./context"
import { markerIn, markers, prepareBody } from "./markers"

/** The words of GitHub in what the bot posts. */
const platform: ReviewPlatform = { name: "GitHub", change: "pull request" }

/** What the publisher needs from the read: the reviewed diff and head, the bot, the pull request. */
export interface ReadState {
  bot: BotIdentity
  pull: ApiPull
  headSha: string
  files: DiffFile[]
  unreviewed: UnreadFile[]
  humanComments: HumanComment[]
  breakGlass: { by: string; at: string | null } | null
  /** The comment that started this run, when one did. */
  asked: AskedComment | null
}

/** What the decision's review did. `detail` says why when it did less than the decision asked. */
export interface GithubDecisionOutcome {
  action:
    | "approved"
    | "requested_changes"
    | "commented"
    | "already_approved"
    | "already_requested_changes"
    | "dismissed"
    | "not_approved"
    | "nothing_to_do"
    | "failed"
  /** The review submitted (null when none was needed or it failed). */
  reviewId: number | null
  /** The commit the review names. */
  sha: string | null
  detail: string | null
}

/** Everything `publish` did on the pull request. No local files: the CLI writes review.json. */
export interface GithubPublishResult extends PublishReport {
  files: string[]
  summaryComment: SummaryOutcome | null
  threads: {
    /** Findings posted as inline comments of this run's review. */
    created: { findingId: string }[]
    kept: { findingId: string; threadId: string; resolved: boolean }[]
    reopened: { findingId: string; threadId: string }[]
    resolved: { threadId: string }[]
    dismissed: { threadId: string }[]
    movedToSummary: { findingId: string; reason: string }[]
  }
  decision: GithubDecisionOutcome
  /** The answer to the question that started this run: posted in its thread, or already there. */
  answer: { commentId: number; action: "posted" | "already_posted" } | null
  notices: string[]
  warnings: string[]
  neutralized: number
}

/** Inputs of one publication. */
export interface PublishInput {
  client: GithubClient
  context: GithubContext
  state: ReadState
  record: ReviewRecord
  log: Logger
}

// GitHub refuses a comment body past 65,536 characters (docs/github.md, "Issue comments").
const maxCommentLength = 65_000

interface OwnThread {
  thread: ApiThread
  fingerprint: string
  resolved: boolean
  severity: Severity | null
  /** The REST id of the thread's first comment, which replies answer. */
  rootId: number
}

/**
 * Publishes a review on the pull request: answers in the bot's open threads, one pull request
 * review holding the new inline comments and the decision (APPROVE / REQUEST_CHANGES / COMMENT on
 * the reviewed commit), fixed threads answered and resolved, then the one summary comment (edited
 * in place on re-runs). Only failing to read the threads or to write the summary throws; a refused
 * review, resolution or reply becomes a warning in the result.
 */
export async function publishReview(input: PublishInput): Promise<GithubPublishResult> {
  const { client, state, record, log } = input
  const result: GithubPublishResult = {
    files: [],
    summaryComment: null,
    threads: { created: [], kept: [], reopened: [], resolved: [], dismissed: [], movedToSummary: [] },
    decision: { action: "failed", reviewId: null, sha: null, detail: null },
    answer: null,
    notices: [],
    warnings: [],
    neutralized: 0,
    lines: [],
  }
  const published = createPublishLog(log, prepareBody)
  result.warnings = published.warnings
  const { prepare, warn } = published

  const reviewedHead = state.headSha
  const current = await client.pull().catch((error: unknown) => {
    warn("could not re-read the pull request before publishing", error)
    return state.pull
  })
  const currentHead = current.head.sha
  const moved = currentHead !== reviewedHead
  if (moved) {
    result.notices.push(
      `the pull request moved from ${short(reviewedHead)} to ${short(currentHead)} during the review: this review covers ${short(reviewedHead)} only, so it approves nothing; the newer commits need their own review`,
    )
  }

  const existing = new Map<string, OwnThread>()
  for (const thread of ownThreads(await client.threads(), state.bot)) {
    const view = botThreadOf(thread, state.bot)
    existing.set(thread.id, {
      thread,
      fingerprint: view.fingerprint as string,
      resolved: thread.isResolved,
      severity: view.severity,
      rootId: thread.comments[0]!.databaseId,
    })
  }
  const threadOf = threadMatcher(record.findings, existing)
  const replyOnce = async (thread: OwnThread, tag: string, text: string) => {
    const body = prepare(text, [[markers.reply, tag]])
    if (thread.thread.comments.some((comment) => markerIn(comment.body, markers.reply) === tag)) return
    await client.reply(thread.rootId, body)
  }

  // (a) findings: earlier threads continued, the rest prepared as inline comments.
  const fingerprints = findingFingerprints(record.findings)
  const inline: InlineFinding[] = []
  const raised: ReviewFinding[] = []
  const unanchored: { finding: ReviewFinding; reason: string }[] = []
  const toSummary = (finding: ReviewFinding, reason: string) => {
    unanchored.push({ finding, reason })
    result.threads.movedToSummary.push({ findingId: finding.id, reason })
  }
  const comments: { finding: ReviewFinding; comment: ReviewCommentInput }[] = []
  for (const [index, finding] of record.findings.entries()) {
    const fingerprint = fingerprints[index] as string
    const match = threadOf(finding, fingerprint)
    if (match) {
      const thread = match.thread
      const ref = { findingId: finding.id, threadId: thread.thread.id }
      const next = continuationOf(thread, finding)
      if (next === "open") {
        inline.push({ finding, thread: "open" })
        result.threads.kept.push({ ...ref, resolved: false })
        // A person had the last word and the coordinator still reports the finding: its body answers them, once.
        const last = thread.thread.comments.at(-1)
        if (last && !isBotAuthor(last.author, state.bot)) {
          await replyOnce(thread, `${thread.fingerprint}:answer:${last.databaseId}`, `${finding.body.trim()}\n`).catch(
            (error: unknown) => warn(`could not answer in thread ${thread.thread.id}`, error),
          )
        }
      } else if (next === "reopen") {
        const was = thread.severity!
        const reopened = await (async () => {
          await client.resolveThread(thread.thread.id, false)
          const tag = `${thread.fingerprint}:reopened:${short(reviewedHead)}`
          await client.reply(
            thread.rootId,
            prepare(reopenText(finding, was), [
              [markers.reply, tag],
              [markers.severity, finding.severity],
            ]),
          )
        })().then(
          () => true,
          (error: unknown) => {
            warn(`could not reopen thread ${thread.thread.id}`, error)
            return false
          },
        )
        inline.push({ finding, thread: reopened ? "reopened" : "resolved" })
        if (reopened) result.threads.reopened.push(ref)
        else result.threads.kept.push({ ...ref, resolved: true })
      } else {
        inline.push({ finding, thread: "resolved" })
        result.threads.kept.push({ ...ref, resolved: true })
      }
      continue
    }

    // A person's comment raised it already: no second comment, the summary says who.
    if (finding.alreadyRaised) {
      raised.push(finding)
      continue
    }
    const suggestion = postableSuggestion(finding, state.files, "github", (found) =>
      ["```suggestion", ...found.lines, "```"].join("\n"),
    )
    const anchor = anchorComment(state.files, finding, suggestion?.startLine ?? null)
    if (!anchor.ok) {
      toSummary(finding, anchor.reason)
      continue
    }
    const at = anchor.side === "RIGHT" ? { sha: reviewedHead, path: anchor.path, line: anchor.line } : null
    const body = prepare(renderThread(finding, suggestion?.block ?? null), findingMarkers(finding, fingerprint, at))
    comments.push({
      finding,
      comment: {
        path: anchor.path,
        body,
        line: anchor.line,
        side: anchor.side,
        ...(anchor.startLine !== null ? { start_line: anchor.startLine, start_side: anchor.side } : {}),
      },
    })
  }

  // (b) the review: the new inline comments and the decision, on the reviewed commit.
  result.decision = await submitReview(input, comments, moved, warn, (finding, reason) => toSummary(finding, reason))
  for (const { finding } of comments) {
    if (result.threads.movedToSummary.some((entry) => entry.findingId === finding.id)) continue
    inline.push({ finding, thread: "created" })
    result.threads.created.push({ findingId: finding.id })
  }

  // (c) earlier threads this review closes: fixed ones (their code changed), and dismissed ones.
  const unreviewedPaths = new Set(state.unreviewed.map((file) => file.path))
  const closing = closingReplies(record, reviewedHead)
  for (const { id, kind, text } of closing) {
    const thread = existing.get(id)
    if (!thread || thread.thread.isResolved) continue
    if (unreviewedPaths.has(thread.thread.path)) continue
    try {
      await replyOnce(thread, `${thread.fingerprint}:${kind}:${short(reviewedHead)}`, text)
    } catch (error) {
      warn(`could not answer in thread ${id}`, error)
      continue
    }
    try {
      await client.resolveThread(id, true)
      ;(kind === "fixed" ? result.threads.resolved : result.threads.dismissed).push({ threadId: id })
    } catch (error) {
      warn(
        `could not resolve thread ${id} (with GITHUB_TOKEN, GitHub lets a workflow resolve threads only with \`permissions: contents: write\`)`,
        error,
      )
    }
  }

  // (d) the summary comment
  const text = renderSummary({
    record,
    inline,
    unanchored,
    raised,
    unreviewed: state.unreviewed,
    platform,
    resolvedThreads: result.threads.resolved.length,
    breakGlass: record.breakGlass ? state.breakGlass : null,
    headSha: reviewedHead,
    notices: result.notices,
  })
  const tag = `${reviewedHead}:${randomBytes(6).toString("hex")}`
  result.summaryComment = await writeSummary(
    client,
    state,
    prepare(fitComment(text, maxCommentLength), [[markers.summary, tag]]),
    currentHead,
    warn,
  )

  // (e) the answer to the question that started the run, once, where it was asked
  if (state.asked?.request.kind === "question") {
    result.answer = await answerQuestion(client, state.asked, record.answer, prepare).catch((error: unknown) => {
      warn("could not post the answer to the question", error)
      return null
    })
  }

  log.info(
    {
      summary: result.summaryComment,
      created: result.threads.created.length,
      kept: result.threads.kept.length,
      resolved: result.threads.resolved.length,
      moved: result.threads.movedToSummary.length,
      decision: result.decision.action,
    },
    "review published",
  )
  result.neutralized = published.neutralized
  result.lines = describePublishResult(result)
  return result
}

/**
 * One short answer where the question was asked: a reply in its review thread, or a comment on the
 * conversation quoting it. Found again by its marker, so a re-run never answers twice. Without an
 * answer from the coordinator it says so rather than stay silent.
 */
async function answerQuestion(
  client: GithubClient,
  asked: AskedComment,
  answer: string | null,
  prepare: (text: string, list: [string, string][]) => string,
): Promise<GithubPublishResult["answer"]> {
  const tag = `answer:${asked.commentId}`
  const text =
    answer?.trim() ||
    "This run had no answer to the question; the review itself is in the summary comment of this pull request."
  if (asked.kind === "review") {
    const replies = await client.reviewComments()
    if (replies.some((comment) => markerIn(comment.body, markers.reply) === tag))
      return { commentId: asked.commentId, action: "already_posted" }
    await client.reply(asked.rootId, prepare(`${text}\n`, [[markers.reply, tag]]))
    return { commentId: asked.commentId, action: "posted" }
  }
  const comments = await client.issueComments()
  if (comments.some((comment) => markerIn(comment.body ?? "", markers.reply) === tag))
    return { commentId: asked.commentId, action: "already_posted" }
  const quoted = oneLine(asked.request.body).slice(0, 200)
  await client.createIssueComment(prepare(`> ${quoted}\n\n${text}\n`, [[markers.reply, tag]]))
  return { commentId: asked.commentId, action: "posted" }
}

/**
 * Says on the pull request that the review of its head could not run: the summary comment (edited
 * in place) and the bot's approval dismissed, since nothing vouches for this head. Never throws.
 */
export async function publishFailure(
  input: Omit<PublishInput, "record"> & { failure: { message: string; hint: string | null } },
): Promise<string[]> {
  const { client, state, failure } = input
  const lines: string[] = []
  const warn = (message: string, error?: unknown) => {
    lines.push(`GitHub warning: ${error === undefined ? message : `${message}: ${describe(error)}`}`)
  }
  const currentHead = await client.pull().then(
    (pr) => pr.head.sha,
    () => state.headSha,
  )
  const reviews = await client.reviews().catch((error: unknown) => {
    warn("could not read the reviews", error)
    return []
  })
  const standing = standingReview(reviews, state.bot)
  if (standing?.state === "APPROVED") {
    await client
      .dismissReview(standing.id, "The review of the new head could not run; this approval no longer stands.")
      .then(
        () => lines.push(`GitHub: approval ${standing.id} dismissed`),
        (error: unknown) => warn("could not dismiss the bot's approval", error),
      )
  }
  try {
    const tag = `${state.headSha}:${randomBytes(6).toString("hex")}`
    const body = prepareBody(renderFailureSummary({ ...failure, headSha: state.headSha, platform }), [
      [markers.summary, tag],
    ]).body
    const outcome = await writeSummary(client, state, body, currentHead, warn)
    lines.unshift(`GitHub: summary comment ${outcome.id} ${outcome.action} (the review could not run)`)
  } catch (error) {
    warn("could not say on the pull request that the review could not run", error)
  }
  return lines
}

function writeSummary(
  client: GithubClient,
  state: ReadState,
  body: string,
  currentHead: string,
  warn: (message: string, error?: unknown) => void,
): Promise<SummaryOutcome> {
  const summaries = async () =>
    (await client.issueComments()).filter(
      (comment) => isBot(comment.user, state.bot) && markerIn(comment.body ?? "", markers.summary) !== null,
    )
  return upsertSummary(
    {
      list: async () =>
        (await summaries()).map((comment) => ({ id: comment.id, tag: markerIn(comment.body ?? "", markers.summary)! })),
      create: (text) => client.createIssueComment(text),
      edit: (id, text) => client.updateIssueComment(id, text),
      remove: (id) => client.deleteIssueComment(id),
      isNotFound: (error) => (error as { status?: number }).status === 404,
    },
    { reviewedHead: state.headSha, currentHead, body, warn },
  )
}

// The bot's review that stands for the pull request: its latest approval or change request (a
// COMMENTED review changes nothing; a dismissed one no longer counts).
function standingReview(reviews: readonly ApiReview[], bot: BotIdentity): ApiReview | undefined {
  return reviews
    .filter(
      (review) => isBot(review.user, bot) && ["APPROVED", "CHANGES_REQUESTED", "DISMISSED"].includes(review.state),
    )
    .sort((a, b) => a.id - b.id)
    .at(-1)
}

const eventLabels: Record<ReviewEvent, string> = {
  APPROVE: "approves",
  REQUEST_CHANGES: "requests changes",
  COMMENT: "comments",
}

/**
 * Submits the one review of this run, or none when nothing would change: the decision's event
 * (APPROVE only for an unmoved head; REQUEST_CHANGES for significant concerns; else COMMENT) with
 * the new inline comments, on the reviewed commit. GitHub stores nothing when one comment does not
 * resolve, so a 422 is answered by sending the review again without comments (they go to the
 * summary); a refused approval (own pull request, Actions may not approve) becomes a comment.
 */
async function submitReview(
  input: PublishInput,
  comments: { finding: ReviewFinding; comment: ReviewCommentInput }[],
  moved: boolean,
  warn: (message: string, error?: unknown) => void,
  toSummary: (finding: ReviewFinding, reason: string) => void,
): Promise<GithubDecisionOutcome> {
  const { client, state, record } = input
  const sha = state.headSha
  const approve =
    (record.decision === "approved" || record.decision === "approved_with_comments") && !reviewIncomplete(record)
  const wanted: ReviewEvent =
    record.decision === "significant_concerns" ? "REQUEST_CHANGES" : approve && !moved ? "APPROVE" : "COMMENT"
  let detail: string | null =
    moved && approve ? "the pull request moved during the review; the new head needs its own review" : null
  const reviews = await client.reviews().catch((error: unknown) => {
    warn("could not read the earlier reviews", error)
    return [] as ApiReview[]
  })
  const standing = standingReview(reviews, state.bot)
  const stands =
    (wanted === "APPROVE" && standing?.state === "APPROVED" && standing.commit_id === sha) ||
    (wanted === "REQUEST_CHANGES" && standing?.state === "CHANGES_REQUESTED")

  let submitted: { event: ReviewEvent; id: number } | null = null
  let failed: string | null = null
  if (!stands || comments.length > 0) {
    const outcome = await submit(input, wanted, comments, toSummary)
    submitted = outcome.review
    failed = outcome.failed
    detail = outcome.detail ?? detail
    if (failed) warn("could not submit the review", failed)
  }
  const final: ReviewEvent | null = stands && !submitted ? wanted : (submitted?.event ?? null)

  // What the bot said before and no longer thinks: a change request that this review does not
  // repeat (an approval supersedes it; a comment does not), or an approval of what now has issues.
  let dismissed = false
  const outdated =
    standing !== undefined &&
    !moved &&
    failed === null &&
    ((standing.state === "CHANGES_REQUESTED" && final !== "REQUEST_CHANGES" && final !== "APPROVE") ||
      (standing.state === "APPROVED" && !approve && final !== "REQUEST_CHANGES"))
  if (outdated) {
    await client
      .dismissReview(
        standing.id,
        `Superseded by the review of ${short(sha)} (${record.decision.replace(/_/g, " ")}); see the summary comment.`,
      )
      .then(
        () => {
          dismissed = true
        },
        (error: unknown) => warn(`could not dismiss the bot's earlier review ${standing.id}`, error),
      )
  }

  if (failed) return { action: "failed", reviewId: null, sha, detail: failed }
  const action: GithubDecisionOutcome["action"] =
    final === "APPROVE"
      ? stands && !submitted
        ? "already_approved"
        : "approved"
      : final === "REQUEST_CHANGES"
        ? stands && !submitted
          ? "already_requested_changes"
          : "requested_changes"
        : dismissed
          ? "dismissed"
          : approve
            ? "not_approved"
            : submitted
              ? "commented"
              : "nothing_to_do"
  return { action, reviewId: submitted?.id ?? standing?.id ?? null, sha, detail }
}

/**
 * Sends the review: `event` with the inline comments. GitHub stores nothing when one comment does
 * not resolve, so a 422 about lines is answered by sending it again without them (they go to the
 * summary); a refused approval or change request (own pull request, Actions may not approve)
 * becomes a comment, or no review at all when there is nothing to comment.
 */
async function submit(
  input: PublishInput,
  event: ReviewEvent,
  comments: { finding: ReviewFinding; comment: ReviewCommentInput }[],
  toSummary: (finding: ReviewFinding, reason: string) => void,
): Promise<{ review: { event: ReviewEvent; id: number } | null; failed: string | null; detail: string | null }> {
  const { client, state, record } = input
  const sha = state.headSha
  let detail: string | null = null
  let pending = comments
  for (let attempt = 0; attempt < 3; attempt += 1) {
    if (pending.length === 0 && event === "COMMENT") return { review: null, failed: null, detail }
    const tag = `${sha}:${randomBytes(6).toString("hex")}`
    const body = prepareBody(
      `**AI code review ${eventLabels[event]}** (${record.decision.replace(/_/g, " ")}) on ${short(sha)}; the summary comment of this pull request has the details.\n`,
      [[markers.review, tag]],
    ).body
    try {
      const review = await client.createReview({
        commitId: sha,
        event,
        body,
        comments: pending.map((entry) => entry.comment),
      })
      return { review: { event, id: review.id }, failed: null, detail }
    } catch (error) {
      const status = (error as { status?: number }).status
      const message = describe(error)
      if (status === 422 && event === "APPROVE" && /approve/i.test(message)) {
        detail = `GitHub refused the approval (${message}); allow GitHub Actions to approve pull requests, or use an App token`
        event = "COMMENT"
        continue
      }
      if (status === 422 && event === "REQUEST_CHANGES" && /request changes/i.test(message)) {
        detail = `GitHub refused the change request (${message}); the failing check is the merge gate`
        event = "COMMENT"
        continue
      }
      if (status === 422 && pending.length > 0) {
        for (const entry of pending) toSummary(entry.finding, `GitHub refused the review's line positions (${message})`)
        pending = []
        continue
      }
      for (const entry of pending) toSummary(entry.finding, "the review holding its inline comment could not be posted")
      return { review: null, failed: message, detail }
    }
  }
  return { review: null, failed: "GitHub refused the review three times", detail }
}

/** Where an inline comment goes on GitHub, or why it cannot. */
export type CommentAnchor =
  | { ok: true; path: string; line: number; side: "LEFT" | "RIGHT"; startLine: number | null }
  | { ok: false; reason: string }

/**
 * Places a finding on the diff by GitHub's rules (docs/github.md, "Line and side"): a removed line
 * of a deleted file on the LEFT, anything else on the RIGHT at an added or context line of a hunk.
 * A suggestion spanning several lines makes a range from its first line. Never guessed onto a
 * nearby line: GitHub would refuse the whole review.
 */
export function anchorComment(
  files: readonly DiffFile[],
  finding: { file: string; line: number | null },
  startLine: number | null,
): CommentAnchor {
  if (finding.line === null) return { ok: false, reason: "no line given" }
  const file =
    files.find((candidate) => candidate.path === finding.file) ??
    files.find((candidate) => candidate.oldPath === finding.file)
  if (!file) return { ok: false, reason: "file not in the diff" }
  if (file.binary) return { ok: false, reason: "binary file" }
  const lines = file.hunks.flatMap((hunk) => hunk.lines)
  if (file.status === "deleted") {
    const removed = lines.find((line) => line.kind === "remove" && line.oldLine === finding.line)
    if (!removed) return { ok: false, reason: `line ${finding.line} is not in the diff` }
    return { ok: true, path: file.path, line: finding.line, side: "LEFT", startLine: null }
  }
  const line = lines.find((candidate) => candidate.kind !== "remove" && candidate.newLine === finding.line)
  if (!line) return { ok: false, reason: `line ${finding.line} is not in the diff` }
  return {
    ok: true,
    path: file.path,
    line: finding.line,
    side: "RIGHT",
    startLine: startLine !== null && startLine < finding.line ? startLine : null,
  }
}

const short = shortSha
const describe = errorText

/** Lines for the terminal: what was posted and what could not be done. */
export function describePublishResult(result: Omit<GithubPublishResult, "lines">): string[] {
  const lines: string[] = []
  if (result.summaryComment)
    lines.push(`GitHub: summary comment ${result.summaryComment.id} ${result.summaryComment.action}`)
  const threads = result.threads
  lines.push(
    `GitHub: inline comments ${threads.created.length} posted, ${threads.kept.length} threads kept, ${threads.reopened.length} reopened, ${threads.resolved.length} resolved as fixed, ${threads.dismissed.length} dismissed, ${threads.movedToSummary.length} in the summary`,
  )
  const decision = result.decision
  lines.push(
    `GitHub: ${decision.action.replace(/_/g, " ")}${decision.reviewId ? ` (review ${decision.reviewId})` : ""}${decision.detail ? ` — ${decision.detail}` : ""}`,
  )
  if (result.answer)
    lines.push(`GitHub: answer to comment ${result.answer.commentId} ${result.answer.action.replace(/_/g, " ")}`)
  for (const notice of result.notices) lines.push(`GitHub note: ${notice}`)
  for (const warning of result.warnings) lines.push(`GitHub warning: ${warning}`)
  return lines
}
