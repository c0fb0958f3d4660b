import type { UnreadFile } from "../judge/coverage"
import type { ReviewFinding, ReviewRecord } from "../judge/review-record"
import { type Decision, type Severity, severityOrder } from "../model/finding"
import {
  countFindings,
  findingLocation,
  formatDuration,
  formatNumber,
  inlineCode,
  oneLine,
  plural,
  reviewIncomplete,
} from "../model/text"
import { reviewUsageTotal } from "../model/usage"

// The Markdown of what a VCS provider posts about a review (the summary comment, an inline
// thread), before neutralisation and markers. The words that differ between GitLab and GitHub come
// from the platform; everything else reads the same on both.

/** The platform a review is posted on, for the words that differ. */
export interface ReviewPlatform {
  /** "GitLab", "GitHub": who sent (or did not send) the diff. */
  name: string
  /** "merge request", "pull request". */
  change: string
}

/** A finding shown as an inline thread, with what happened to its thread. */
export interface InlineFinding {
  finding: ReviewFinding
  thread: "created" | "open" | "resolved" | "reopened"
}

/** Everything the summary note is rendered from. */
export interface SummaryInput {
  record: ReviewRecord
  inline: InlineFinding[]
  /** Findings that could not be anchored on a diff line, with why. */
  unanchored: { finding: ReviewFinding; reason: string }[]
  /** Findings a person's comment had already raised (`alreadyRaised`): listed, not posted as threads. */
  raised?: ReviewFinding[]
  unreviewed: UnreadFile[]
  platform: ReviewPlatform
  /** Threads of earlier reviews resolved by this one as fixed. */
  resolvedThreads: number
  breakGlass: { by: string; at: string | null } | null
  headSha: string | null
  /** Facts about this run the reader must see (the MR moved during the review, ...). */
  notices: string[]
}

/**
 * The summary note's markdown, before neutralisation and markers: decision, warnings about what
 * was not reviewed, the coordinator's summary and answer, findings (those not inline in full),
 * resolved findings, coverage, and the cost footer. It never calls a partial review clean.
 */
export function renderSummary(input: SummaryInput): string {
  const { record } = input
  const label = reviewIncomplete(record) ? `⚠️ ${incompleteHeadline(record)}` : decisionLabels[record.decision]
  const lines: string[] = [`### AI code review: ${label}`, ""]
  const reasons = record.reasons.length > 0 ? ` — ${record.reasons.map(oneLine).join("; ")}` : ""
  lines.push(`**Decision:** \`${record.decision}\`${reasons}  `)
  const head = input.headSha ? ` · head \`${input.headSha.slice(0, 8)}\`` : ""
  lines.push(
    `**Reviewed:** ${record.tier} tier · ${plural(record.coverage.reviewedFiles, "file")} · ${countFindings(record.findings)}${head}`,
    "",
  )

  for (const warning of warnings(input)) lines.push(`> **${warning.title}** ${warning.text}`, ">")
  if (lines.at(-1) === ">") lines.splice(lines.length - 1, 1, "")

  if (record.summary.trim() !== "") lines.push("#### Summary", "", record.summary.trim(), "")
  if (record.answer !== null && record.answer.trim() !== "") lines.push("#### Answer", "", record.answer.trim(), "")

  lines.push("#### Findings", "")
  if (record.findings.length === 0) lines.push(noFindings(input), "")
  if (input.inline.length > 0) {
    lines.push(`Inline threads (${input.inline.length}):`, "")
    for (const { finding, thread } of sorted(input.inline, (item) => item.finding)) {
      lines.push(
        `- ${severityMark[finding.severity]} **${finding.severity}** ${inlineCode(findingLocation(finding))} — ${oneLine(finding.title)} *(${threadLabels[thread]})*`,
      )
    }
    lines.push("")
  }
  if (input.unanchored.length > 0) {
    lines.push(`Not on a diff line, so listed here (${input.unanchored.length}):`, "")
    for (const { finding, reason } of sorted(input.unanchored, (item) => item.finding)) {
      lines.push(
        `- ${severityMark[finding.severity]} **${finding.severity}** ${inlineCode(findingLocation(finding))} — **${oneLine(finding.title)}** *(${finding.category}; ${oneLine(reason)})*`,
      )
      const body = finding.body.trim()
      if (body !== "") lines.push("", ...body.split("\n").map((line) => (line === "" ? "" : `  ${line}`)), "")
    }
    if (lines.at(-1) !== "") lines.push("")
  }

  const raised = input.raised ?? []
  if (raised.length > 0) {
    lines.push(`Already raised by people, so not posted again (${raised.length}):`, "")
    for (const finding of sorted(raised, (item) => item)) {
      const by = finding.alreadyRaised
      lines.push(
        `- ${severityMark[finding.severity]} **${finding.severity}** ${inlineCode(findingLocation(finding))} — ${oneLine(finding.title)}${by ? ` *(raised by ${oneLine(by.author)} at ${inlineCode(`${by.file}:${by.line}`)})*` : ""}`,
      )
    }
    lines.push("")
  }

  if (record.resolved.length > 0 || input.resolvedThreads > 0) {
    lines.push("#### Resolved since the previous review", "")
    for (const resolved of record.resolved) {
      const where =
        resolved.file === null
          ? ""
          : `${inlineCode(resolved.line === null ? resolved.file : `${resolved.file}:${resolved.line}`)} — `
      lines.push(`- ${where}${oneLine(resolved.title)}`)
    }
    if (input.resolvedThreads > 0) lines.push(`- ${plural(input.resolvedThreads, "earlier thread")} resolved as fixed.`)
    lines.push("")
  }
  if (record.dismissed.length > 0) {
    lines.push("#### Dismissed, not fixed", "")
    for (const entry of record.dismissed) lines.push(`- ${earlier(entry)} — ${oneLine(entry.reason)}`)
    lines.push("")
  }
  if (record.stillOpen.length > 0) {
    lines.push("#### Earlier findings still open", "")
    for (const entry of record.stillOpen) lines.push(`- ${earlier(entry)} — ${oneLine(entry.reason)}`)
    lines.push("")
  }

  lines.push("#### Coverage", "", `- Files reviewed: ${record.coverage.reviewedFiles}`)
  if (input.unreviewed.length > 0) {
    lines.push(`- **Not reviewed** — ${input.platform.name} sent no content for ${unreadCount(input.unreviewed)}:`)
    for (const file of input.unreviewed) lines.push(`  - ${inlineCode(file.path)} — ${oneLine(file.reason)}`)
  }
  const unreadable = otherUnreviewed(input)
  if (unreadable.length > 0) {
    lines.push(`- **Not reviewed** — no reviewer could read ${plural(unreadable.length, "file")}:`)
    for (const file of unreadable) lines.push(`  - ${inlineCode(file.path)} — ${oneLine(file.reason)}`)
  }
  if (record.coverage.filtered.length > 0) {
    lines.push(`- Filtered as noise, not reviewed (${record.coverage.filtered.length}):`)
    for (const file of record.coverage.filtered) lines.push(`  - ${inlineCode(file.path)} — ${oneLine(file.reason)}`)
  }
  if (record.coverage.failedReviewers.length > 0) {
    lines.push(
      `- **Reviewers that failed** (${record.coverage.failedReviewers.length}); their areas were not reviewed:`,
    )
    for (const reviewer of record.coverage.failedReviewers)
      lines.push(`  - ${reviewer.name} — ${oneLine(reviewer.error)}`)
  } else {
    lines.push("- Every scheduled reviewer finished.")
  }
  // Unread files have their own list above; review.json repeats them as notes for other readers.
  const listed = new Set(
    [...input.unreviewed, ...unreadable].map((file) => `not reviewed: ${file.path} (${file.reason})`),
  )
  for (const note of record.notes.filter((candidate) => !listed.has(candidate))) lines.push(`- Note: ${oneLine(note)}`)
  lines.push("", "---", "", `*${footer(record)}*`)
  return lines.join("\n") + "\n"
}

/**
 * The headline of a review that did not fully run: what did not, in a few words ("incomplete, not
 * approved: security and performance did not finish"). Never a decision label.
 */
export function incompleteHeadline(record: Pick<ReviewRecord, "coverage">): string {
  const failed = record.coverage.failedReviewers.map((reviewer) => reviewer.name)
  const unread = (record.coverage.unreviewed ?? []).length
  const parts: string[] = []
  if (failed.length > 0)
    parts.push(
      `${failed.length > 3 ? `${failed.slice(0, 3).join(", ")} and ${failed.length - 3} more` : failed.length === 1 ? failed[0] : `${failed.slice(0, -1).join(", ")} and ${failed.at(-1)}`} did not finish`,
    )
  if (unread > 0) parts.push(`${plural(unread, "file")} not read`)
  return parts.length === 0 ? "incomplete, not approved" : `incomplete, not approved: ${parts.join("; ")}`
}

/**
 * The summary note when no review could run (401 from every model, opencode would not start, no
 * key): what happened and what to do, and that nothing was approved. Never a decision label.
 */
export function renderFailureSummary(input: {
  message: string
  hint: string | null
  headSha: string
  platform: ReviewPlatform
}): string {
  const lines = ["### AI code review: could not run", ""]
  lines.push(
    `The review of \`${input.headSha.slice(0, 8)}\` did not run, so nothing in this ${input.platform.change} was reviewed.`,
    "",
  )
  lines.push("~~~text", input.message.replace(/~{3,}/g, "~~").trim(), "~~~", "")
  if (input.hint) lines.push(`**What to do:** ${oneLine(input.hint)}`, "")
  lines.push(
    "Nothing was approved, and an earlier approval by this bot was revoked. The review job failed; the next pipeline reviews again.",
  )
  return lines.join("\n") + "\n"
}

/** An inline thread's markdown, before neutralisation and markers; `suggestion` is the platform's block. */
export function renderThread(finding: ReviewFinding, suggestion: string | null = null): string {
  const lines = [
    `**${severityMark[finding.severity]} ${severityLabels[finding.severity]} · ${oneLine(finding.category)}** — ${oneLine(finding.title)}`,
    "",
  ]
  if (finding.body.trim() !== "") lines.push(finding.body.trim(), "")
  if (suggestion) lines.push(suggestion, "")
  lines.push(`*raised by ${oneLine(finding.reviewer)} · AI code review*`)
  return lines.join("\n") + "\n"
}

const decisionLabels: Record<Decision, string> = {
  approved: "✅ approved",
  approved_with_comments: "✅ approved with comments",
  minor_issues: "⚠️ minor issues",
  significant_concerns: "⛔ significant concerns",
}
const severityMark: Record<Severity, string> = { critical: "⛔", warning: "⚠️", suggestion: "💡" }
const severityLabels: Record<Severity, string> = { critical: "Critical", warning: "Warning", suggestion: "Suggestion" }
const threadLabels: Record<InlineFinding["thread"], string> = {
  created: "new thread",
  open: "thread still open",
  resolved: "thread resolved by a reviewer",
  reopened: "thread reopened: it got worse",
}

/** A warning shown before a review's summary: a bold title and one sentence. */
export interface ReviewWarning {
  title: string
  text: string
}

/**
 * The warnings every rendering of a review shows before its summary, from the record alone: break
 * glass requests that did not count, criticals the verifier disputed or could not verify, a review
 * that did not fully run (`failure` says what that does to the job, e.g. "the review job fails"),
 * and files no reviewer could read other than `platformUnread` (which the platform's own words list).
 */
export function recordWarnings(
  record: ReviewRecord,
  options: { failure: string; platformUnread?: readonly { path: string }[] },
): ReviewWarning[] {
  const result: ReviewWarning[] = []
  for (const ignored of record.breakGlassIgnored ?? []) {
    const when = ignored.at ? ` (${ignored.at})` : ""
    result.push({
      title: "Break glass ignored:",
      text: `${ignored.by} asked for it${when}, but ${oneLine(ignored.reason)}.`,
    })
  }
  const disputed = record.findings.filter(
    (finding) =>
      finding.verification?.status === "not_confirmed" &&
      finding.verification.originalSeverity === "critical" &&
      finding.severity !== "critical",
  )
  for (const finding of disputed)
    result.push({
      title: "Disputed blocker:",
      text: `the verifier disputed the critical ${inlineCode(findingLocation(finding))} ${oneLine(finding.title)} (${oneLine(finding.verification?.reason ?? "")}); it is listed as ${finding.severity}, and the change is not approved over it.`,
    })
  const unverified = record.findings.filter((finding) => finding.verification?.status === "unverified")
  if (unverified.length > 0)
    result.push({
      title: "Unverified:",
      text: `${plural(unverified.length, "finding")} the verifier could not check stand${unverified.length === 1 ? "s" : ""} at ${unverified.length === 1 ? "its" : "their"} severity (${unverified.map((finding) => `${inlineCode(findingLocation(finding))}: ${oneLine(finding.verification?.reason ?? "")}`).join("; ")}).`,
    })
  const failed = record.coverage.failedReviewers
  if (reviewIncomplete(record) && failed.length > 0) {
    result.push({
      title: "Incomplete review.",
      text: `${failed.map((reviewer) => `${reviewer.name} (${oneLine(reviewer.error)})`).join(", ")} did not finish; what ${failed.length === 1 ? "it covers" : "they cover"} was not reviewed, so the change is not approved and ${options.failure}.`,
    })
  } else if (reviewIncomplete(record)) {
    result.push({
      title: "Incomplete review.",
      text: `more of the change could not be read than was reviewed (listed under Coverage), so the change is not approved and ${options.failure}.`,
    })
  } else if (failed.length > 0) {
    result.push({
      title: "Partial review.",
      text: `${plural(failed.length, "reviewer")} failed (${failed.map((reviewer) => `${reviewer.name}: ${oneLine(reviewer.error)}`).join("; ")}); what ${failed.length === 1 ? "it covers" : "they cover"} was not reviewed.`,
    })
  }
  const platform = new Set((options.platformUnread ?? []).map((file) => file.path))
  const unreadable = (record.coverage.unreviewed ?? []).filter((file) => !platform.has(file.path))
  if (unreadable.length > 0) {
    result.push({
      title: "Not reviewed:",
      text: `${plural(unreadable.length, "changed file")} no reviewer could read (${unreadable
        .slice(0, 3)
        .map((file) => `${inlineCode(file.path)}: ${oneLine(file.reason)}`)
        .join("; ")}${unreadable.length > 3 ? "; …" : ""}).`,
    })
  }
  return result
}

function warnings(input: SummaryInput): ReviewWarning[] {
  const { record } = input
  const result: ReviewWarning[] = input.notices.map((notice) => ({ title: "Note:", text: notice }))
  if (input.breakGlass) {
    const when = input.breakGlass.at ? ` (${input.breakGlass.at})` : ""
    result.push({
      title: "Break glass:",
      text: `approved because ${input.breakGlass.by} asked for it${when}, whatever the review found.`,
    })
  } else if (record.breakGlass) {
    result.push({ title: "Break glass:", text: "approved at a human's request, whatever the review found." })
  }
  const shared = recordWarnings(record, {
    failure: "the review job fails. Re-run the job once the cause is fixed",
    platformUnread: input.unreviewed,
  })
  const unreadable = (warning: ReviewWarning) => warning.title === "Not reviewed:"
  result.push(...shared.filter((warning) => !unreadable(warning)))
  if (input.unreviewed.length > 0) {
    result.push({
      title: "Not reviewed:",
      text: `${input.platform.name} sent no diff content for ${unreadCount(input.unreviewed)} (listed under Coverage).`,
    })
  }
  result.push(...shared.filter(unreadable))
  if (record.coverage.filtered.length > 0) {
    const count = record.coverage.filtered.length
    result.push({
      title: "Filtered:",
      text: `${count} file${count === 1 ? " was" : "s were"} skipped as noise (listed under Coverage).`,
    })
  }
  if (record.injectionSuspected) {
    result.push({
      title: "Prompt injection suspected:",
      text: `text in the ${input.platform.change} or its diff tried to pass as review instructions (see the reasons); reviewers read it as data only, and the change is not approved automatically.`,
    })
  }
  return result
}

// Files review.json lists as not reviewed that the platform did deliver (binary files, say).
function otherUnreviewed(input: SummaryInput): { path: string; reason: string }[] {
  const platform = new Set(input.unreviewed.map((file) => file.path))
  return (input.record.coverage.unreviewed ?? []).filter((file) => !platform.has(file.path))
}

function noFindings(input: SummaryInput): string {
  const gaps =
    input.record.coverage.failedReviewers.length > 0 || input.unreviewed.length > 0 || otherUnreviewed(input).length > 0
  return gaps
    ? "No findings in what was reviewed. Parts of the change were not reviewed (see Coverage), so this is not a clean result."
    : "No findings."
}

// "3 files", and the entry for files past the platform's diff limits, whose number nobody knows.
function unreadCount(files: readonly UnreadFile[]): string {
  const known = files.filter((file) => file.files !== null).reduce((sum, file) => sum + (file.files ?? 1), 0)
  if (!files.some((file) => file.files === null)) return plural(known, "file")
  return known > 0
    ? `${plural(known, "file")} and an unknown number past its diff limits`
    : "an unknown number of files past its diff limits"
}

function earlier(entry: { title: string; file: string | null; line: number | null }): string {
  const where =
    entry.file === null ? "" : `${inlineCode(entry.line === null ? entry.file : `${entry.file}:${entry.line}`)} `
  return `${where}${oneLine(entry.title)}`
}

function sorted<T>(items: readonly T[], finding: (item: T) => ReviewFinding): T[] {
  return severityOrder.flatMap((severity) => items.filter((item) => finding(item).severity === severity))
}

function footer(record: ReviewRecord): string {
  const totals = reviewUsageTotal(record.usage)
  const tokens = totals.input + totals.output + totals.cacheRead + totals.cacheWrite
  const tokenText =
    tokens > 0
      ? ` · ${formatNumber(totals.input)} tokens in, ${formatNumber(totals.output)} out, ${formatNumber(totals.cacheRead)} cache read (${Math.round(record.usage.cacheHitRate * 100)} % cache hits)`
      : ""
  return `Cost ${dollars(record.usage.costUsd)} · ${formatDuration(record.durationMs)}${tokenText} · opencode-reviewer`
}

// "USD", not "$": GitLab reads "$5" as a snippet reference and GitHub "$…$" as math; the neutraliser would quote it.
function dollars(value: number): string {
  return value > 0 && value < 0.01 ? `${value.toFixed(4)} USD` : `${value.toFixed(2)} USD`
}
