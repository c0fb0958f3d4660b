import type { ReviewFinding, ReviewRecord } from "../judge/review-record"
import { type ApplicableSuggestion, applicableSuggestion } from "../judge/suggestion"
import { compareSeverity, type Severity } from "../model/finding"
import type { Logger } from "../model/logger"
import type { DiffFile } from "../plan/diff"
import { type Anchor, encodeAnchor, markers, type PreparedBody } from "../report/markers"
import { neutralizeMarkdown, type PlatformName } from "../report/neutralize"

// What a provider's publisher does the same way on every platform: collect warnings and count
// neutralisations, tell which earlier thread a finding continues and what becomes of it, word the
// replies that close or reopen a thread, and find a break-glass phrase. The platform calls differ;
// these rules must not.

/** The warnings of one publication and how much neutralising changed, with the two helpers that fill them. */
export interface PublishLog {
  warnings: string[]
  /** How many quick actions, mentions and the like were neutralised in what was posted. */
  readonly neutralized: number
  /** A body to post: `prepareBody` of the platform, its changes counted. */
  prepare(text: string, list: [string, string][]): string
  /** Records a warning (with the error's message), and logs it. */
  warn(message: string, error?: unknown): void
}

export function createPublishLog(
  log: Logger,
  prepareBody: (text: string, list: [string, string][]) => PreparedBody,
): PublishLog {
  let neutralized = 0
  const warnings: string[] = []
  return {
    warnings,
    get neutralized() {
      return neutralized
    },
    prepare(text, list) {
      const prepared = prepareBody(text, list)
      neutralized += prepared.changes
      return prepared.body
    },
    warn(message, error) {
      const text = error === undefined ? message : `${message}: ${errorText(error)}`
      warnings.push(text)
      log.warn({ error: error === undefined ? undefined : errorText(error) }, message)
    },
  }
}

/** An error's message, for a warning line. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** The first 8 characters of a commit sha, as every posted text names a commit. */
export function shortSha(sha: string): string {
  return sha.slice(0, 8)
}

/**
 * Which earlier thread each finding continues: the one the record names (matched in core by the
 * coordinator's claim, fingerprint, title or traced place), else the first unclaimed thread with
 * the finding's fingerprint, so a re-run never opens a second thread for the same finding. Each
 * thread continues at most one finding.
 */
export function threadMatcher<T extends { fingerprint: string }>(
  findings: readonly ReviewFinding[],
  threads: ReadonlyMap<string, T>,
): (finding: ReviewFinding, fingerprint: string) => { id: string; thread: T } | undefined {
  const claimed = new Set(findings.flatMap((finding) => (finding.thread ? [finding.thread] : [])))
  return (finding, fingerprint) => {
    const id =
      finding.thread ??
      [...threads].find(([key, thread]) => thread.fingerprint === fingerprint && !claimed.has(key))?.[0]
    const thread = id === undefined ? undefined : threads.get(id)
    if (id === undefined || thread === undefined) return undefined
    claimed.add(id)
    return { id, thread }
  }
}

/**
 * What becomes of an earlier thread a finding continues: still open, so it stays; resolved by a
 * person, so it stays resolved, unless the finding got worse than the thread's severity, which
 * reopens it.
 */
export function continuationOf(
  thread: { resolved: boolean; severity: Severity | null },
  finding: Pick<ReviewFinding, "severity">,
): "open" | "reopen" | "resolved" {
  if (!thread.resolved) return "open"
  return thread.severity !== null && compareSeverity(finding.severity, thread.severity) < 0 ? "reopen" : "resolved"
}

/** The reply that reopens a resolved thread whose finding got worse. */
export function reopenText(finding: Pick<ReviewFinding, "severity" | "body">, was: Severity): string {
  return `Reopened: this is now **${finding.severity}** (it was ${was} when the thread was resolved).\n\n${finding.body.trim()}\n`
}

/** The earlier threads this review closes, with the reply each gets: fixed (its code changed) or dismissed by a person. */
export function closingReplies(
  record: Pick<ReviewRecord, "resolved" | "dismissed">,
  reviewedHead: string,
): { id: string; kind: "fixed" | "dismissed"; text: string }[] {
  return [
    ...record.resolved.map((entry) => ({
      id: entry.id,
      kind: "fixed" as const,
      text: `Fixed in ${shortSha(reviewedHead)}: the code at this line changed and the finding is no longer reported.\n`,
    })),
    ...record.dismissed.map((entry) => ({
      id: entry.id,
      kind: "dismissed" as const,
      text: `Dismissed, not fixed: ${entry.reason}.\n`,
    })),
  ]
}

/** Whether `text` contains `phrase`, ignoring case and runs of whitespace; an empty phrase is never found. */
export function hasPhrase(text: string, phrase: string): boolean {
  const wanted = normalizeSpace(phrase)
  return wanted !== "" && normalizeSpace(text).includes(wanted)
}

function normalizeSpace(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim()
}

/**
 * The first `bytes` of each file at a commit through a provider's API, for generated-file
 * detection: at most `limit` files, `workers` at a time; a file that cannot be read is left out.
 */
export async function readHeadsWith(
  read: (path: string) => Promise<string | null>,
  paths: readonly string[],
  options: { limit?: number; bytes?: number; workers?: number } = {},
): Promise<Map<string, string>> {
  const heads = new Map<string, string>()
  const queue = paths.slice(0, options.limit ?? 200)
  const worker = async () => {
    for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
      const text = await read(path).catch(() => null)
      if (text !== null) heads.set(path, text.slice(0, options.bytes ?? 1024))
    }
  }
  await Promise.all(Array.from({ length: options.workers ?? 8 }, worker))
  return heads
}

/**
 * The hidden markers on a finding's first comment: its fingerprint, severity, title and category
 * (base64url, so the next review can read them back), and where it was anchored on the new side
 * when it was (a comment on a removed line has no such place).
 */
export function findingMarkers(
  finding: Pick<ReviewFinding, "severity" | "title" | "category">,
  fingerprint: string,
  anchor: Anchor | null,
): [string, string][] {
  const list: [string, string][] = [
    [markers.finding, fingerprint],
    [markers.severity, finding.severity],
    [markers.title, Buffer.from(finding.title.slice(0, 300), "utf8").toString("base64url")],
    [markers.category, Buffer.from(finding.category.slice(0, 100), "utf8").toString("base64url")],
  ]
  if (anchor) list.push([markers.anchor, encodeAnchor(anchor)])
  return list
}

/**
 * A finding's suggestion as the platform's committable block, or null: it must apply to lines of
 * the diff (`applicableSuggestion`) and come through the platform's neutraliser unchanged, since a
 * changed line would commit something else than the reviewer wrote.
 */
export function postableSuggestion(
  finding: ReviewFinding,
  files: readonly DiffFile[],
  platform: PlatformName,
  render: (suggestion: ApplicableSuggestion) => string,
): { block: string; startLine: number } | null {
  const applicable = applicableSuggestion(finding, files)
  if (!applicable.ok) return null
  const block = render(applicable.suggestion)
  return neutralizeMarkdown(block, platform).text === block
    ? { block, startLine: applicable.suggestion.startLine }
    : null
}

/** A comment cut to the platform's length limit, saying where the whole review is. */
export function fitComment(text: string, maxLength: number): string {
  if (text.length <= maxLength) return text
  return `${text.slice(0, maxLength)}\n\n*(truncated: the full review is in the review.json artifact)*\n`
}
