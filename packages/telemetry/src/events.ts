import type { ReviewRecord } from "@opencode-reviewer/core/judge/review-record"
import { Decision } from "@opencode-reviewer/core/model/finding"
import { UsageEntry } from "@opencode-reviewer/core/model/usage"
import { Tier } from "@opencode-reviewer/core/plan/risk"
import * as z from "zod"

// Every schema is a plain (stripping) z.object: a field nobody listed here — a prompt, a diff, a
// token someone spread into an event by mistake — never reaches the tracker endpoint.

/** Token counts and cost of one agent or model (review.json's usage entry); counts only, never text. */
export const TrackedUsage = UsageEntry
export type TrackedUsage = UsageEntry

/** Counts of findings by severity. */
export const SeverityCounts = z.object({
  critical: z.number().int().nonnegative(),
  warning: z.number().int().nonnegative(),
  suggestion: z.number().int().nonnegative(),
})
export type SeverityCounts = z.infer<typeof SeverityCounts>

/** A review job started: which repository and merge request, at which risk tier, with which agents. */
export const JobStartEvent = z.object({
  type: z.literal("job-start"),
  repo: z.object({
    id: z.union([z.string(), z.number()]),
    url: z.string().transform(withoutCredentials).optional(),
  }),
  mergeRequestIid: z.number().int().nullable(),
  tier: Tier,
  agents: z.array(z.string()),
})
export type JobStartEvent = z.input<typeof JobStartEvent>

/** A review job finished: its decision and the numbers behind it (counts, tokens, cost; no text). */
export const JobEndEvent = z.object({
  type: z.literal("job-end"),
  decision: Decision,
  tier: Tier.optional(),
  durationMs: z.number().nonnegative(),
  breakGlass: z.boolean(),
  injectionSuspected: z.boolean(),
  findings: z.object({
    total: z.number().int().nonnegative(),
    bySeverity: SeverityCounts,
    byReviewer: z.record(z.string(), SeverityCounts),
  }),
  failedReviewers: z.array(z.string()),
  usage: z.object({
    byAgent: z.record(z.string(), TrackedUsage),
    byModel: z.record(z.string(), TrackedUsage),
    costUsd: z.number().nonnegative(),
  }),
})
export type JobEndEvent = z.input<typeof JobEndEvent>

/** Someone broke the glass on a merge request: the review approves whatever it finds. */
export const BreakGlassEvent = z.object({
  type: z.literal("break-glass"),
  by: z.string(),
})
export type BreakGlassEvent = z.input<typeof BreakGlassEvent>

/** A stage of the job failed; the message is shortened and scrubbed of anything that looks like a secret. */
export const ErrorEvent = z.object({
  type: z.literal("error"),
  stage: z.string(),
  message: z.string().transform(scrubMessage),
})
export type ErrorEvent = z.input<typeof ErrorEvent>

/** Everything the tracker accepts. */
export const TrackerEvent = z.discriminatedUnion("type", [JobStartEvent, JobEndEvent, BreakGlassEvent, ErrorEvent])
export type TrackerEvent = z.input<typeof TrackerEvent>

/**
 * The JSON body posted for one event: the event's own fields plus when, for which job, and its
 * 1-based sequence number in the job (a gap tells the endpoint that events were lost).
 */
export type TrackerPayload = z.output<typeof TrackerEvent> & PayloadMeta

/** The fields the tracker adds to every event. */
export interface PayloadMeta {
  at: string
  jobId: string
  seq: number
}

/** The `job-end` event of a finished review: counts per reviewer and severity, usage per agent and model. */
export function jobEndEvent(record: ReviewRecord): JobEndEvent {
  const bySeverity = emptyCounts()
  const byReviewer: Record<string, SeverityCounts> = {}
  for (const finding of record.findings) {
    bySeverity[finding.severity] += 1
    const counts = (byReviewer[finding.reviewer] ??= emptyCounts())
    counts[finding.severity] += 1
  }
  return {
    type: "job-end",
    decision: record.decision,
    tier: record.tier,
    durationMs: record.durationMs,
    breakGlass: record.breakGlass,
    injectionSuspected: record.injectionSuspected,
    findings: { total: record.findings.length, bySeverity, byReviewer },
    failedReviewers: record.coverage.failedReviewers.map((failure) => failure.name),
    usage: {
      byAgent: mapUsage(record.usage.byAgent),
      byModel: mapUsage(record.usage.byModel),
      costUsd: record.usage.costUsd,
    },
  }
}

/** Validates an event and builds its payload, dropping every field the schema does not list. */
export function buildPayload(
  event: TrackerEvent,
  meta: PayloadMeta,
): { ok: true; payload: TrackerPayload } | { ok: false; error: string } {
  const parsed = TrackerEvent.safeParse(event)
  if (!parsed.success) {
    return {
      ok: false,
      error: parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; "),
    }
  }
  return { ok: true, payload: { ...parsed.data, at: meta.at, jobId: meta.jobId, seq: meta.seq } }
}

/** A URL with its user and password removed (CI clone URLs carry the job token there). */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.username === "" && parsed.password === "") return url
    parsed.username = ""
    parsed.password = ""
    return parsed.toString()
  } catch {
    return url.replace(/\/\/[^/@\s]*@/, "//")
  }
}

/** An error message cut to a few hundred characters, with bearer tokens, known token shapes and URL credentials replaced. */
export function scrubMessage(message: string): string {
  const scrubbed = secretPatterns.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), message)
  return scrubbed.length > maxMessage ? `${scrubbed.slice(0, maxMessage)}…` : scrubbed
}

const maxMessage = 500

const secretPatterns: Array<[RegExp, string]> = [
  [/(\/\/)[^/@\s:]+:[^/@\s]+@/g, "$1[redacted]@"],
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 [redacted]"],
  [/\b(glpat|gldt|glrt|glptt|glcbt|glsoat|ghp|gho|ghs|github_pat|xox[abpr])[-_][A-Za-z0-9_-]{8,}/g, "[redacted]"],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, "[redacted]"],
  [/((?:api[_-]?key|token|secret|password|private[_-]?token)["']?\s*[:=]\s*["']?)[^\s"'&,;]+/gi, "$1[redacted]"],
]

function emptyCounts(): SeverityCounts {
  return { critical: 0, warning: 0, suggestion: 0 }
}

function mapUsage(table: Record<string, UsageEntry>): Record<string, TrackedUsage> {
  return Object.fromEntries(
    Object.entries(table).map(([name, entry]) => [
      name,
      {
        input: entry.input,
        output: entry.output,
        cacheRead: entry.cacheRead,
        cacheWrite: entry.cacheWrite,
        costUsd: entry.costUsd,
      },
    ]),
  )
}
