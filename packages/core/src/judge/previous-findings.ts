import { compareSeverity, type Finding, normalizeCategory, type Severity } from "../model/finding"
import { comparableText } from "../model/text"
import { findingFingerprints } from "./fingerprints"
import { fixWindowLines } from "./line-trace"

/**
 * One finding of the previous review (one of the bot's inline threads) as the VCS provider read
 * it: where it was anchored, where that line is at the reviewed head, and what people answered.
 */
export interface PreviousFinding {
  /** The thread's id (GitLab discussion id), which the coordinator sees as `<review_thread id>`. */
  id: string
  title: string
  file: string | null
  line: number | null
  /** Already resolved before this review (by a person, or by the bot earlier). */
  resolved?: boolean
  category?: string | null
  /** The fingerprint the thread was posted under (`findingFingerprints`), when known. */
  fingerprint?: string | null
  /** The severity the thread stands at. */
  severity?: Severity | null
  /**
   * The thread's line traced from the commit it was posted on to the reviewed head: where it is
   * now and whether the code at it changed. Null or absent when that could not be compared.
   */
  trace?: { file: string | null; line: number | null; changed: boolean } | null
  /**
   * The last human reply in the thread after the bot's last word, classified: `acknowledged` (it
   * accepts the finding as it is; `words` are what said so, e.g. "won't fix") or `argued`; `trusted`
   * when the platform says its author has write access (GitLab: Developer) or above. Only a trusted
   * reply closes a thread.
   */
  reply?: { by: string; kind: "acknowledged" | "argued"; trusted: boolean; words?: string } | null
}

/** An earlier thread this review closes without calling it fixed, or leaves open, and why. */
export interface PreviousOutcome {
  previous: PreviousFinding
  reason: string
}

/** How this review's findings relate to the previous review's threads. */
export interface CarryOver {
  /** For each finding (by index), the earlier thread it continues, or null for a new one. */
  continues: (string | null)[]
  /** Indexes of findings left out: a person dismissed their thread and the problem did not get worse. */
  dropped: number[]
  /** Not reported again and the code at their lines changed: fixed. */
  fixed: PreviousFinding[]
  /** Closed because a person answered: accepted as it is ("won't fix"), or argued and not reported again. */
  dismissed: PreviousOutcome[]
  /** Not reported again, but nothing shows they were fixed: their threads stay open. */
  stillOpen: PreviousOutcome[]
  /** The coordinator's thread claims that were ignored because the thread is elsewhere, one line each. */
  ignoredClaims: string[]
}

/** What decides the outcome of an unreported thread besides the threads themselves. */
export interface CarryOverOptions {
  /** Some reviewers failed: a finding missing from this review may only mean nobody looked. */
  partial: boolean
}

/**
 * Matches this review's findings to the previous review's threads by what stays stable across a
 * push and a rewording: first the coordinator's own `thread` claim (only for a finding at the
 * thread's traced place: a claim cannot carry a finding elsewhere into a dismissed thread), then the
 * same fingerprint, then the same file and title, then the same place (the thread's line traced to
 * the reviewed head, within `fixWindowLines`) with the same meaning (category, or most of the
 * title's words). A re-reported finding leaves the review only when a person with write access
 * accepted its thread as it is and it did not get worse. An earlier thread nobody re-reported counts
 * as fixed only when the code at its line changed and the review was whole.
 */
export function carryOver(
  findings: readonly Finding[],
  previous: readonly PreviousFinding[],
  options: CarryOverOptions,
): CarryOver {
  const continues: (string | null)[] = findings.map(() => null)
  const taken = new Set<string>()
  const fingerprints = findingFingerprints(findings.map((finding) => ({ ...finding })))
  const claim = (index: number, match: PreviousFinding | undefined) => {
    if (!match || continues[index] !== null) return
    continues[index] = match.id
    taken.add(match.id)
  }
  const open = (entry: PreviousFinding) => !taken.has(entry.id)
  const ignoredClaims: string[] = []
  const claimed = (finding: Finding) => {
    const entry = previous.find(
      (candidate) => open(candidate) && finding.thread !== undefined && candidate.id === finding.thread,
    )
    if (!entry || samePlace(entry, finding)) return entry
    const there =
      fileOf(entry) === null ? "elsewhere" : `at ${fileOf(entry)}${lineOf(entry) === null ? "" : `:${lineOf(entry)}`}`
    ignoredClaims.push(
      `the coordinator tied "${finding.title}" (${finding.file}${finding.line === null ? "" : `:${finding.line}`}) to the earlier thread "${entry.title}", which is ${there}; the claim was ignored`,
    )
    return undefined
  }
  const passes: ((finding: Finding, index: number) => PreviousFinding | undefined)[] = [
    claimed,
    (_finding, index) =>
      previous.find((entry) => open(entry) && entry.fingerprint != null && entry.fingerprint === fingerprints[index]),
    (finding) =>
      previous.find(
        (entry) =>
          open(entry) &&
          fileOf(entry) === finding.file &&
          comparableText(entry.title) === comparableText(finding.title),
      ),
    (finding) =>
      nearest(
        finding,
        previous.filter((entry) => open(entry) && samePlace(entry, finding) && sameMeaning(entry, finding)),
      ),
  ]
  for (const pass of passes) for (const [index, finding] of findings.entries()) claim(index, pass(finding, index))

  const dropped: number[] = []
  const dismissed: PreviousOutcome[] = []
  for (const [index, id] of continues.entries()) {
    const entry = previous.find((candidate) => candidate.id === id)
    if (entry?.reply?.kind !== "acknowledged" || !entry.reply.trusted || entry.resolved) continue
    if (entry.severity && compareSeverity(findings[index]!.severity, entry.severity) < 0) continue
    dropped.push(index)
    dismissed.push({
      previous: { ...entry, severity: entry.severity ?? findings[index]!.severity },
      reason: accepted(entry.reply),
    })
  }

  const fixed: PreviousFinding[] = []
  const stillOpen: PreviousOutcome[] = []
  for (const entry of previous) {
    if (taken.has(entry.id) || entry.resolved) continue
    const reply = entry.reply?.trusted ? entry.reply : null
    // A reply from someone who cannot dismiss findings closes nothing; the thread is judged as if unanswered.
    const untrusted =
      entry.reply && !entry.reply.trusted
        ? `; ${entry.reply.by}'s reply does not close it (they cannot dismiss findings)`
        : ""
    if (reply?.kind === "acknowledged") dismissed.push({ previous: entry, reason: accepted(reply) })
    else if (reply?.kind === "argued")
      dismissed.push({ previous: entry, reason: `not reported again after ${reply.by}'s reply` })
    else if (options.partial)
      stillOpen.push({
        previous: entry,
        reason: `not reported again, but the review was partial, so that does not mean it was fixed${untrusted}`,
      })
    else if (!entry.trace)
      stillOpen.push({
        previous: entry,
        reason: `not reported again, but its code could not be compared with the reviewed head${untrusted}`,
      })
    else if (entry.trace.changed) fixed.push(entry)
    else
      stillOpen.push({
        previous: entry,
        reason: `not reported again, but the code at its lines did not change${untrusted}`,
      })
  }
  return { continues, dropped, fixed, dismissed, stillOpen, ignoredClaims }
}

// "dismissed by erin: won't fix"
function accepted(reply: NonNullable<PreviousFinding["reply"]>): string {
  return `dismissed by ${reply.by}${reply.words ? `: ${reply.words}` : ""}`
}

function fileOf(entry: PreviousFinding): string | null {
  return entry.trace?.file ?? entry.file
}

function lineOf(entry: PreviousFinding): number | null {
  return entry.trace ? entry.trace.line : entry.line
}

function samePlace(entry: PreviousFinding, finding: Finding): boolean {
  if (fileOf(entry) !== finding.file) return false
  const line = lineOf(entry)
  if (line === null || finding.line === null) return line === finding.line && entry.line === null
  return Math.abs(line - finding.line) <= fixWindowLines
}

function sameMeaning(entry: PreviousFinding, finding: Finding): boolean {
  if (entry.category && normalizeCategory(entry.category) === normalizeCategory(finding.category)) return true
  const before = words(entry.title)
  const after = words(finding.title)
  if (before.size === 0 || after.size === 0) return false
  const shared = [...before].filter((word) => after.has(word)).length
  return shared / Math.min(before.size, after.size) >= 0.5
}

function nearest(finding: Finding, candidates: PreviousFinding[]): PreviousFinding | undefined {
  const distance = (entry: PreviousFinding) => Math.abs((lineOf(entry) ?? 0) - (finding.line ?? 0))
  return [...candidates].sort((a, b) => distance(a) - distance(b))[0]
}

function words(title: string): Set<string> {
  return new Set(
    comparableText(title)
      .split(/[^\p{L}\p{N}]+/u)
      .filter((word) => word.length >= 3 && !stopWords.has(word)),
  )
}

const stopWords = new Set([
  "the",
  "and",
  "for",
  "from",
  "with",
  "into",
  "this",
  "that",
  "not",
  "are",
  "was",
  "has",
  "have",
])
