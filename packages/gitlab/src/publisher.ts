import { randomBytes } from "node:crypto"
import {
  type ApplicableSuggestion,
  type ChangeRequest,
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
  type Severity,
  shortSha,
  threadMatcher,
  upsertSummary,
} from "@opencode-reviewer/core"
import type { UnreviewedFile } from "./api-diff"
import type { ApiMergeRequest, ApiNote, ApiUser, Discussion } from "./api-schemas"
import { botThreads, threadResolved, threadSeverity } from "./bot-threads"
import type { CiContext } from "./ci-context"
import { GitlabRequestError } from "./errors"
import type { GitlabClient } from "./gitlab-client"
import { markerIn, markers, prepareBody } from "./markers"
import { anchorFinding, type DiffRefs } from "./position"

/** The words of GitLab in what the bot posts. */
const platform: ReviewPlatform = { name: "GitLab", change: "merge request" }

/** A finding's inline thread and the finding it carries. */
export interface ThreadRef {
  findingId: string
  discussionId: string
}

/** What the approval step did. `detail` says why when it did less than the decision asked. */
export interface ApprovalOutcome {
  action:
    | "approved"
    | "already_approved"
    | "not_approved"
    | "unapproved"
    | "nothing_to_unapprove"
    | "requested_changes"
    | "already_requested_changes"
    | "request_changes_unavailable"
    | "failed"
  via: "rest" | "graphql" | "quick_action" | null
  /** The head the approval names (approve only). */
  sha: string | null
  detail: string | null
}

/** Who asked to break the glass, and when (the note's creation time). */
export interface BreakGlass {
  by: string
  at: string | null
}

/** The state the publisher needs from the read: the reviewed diff and version, the bot, the MR. */
export interface ReadState {
  bot: ApiUser
  mergeRequest: ApiMergeRequest
  refs: DiffRefs
  files: DiffFile[]
  unreviewed: UnreviewedFile[]
  humanNotes: ApiNote[]
  breakGlass: BreakGlass | null
  /** The note that started this run (a note webhook's trigger), when one did. */
  asked: AskedNote | null
}

/** The note that started this run and what it asked, with where an answer goes. */
export interface AskedNote {
  request: ChangeRequest
  noteId: number
  discussionId: string | null
  /** The note sits in a thread (the answer is a reply there), not among the plain comments. */
  inThread: boolean
}

/** Everything `publish` did on the merge request. No local files: the CLI writes review.json. */
export interface PublishResult extends PublishReport {
  /** Always empty: the GitLab provider writes nothing locally. */
  files: string[]
  /** "kept": left as it was, because it holds the review of a newer head than this one. */
  summaryNote: { id: number; action: "created" | "updated" | "kept" } | null
  threads: {
    created: ThreadRef[]
    /** Findings whose thread from an earlier review already exists (open, or resolved by a person). */
    kept: (ThreadRef & { resolved: boolean })[]
    reopened: ThreadRef[]
    /** Earlier threads whose finding is gone because its code changed: answered "Fixed in …" and resolved. */
    resolved: { discussionId: string }[]
    /** Earlier threads a person dismissed (won't fix, or argued): answered with why, and resolved. */
    dismissed: { discussionId: string }[]
    /** Findings listed in the summary instead of inline, with why. */
    movedToSummary: { findingId: string; reason: string }[]
  }
  approval: ApprovalOutcome
  /** The answer to the question that started this run: posted where it was asked, or already there. */
  answer: { noteId: number; action: "posted" | "already_posted" } | null
  /** Facts about this run the summary states at the top (the merge request moved during the review, ...). */
  notices: string[]
  /** Things that went wrong without failing the review. */
  warnings: string[]
  /** How many quick actions, mentions and the like were neutralised in what we posted. */
  neutralized: number
}

/** Inputs of one publication. */
export interface PublishInput {
  client: GitlabClient
  context: CiContext
  state: ReadState
  record: ReviewRecord
  log: Logger
}

const maxNoteLength = 990_000

/**
 * Publishes a review: inline threads first (a refused position moves its finding to the summary),
 * then the one summary note (edited in place on re-runs), then fixed threads resolved, then the
 * approval action. Only failing to read the threads or to post the summary note throws; everything
 * else (a refused thread, approval, resolution or change request) becomes a warning in the result.
 */
export async function publishReview(input: PublishInput): Promise<PublishResult> {
  const { client, state, record, log } = input
  const result: PublishResult = {
    files: [],
    summaryNote: null,
    threads: { created: [], kept: [], reopened: [], resolved: [], dismissed: [], movedToSummary: [] },
    approval: { action: "failed", via: null, sha: null, detail: null },
    answer: null,
    notices: [],
    warnings: [],
    neutralized: 0,
    lines: [],
  }
  const published = createPublishLog(log, prepareBody)
  result.warnings = published.warnings
  const { prepare, warn } = published

  const reviewedHead = state.refs.headSha
  const notices = result.notices
  const current = await client.mergeRequest().catch((error: unknown) => {
    warn("could not re-read the merge request before publishing", error)
    return state.mergeRequest
  })
  const currentHead = current.diff_refs?.head_sha ?? reviewedHead
  // Positions name the diff version the findings were read from; if the MR moved meanwhile the
  // threads show as outdated, which is the truth, rather than landing on the wrong lines.
  const refs: DiffRefs = currentHead === reviewedHead ? refsOf(current, state.refs) : state.refs
  if (currentHead !== reviewedHead) {
    notices.push(
      `the merge request moved from ${short(reviewedHead)} to ${short(currentHead)} during the review: this review covers ${short(reviewedHead)} only, so it approves nothing; the newer commits need their own review`,
    )
  }

  const discussions: Discussion[] = await client.discussions()
  // The record says which earlier thread each finding continues (matched in core by the
  // coordinator's claim, fingerprint, title or traced place); the fingerprint is only the fallback
  // for a finding nothing matched, so a re-run never opens a second thread for the same marker.
  const existing = new Map<
    string,
    { discussion: Discussion; fingerprint: string; resolved: boolean; severity: Severity | null }
  >()
  for (const discussion of botThreads(discussions, state.bot)) {
    const fingerprint = markerIn(discussion.notes[0]!.body, markers.finding) as string
    existing.set(discussion.id, {
      discussion,
      fingerprint,
      resolved: threadResolved(discussion),
      severity: threadSeverity(discussion, state.bot.id),
    })
  }
  const threadOf = threadMatcher(record.findings, existing)

  // (b) inline threads
  // The same identity as the Code Quality and SARIF reports: a thread and a report entry are one finding.
  const fingerprints = findingFingerprints(record.findings)
  const inline: InlineFinding[] = []
  const raised: ReviewFinding[] = []
  const unanchored: { finding: ReviewFinding; reason: string }[] = []
  const toSummary = (finding: ReviewFinding, reason: string) => {
    unanchored.push({ finding, reason })
    result.threads.movedToSummary.push({ findingId: finding.id, reason })
  }
  // A person answered in an open thread and the coordinator still reports the finding: its body is
  // the answer to their argument. Posted once per reply (the marker names the reply it answers).
  const answerDisagreement = async (discussion: Discussion, finding: ReviewFinding, fingerprint: string) => {
    const lastHuman = discussion.notes.filter((note) => note.author.id !== state.bot.id && !note.system).at(-1)
    const lastBot = discussion.notes.filter((note) => note.author.id === state.bot.id).at(-1)
    if (!lastHuman || (lastBot && lastBot.id > lastHuman.id)) return
    const tag = `${fingerprint}:answer:${lastHuman.id}`
    const body = prepare(`${finding.body.trim()}\n`, [[markers.reply, tag]])
    await client.reply(discussion.id, body, async () => {
      const current = await client.discussion(discussion.id)
      return current.notes.find((note) => note.author.id === state.bot.id && markerIn(note.body, markers.reply) === tag)
    })
  }
  for (const [index, finding] of record.findings.entries()) {
    const fingerprint = fingerprints[index] as string
    const match = threadOf(finding, fingerprint)
    if (match) {
      const thread = match.thread
      const ref = { findingId: finding.id, discussionId: thread.discussion.id }
      const next = continuationOf(thread, finding)
      if (next === "open") {
        inline.push({ finding, thread: "open" })
        result.threads.kept.push({ ...ref, resolved: false })
        await answerDisagreement(thread.discussion, finding, thread.fingerprint).catch((error: unknown) =>
          warn(`could not answer in thread ${thread.discussion.id}`, error),
        )
      } else if (next === "reopen") {
        const reopened = await reopen(thread.discussion, finding, thread.fingerprint, thread.severity!).then(
          () => true,
          (error: unknown) => {
            warn(`could not reopen thread ${thread.discussion.id}`, error)
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

    // A person's comment raised it already: no second thread, the summary says who.
    if (finding.alreadyRaised) {
      raised.push(finding)
      continue
    }
    const anchor = anchorFinding(state.files, finding, refs)
    if (!anchor.ok) {
      toSummary(finding, anchor.reason)
      continue
    }
    const position = anchor.position
    // Where the thread sits, so the next review can tell whether the code at it changed.
    const at = position.new_line ? { sha: refs.headSha, path: position.new_path, line: position.new_line } : null
    const body = prepare(
      renderThread(finding, postableSuggestion(finding, state.files, "gitlab", suggestionBlock)?.block ?? null),
      findingMarkers(finding, fingerprint, at),
    )
    try {
      const discussion = await client.createThread(body, anchor.position, async () => {
        const threads = botThreads(await client.discussions(), state.bot)
        return threads.find((candidate) => markerIn(candidate.notes[0]!.body, markers.finding) === fingerprint)
      })
      inline.push({ finding, thread: "created" })
      result.threads.created.push({ findingId: finding.id, discussionId: discussion.id })
      if (discussion.notes[0]?.type !== undefined && discussion.notes[0]?.type !== "DiffNote") {
        warn(`GitLab stored the thread for ${finding.id} without its position (note type ${discussion.notes[0]?.type})`)
      }
    } catch (error) {
      if (error instanceof GitlabRequestError && error.data.status === 400) {
        toSummary(finding, `GitLab refused the line position (${error.data.description})`)
        continue
      }
      toSummary(finding, "the inline thread could not be posted")
      warn(`could not post the thread for ${finding.id}`, error)
    }
  }

  // Two pipelines publishing at once can both have opened a thread for the same finding; the
  // younger one (created later, so it sees the older when it looks) gives way, as for the summary.
  if (result.threads.created.length > 0) await yieldDuplicateThreads()

  // (c) re-review: earlier threads this review closes. Only those whose code changed are "fixed";
  // a person's dismissal is answered with why; the rest (record.stillOpen) stay open.
  const unreviewedPaths = new Set(state.unreviewed.map((file) => file.path))
  const closing = closingReplies(record, reviewedHead)
  for (const { id, kind, text } of closing) {
    const thread = existing.get(id)
    if (!thread || thread.resolved) continue
    const position = thread.discussion.notes[0]?.position
    if (position?.new_path && unreviewedPaths.has(position.new_path)) continue
    try {
      const tag = `${thread.fingerprint}:${kind}:${short(reviewedHead)}`
      const body = prepare(text, [[markers.reply, tag]])
      await client.reply(thread.discussion.id, body, async () => {
        const discussion = await client.discussion(thread.discussion.id)
        return discussion.notes.find(
          (note) => note.author.id === state.bot.id && markerIn(note.body, markers.reply) === tag,
        )
      })
      await client.resolveThread(thread.discussion.id, true)
      ;(kind === "fixed" ? result.threads.resolved : result.threads.dismissed).push({
        discussionId: thread.discussion.id,
      })
    } catch (error) {
      warn(`could not resolve thread ${thread.discussion.id}`, error)
    }
  }

  // (a) the summary note
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
    notices,
  })
  const tag = `${reviewedHead}:${randomBytes(6).toString("hex")}`
  const summaryBody = prepare(fitComment(text, maxNoteLength), [[markers.summary, tag]])
  result.summaryNote = await summaryNotes({
    client,
    bot: state.bot,
    reviewedHead,
    currentHead,
    body: summaryBody,
    tag,
    warn,
  })

  // (d) the decision's action
  result.approval = await act(input, current, reviewedHead, warn)

  // (e) the answer to the question that started the run, once, where it was asked
  if (state.asked?.request.kind === "question") {
    result.answer = await answerQuestion(client, state, record.answer, prepare).catch((error: unknown) => {
      warn("could not post the answer to the question", error)
      return null
    })
  }
  log.info(
    {
      summary: result.summaryNote,
      created: result.threads.created.length,
      kept: result.threads.kept.length,
      resolved: result.threads.resolved.length,
      moved: result.threads.movedToSummary.length,
      approval: result.approval.action,
    },
    "review published",
  )
  result.neutralized = published.neutralized
  result.lines = describePublishResult(result)
  return result

  async function yieldDuplicateThreads(): Promise<void> {
    const threads = botThreads(await client.discussions().catch(() => []), state.bot)
    for (const created of [...result.threads.created]) {
      const mine = threads.find((discussion) => discussion.id === created.discussionId)
      if (!mine) continue
      const fingerprint = markerIn(mine.notes[0]!.body, markers.finding)
      const older = threads.find(
        (discussion) =>
          discussion.id !== mine.id &&
          markerIn(discussion.notes[0]!.body, markers.finding) === fingerprint &&
          discussion.notes[0]!.id < mine.notes[0]!.id,
      )
      if (!older) continue
      try {
        await client.deleteNote(mine.notes[0]!.id)
      } catch (error) {
        warn(`could not delete the duplicate thread ${mine.id}`, error)
        continue
      }
      result.threads.created.splice(result.threads.created.indexOf(created), 1)
      result.threads.kept.push({
        findingId: created.findingId,
        discussionId: older.id,
        resolved: threadResolved(older),
      })
      const shown = inline.find((entry) => entry.finding.id === created.findingId)
      if (shown) shown.thread = threadResolved(older) ? "resolved" : "open"
    }
  }

  async function reopen(
    discussion: Discussion,
    finding: ReviewFinding,
    fingerprint: string,
    was: Severity,
  ): Promise<void> {
    const tag = `${fingerprint}:reopened:${short(reviewedHead)}`
    const body = prepare(reopenText(finding, was), [
      [markers.reply, tag],
      [markers.severity, finding.severity],
    ])
    await client.resolveThread(discussion.id, false)
    await client.reply(discussion.id, body, async () => {
      const current = await client.discussion(discussion.id)
      return current.notes.find((note) => note.author.id === state.bot.id && markerIn(note.body, markers.reply) === tag)
    })
  }
}

/**
 * One short answer where the question was asked: a reply in its thread, or a note quoting it.
 * Found again by its marker, so a re-run never answers twice; without an answer it says so.
 */
async function answerQuestion(
  client: GitlabClient,
  state: ReadState,
  answer: string | null,
  prepare: (text: string, list: [string, string][]) => string,
): Promise<PublishResult["answer"]> {
  const asked = state.asked as AskedNote
  const tag = `answer:${asked.noteId}`
  const text =
    answer?.trim() ||
    "This run had no answer to the question; the review itself is in the summary note of this merge request."
  const mine = (note: ApiNote) => note.author.id === state.bot.id && markerIn(note.body, markers.reply) === tag
  if ((await client.discussions()).some((discussion) => discussion.notes.some(mine)))
    return { noteId: asked.noteId, action: "already_posted" }
  if (asked.inThread && asked.discussionId) {
    const discussionId = asked.discussionId
    await client.reply(discussionId, prepare(`${text}\n`, [[markers.reply, tag]]), async () =>
      (await client.discussion(discussionId)).notes.find(mine),
    )
  } else {
    const quoted = oneLine(asked.request.body).slice(0, 200)
    await client.createNote(prepare(`> ${quoted}\n\n${text}\n`, [[markers.reply, tag]]), async () =>
      (await client.discussions()).flatMap((discussion) => discussion.notes).find(mine),
    )
  }
  return { noteId: asked.noteId, action: "posted" }
}

/** Everything one write of the summary note needs. */
interface SummaryNoteWrite {
  client: GitlabClient
  bot: ApiUser
  reviewedHead: string
  currentHead: string
  /** The prepared body, markers included; `tag` is its summary marker's value. */
  body: string
  tag: string
  warn: (message: string, error?: unknown) => void
}

// The bot's summary notes on the merge request, for core's upsertSummary (one summary per MR).
function summaryNotes(write: SummaryNoteWrite): Promise<PublishResult["summaryNote"]> {
  const { client, bot, tag } = write
  const notes = async () =>
    (await client.discussions())
      .flatMap((discussion) => discussion.notes)
      .filter((note) => note.author.id === bot.id && !note.system && markerIn(note.body, markers.summary) !== null)
  return upsertSummary(
    {
      list: async () => (await notes()).map((note) => ({ id: note.id, tag: markerIn(note.body, markers.summary)! })),
      create: (body) =>
        client.createNote(body, async () =>
          (await notes()).find((candidate) => markerIn(candidate.body, markers.summary) === tag),
        ),
      edit: (id, body) => client.editNote(id, body),
      remove: (id) => client.deleteNote(id),
      isNotFound: (error) => error instanceof GitlabRequestError && error.data.status === 404,
    },
    write,
  )
}

/** What to say on the merge request when the review could not run. */
export interface ReviewFailure {
  message: string
  hint: string | null
}

/**
 * Says on the merge request that the review of its head could not run: the summary note (edited in
 * place, so a re-run never adds a second one, and the next successful review replaces it) and the
 * bot's earlier approval revoked, since nothing vouches for this head. Never throws; returns what
 * it did as terminal lines.
 */
export async function publishFailure(
  input: Omit<PublishInput, "record"> & { failure: ReviewFailure },
): Promise<string[]> {
  const { client, state, failure, log } = input
  const lines: string[] = []
  const warn = (message: string, error?: unknown) => {
    const text = error === undefined ? message : `${message}: ${describe(error)}`
    lines.push(`GitLab warning: ${text}`)
    log.warn({ error: error === undefined ? undefined : describe(error) }, message)
  }
  const reviewedHead = state.refs.headSha
  const currentHead = await client.mergeRequest().then(
    (mr) => mr.diff_refs?.head_sha ?? reviewedHead,
    () => reviewedHead,
  )
  const approval = await unapprove(client, warn)
  lines.push(`GitLab: ${approval.action.replace(/_/g, " ")}`)
  try {
    const tag = `${reviewedHead}:${randomBytes(6).toString("hex")}`
    const body = prepareBody(renderFailureSummary({ ...failure, headSha: reviewedHead, platform }), [
      [markers.summary, tag],
    ]).body
    const note = await summaryNotes({ client, bot: state.bot, reviewedHead, currentHead, body, tag, warn })
    if (note) lines.unshift(`GitLab: summary note ${note.id} ${note.action} (the review could not run)`)
  } catch (error) {
    warn("could not say on the merge request that the review could not run", error)
  }
  return lines
}

async function act(
  input: PublishInput,
  current: ApiMergeRequest,
  head: string,
  warn: (message: string, error?: unknown) => void,
): Promise<ApprovalOutcome> {
  const { client, record } = input
  switch (record.decision) {
    case "approved":
    case "approved_with_comments":
      return approve(input, head, current.diff_refs?.head_sha ?? current.sha ?? head)
    case "minor_issues":
      return unapprove(client, warn)
    case "significant_concerns": {
      await unapprove(client, warn)
      return requestChanges(input, current, warn)
    }
  }
}

async function approve(input: PublishInput, head: string, currentHead: string): Promise<ApprovalOutcome> {
  const { client } = input
  const outcome = (action: ApprovalOutcome["action"], detail: string | null): ApprovalOutcome => ({
    action,
    via: "rest",
    sha: head,
    detail,
  })
  const moved = (now: string): ApprovalOutcome => ({
    action: "not_approved",
    via: null,
    sha: head,
    detail: `the merge request moved from ${short(head)} to ${short(now)} during the review; the new head needs its own review`,
  })
  // Known before asking: approving now would cover commits nobody reviewed. The sha parameter
  // guards the race where it moves between this check and the call (GitLab answers 409).
  if (currentHead !== head) return moved(currentHead)
  try {
    await client.approve(head)
    return outcome("approved", null)
  } catch (error) {
    const status = error instanceof GitlabRequestError ? error.data.status : null
    if (status === 409) {
      // The head moved after the review: approving the new head would approve unreviewed code.
      return moved(
        await client.mergeRequest().then(
          (mr) => mr.diff_refs?.head_sha ?? mr.sha ?? "unknown",
          () => "unknown",
        ),
      )
    }
    if (status === 401 || status === 403) {
      const approvals = await client.approvals().catch(() => null)
      const already =
        approvals?.user_has_approved === true ||
        (approvals?.approved_by ?? []).some((entry) => entry.user.id === input.state.bot.id)
      if (already) return outcome("already_approved", null)
      return outcome(
        "not_approved",
        `GitLab refused the approval (HTTP ${status}): the bot user may not be an eligible approver (it needs at least the Developer role)`,
      )
    }
    return outcome("failed", describe(error))
  }
}

async function unapprove(
  client: GitlabClient,
  warn: (message: string, error?: unknown) => void,
): Promise<ApprovalOutcome> {
  try {
    await client.unapprove()
    return { action: "unapproved", via: "rest", sha: null, detail: null }
  } catch (error) {
    if (error instanceof GitlabRequestError && error.data.status === 404)
      return { action: "nothing_to_unapprove", via: "rest", sha: null, detail: null }
    warn("could not revoke the bot's approval", error)
    return { action: "failed", via: "rest", sha: null, detail: describe(error) }
  }
}

const requestChangesMutation = `mutation($project_path: ID!, $iid: String!) {
  mergeRequestRequestChanges(input: { projectPath: $project_path, iid: $iid }) { mergeRequest { iid } errors }
}`

// GraphQL first (no note, no reviewer list change); else the /request_changes quick action, which
// needs the bot to be a reviewer. The command is built here and never taken from model text.
async function requestChanges(
  input: PublishInput,
  current: ApiMergeRequest,
  warn: (message: string, error?: unknown) => void,
): Promise<ApprovalOutcome> {
  const { client, context, state } = input
  const problems: string[] = []
  // Both ways need the bot to be a reviewer (UpdateReviewerStateService answers "Reviewer not found").
  try {
    const reviewerIds = (current.reviewers ?? []).map((user) => user.id)
    if (!reviewerIds.includes(state.bot.id)) await client.setReviewers([...reviewerIds, state.bot.id])
  } catch (error) {
    problems.push(`adding the bot as reviewer: ${describe(error)}`)
  }
  const requested = async () =>
    (await client.reviewers()).find((reviewer) => reviewer.user.id === state.bot.id)?.state === "requested_changes"
  const landed = async () => ((await requested()) ? {} : undefined)
  // A re-run on the same head finds the request still standing: asking again would only add
  // another "requested changes" system note to the merge request.
  if (await requested().catch(() => false))
    return { action: "already_requested_changes", via: null, sha: null, detail: null }

  const projectPath = projectPathOf(current, context)
  if (projectPath !== null) {
    try {
      const answer = await client.graphql(
        requestChangesMutation,
        { project_path: projectPath, iid: String(context.iid) },
        landed,
      )
      const payload = (answer.data as { mergeRequestRequestChanges?: { errors?: unknown } } | null)
        ?.mergeRequestRequestChanges
      const errors = [...answer.errors, ...(Array.isArray(payload?.errors) ? payload.errors.map(String) : [])]
      if (payload && errors.length === 0)
        return { action: "requested_changes", via: "graphql", sha: null, detail: null }
      problems.push(`GraphQL: ${errors.join("; ") || "no mergeRequestRequestChanges in the answer"}`)
    } catch (error) {
      problems.push(`GraphQL: ${describe(error)}`)
    }
  }

  try {
    await client.postCommand("/request_changes", landed)
    if (await requested())
      return {
        action: "requested_changes",
        via: "quick_action",
        sha: null,
        detail: problems.length > 0 ? problems.join("; ") : null,
      }
    problems.push("quick action: GitLab did not record the change request")
  } catch (error) {
    problems.push(`quick action: ${describe(error)}`)
  }
  const detail = `this GitLab cannot record "request changes" for the bot (${problems.join("; ")}); the failing review job is the merge gate`
  warn(detail)
  return { action: "request_changes_unavailable", via: null, sha: null, detail }
}

function projectPathOf(mergeRequest: ApiMergeRequest, context: CiContext): string | null {
  const full = mergeRequest.references?.full
  if (full?.includes("!")) return full.slice(0, full.lastIndexOf("!"))
  const url = mergeRequest.web_url
  const match = url ? /^https?:\/\/[^/]+\/(.+?)\/-\/merge_requests\/\d+/.exec(url) : null
  if (match?.[1]) {
    const server = new URL(context.serverUrl).pathname.replace(/^\/+|\/+$/g, "")
    return server && match[1].startsWith(`${server}/`) ? match[1].slice(server.length + 1) : match[1]
  }
  return /^\d+$/.test(context.projectId) ? null : context.projectId
}

function refsOf(mergeRequest: ApiMergeRequest, fallback: DiffRefs): DiffRefs {
  const refs = mergeRequest.diff_refs
  if (!refs?.base_sha || !refs.head_sha) return fallback
  return { baseSha: refs.base_sha, headSha: refs.head_sha, startSha: refs.start_sha ?? refs.base_sha }
}

const short = shortSha
const describe = errorText

/**
 * GitLab's committable suggestion: ```` ```suggestion:-N+0 ```` on the thread's line (the last line
 * replaced), N lines above it included. The lines go in verbatim; `applicableSuggestion` has made
 * sure none of them is a fence.
 */
export function suggestionBlock(suggestion: ApplicableSuggestion): string {
  return [`\`\`\`suggestion:-${suggestion.endLine - suggestion.startLine}+0`, ...suggestion.lines, "```"].join("\n")
}

/** Lines for the terminal: what was posted and what could not be done. */
export function describePublishResult(result: Omit<PublishResult, "lines">): string[] {
  const lines: string[] = []
  if (result.summaryNote) lines.push(`GitLab: summary note ${result.summaryNote.id} ${result.summaryNote.action}`)
  const threads = result.threads
  lines.push(
    `GitLab: threads ${threads.created.length} created, ${threads.kept.length} kept, ${threads.reopened.length} reopened, ${threads.resolved.length} resolved as fixed, ${threads.dismissed.length} dismissed, ${threads.movedToSummary.length} in the summary`,
  )
  const approval = result.approval
  lines.push(
    `GitLab: ${approval.action.replace(/_/g, " ")}${approval.via ? ` (${approval.via.replace(/_/g, " ")})` : ""}${approval.detail ? ` — ${approval.detail}` : ""}`,
  )
  if (result.answer)
    lines.push(`GitLab: answer to note ${result.answer.noteId} ${result.answer.action.replace(/_/g, " ")}`)
  for (const notice of result.notices) lines.push(`GitLab note: ${notice}`)
  for (const warning of result.warnings) lines.push(`GitLab warning: ${warning}`)
  return lines
}
