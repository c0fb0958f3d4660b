import * as z from "zod"
import { type CodeFinding, Decision, Finding, normalizeCategory, Verification } from "../model/finding"
import { comparableText } from "../model/text"
import { ReviewUsage, reviewUsage, reviewUsageTotal, type UsageEntry } from "../model/usage"
import { Tier } from "../plan/risk"
import type { Review } from "../protocol/findings-xml"
import { PlanFile, PlanFileAgent, PlanFileEntry, type ProtocolRead, parsePlanFile } from "../protocol/plan-file"
import { assessCoverage, capForCoverage, type UnreadFile } from "./coverage"
import { decide, injectionLocations, mergeDuplicates } from "./decision"
import { carryOver, type PreviousFinding } from "./previous-findings"

/** Whether a finding is new in this review or was already raised by the previous one. */
export const FindingStatus = z.enum(["new", "persisting"])
export type FindingStatus = z.infer<typeof FindingStatus>

/** A finding as review.json records it: numbered ("f1"…), attributed to a reviewer, with its status. */
export const ReviewFinding = z.object({
  id: z.string(),
  reviewer: z.string(),
  severity: Finding.shape.severity,
  category: z.string(),
  file: z.string(),
  line: z.number().int().positive().nullable(),
  title: z.string(),
  body: z.string(),
  status: FindingStatus,
  /** The earlier inline thread this finding continues (persisting findings), else null. */
  thread: z.string().nullable(),
  /** A committable replacement, when the finding came with one (posted only where it applies). */
  suggestion: Finding.shape.suggestion,
  /** What the verifier said, for findings at or above the `verify` level (judge/verify.ts). */
  verification: Verification.optional(),
  /** A person's comment on the diff had already raised it (judge/already-raised.ts): not posted again as a thread. */
  alreadyRaised: z.object({ author: z.string(), file: z.string(), line: z.number().int() }).optional(),
})
export type ReviewFinding = z.infer<typeof ReviewFinding>

/** A finding of the previous review that this one no longer raises because its code changed: fixed. */
export const ResolvedFinding = z.object({
  id: z.string(),
  title: z.string(),
  file: z.string().nullable(),
  line: z.number().int().nullable(),
})
export type ResolvedFinding = z.infer<typeof ResolvedFinding>

/** A finding of the previous review that is closed or left open without being fixed, and why. */
export const PreviousFindingOutcome = ResolvedFinding.extend({ reason: z.string() })
export type PreviousFindingOutcome = z.infer<typeof PreviousFindingOutcome>

/**
 * What the review did not look at: noise files with their reason, reviewers that failed, whether
 * enough ran for the findings to speak for the change (`complete`), and reviewer findings the
 * coordinator never saw because they did not fit its tool output (`unjudgedFindings`).
 */
export const ReviewCoverage = z.object({
  /** Changed files a reviewer could read: not noise, not binary, and delivered by the provider. */
  reviewedFiles: z.number().int().nonnegative(),
  filtered: z.array(z.object({ path: z.string(), reason: z.string() })),
  failedReviewers: z.array(z.object({ name: z.string(), error: z.string() })),
  /** Changed files nobody could read (binary, or not delivered by the provider), with why. */
  unreviewed: z.array(z.object({ path: z.string(), reason: z.string() })).default([]),
  complete: z.boolean(),
  unjudgedFindings: z.number().int().nonnegative(),
})
export type ReviewCoverage = z.infer<typeof ReviewCoverage>

/**
 * `review.json` (docs/contracts.md#review-outputs): the original fields in their order, then the
 * additions: what became of the earlier threads that were not fixed (`dismissed`, `stillOpen`), the
 * decision's `reasons`, the coordinator's `summary` and `answer`, and `notes` (coverage gaps and
 * findings that cite files outside the diff).
 */
export const ReviewRecord = z.object({
  decision: Decision,
  tier: Tier,
  breakGlass: z.boolean(),
  injectionSuspected: z.boolean(),
  findings: z.array(ReviewFinding),
  resolved: z.array(ResolvedFinding),
  coverage: ReviewCoverage,
  usage: ReviewUsage,
  durationMs: z.number().nonnegative(),
  /** Earlier findings a person dismissed (won't fix, or argued and not reported again): closed, not fixed. */
  dismissed: z.array(PreviousFindingOutcome),
  /** Earlier findings not reported again that nothing shows were fixed: their threads stay open. */
  stillOpen: z.array(PreviousFindingOutcome),
  reasons: z.array(z.string()),
  summary: z.string(),
  answer: z.string().nullable(),
  notes: z.array(z.string()),
  /** Break-glass requests that did not count (their authors lack the access for it), with why. */
  breakGlassIgnored: z.array(z.object({ by: z.string(), at: z.string().nullable(), reason: z.string() })).default([]),
})
export type ReviewRecord = z.infer<typeof ReviewRecord>

/**
 * The parts of plan.json a review record needs, picked from the protocol's schema (a renamed field
 * there breaks this at compile time); other keys are ignored.
 */
export const PlanFacts = z.object({
  tier: PlanFile.shape.tier,
  files: z.array(
    PlanFileEntry.pick({ path: true, noise: true }).extend({ binary: PlanFileEntry.shape.binary.optional() }),
  ),
  agents: z.array(PlanFileAgent.pick({ name: true, role: true })),
  /** Reviewers the tier called for that the spend cap left out: they count as not finished. */
  skipped: PlanFile.shape.skipped.optional(),
  injection: PlanFile.shape.injection.optional(),
  /** Findings plugins established by code during planning. */
  findings: PlanFile.shape.findings.optional(),
  /** What the agents saw only in part (prompt.ts `Clip`): one note each, "`what`: `detail`". */
  clipped: PlanFile.shape.clipped.optional(),
})
export type PlanFacts = z.infer<typeof PlanFacts>

/** What one specialist produced: status "ok", "done" or "completed" means it finished; anything else is a failure. */
export interface ReviewerReport {
  name: string
  status: string
  error: string | null
  findings: readonly Finding[]
}

export type { PreviousFinding } from "./previous-findings"

/** Everything a review record is assembled from. */
export interface ReviewRecordInput {
  review: Review
  plan: PlanFacts
  reviewers: readonly ReviewerReport[]
  usage?: { byAgent?: Record<string, UsageEntry>; byModel?: Record<string, UsageEntry>; costUsd?: number }
  durationMs: number
  /** A person with the access for it broke the glass (see `breakGlassRequests` for who). */
  breakGlass: boolean
  /** Who broke the glass and whose requests did not count (review/access.ts `decideBreakGlass`). */
  breakGlassRequests?: {
    honoured: { by: string; at: string | null } | null
    ignored: readonly { by: string; at: string | null; reason: string }[]
  }
  /** Defaults to whether plan.json recorded injection attempts. */
  injectionSuspected?: boolean
  /** Reviewer findings left out of the coordinator's tool output to fit its limit (spawn_reviewers `cut`). */
  unjudgedFindings?: number
  /** Changed files the provider could not give the reviewers; each becomes a note, and many make the review incomplete. */
  unread?: readonly UnreadFile[]
  previous?: readonly PreviousFinding[]
  /**
   * Findings established by code (plan.json `findings`): facts, not model opinions. They join the
   * coordinator's findings, attributed to the plugin that made them; a coordinator finding on the
   * same file, line and category is dropped in their favour.
   */
  codeFindings?: readonly CodeFinding[]
}

/**
 * Assembles review.json: merges duplicate findings, computes the decision, numbers and attributes
 * the findings, marks them new or persisting against the previous review, and records coverage.
 * A planned reviewer without an outcome counts as failed ("did not run"), and so does one the spend
 * cap skipped. A finding's `verification` (set by the verifier stage) is kept, and a critical the
 * verifier disputed keeps the change from approval. Findings that cite a file outside the diff are
 * kept (the coordinator may cite context) and listed in `notes`, after one note per thing the
 * agents saw only in part (plan.json `clipped`).
 */
export function buildReviewRecord(input: ReviewRecordInput): ReviewRecord {
  const code = uniqueCodeFindings(input.codeFindings ?? [])
  const taken = new Set(code.map(({ finding }) => codeKey(finding)))
  const merged = [
    ...mergeDuplicates(input.review.findings).filter((finding) => !taken.has(codeKey(finding))),
    ...code.map(({ finding }) => finding),
  ]
  const failedReviewers = failures(input.plan, input.reviewers)
  // Matched against the earlier threads before deciding: a finding whose thread a person accepted
  // as it is ("won't fix") leaves the review unless it got worse.
  const carried = carryOver(merged, input.previous ?? [], { partial: failedReviewers.length > 0 })
  const kept = merged
    .map((finding, index) => ({ finding, index, code: index >= merged.length - code.length }))
    .filter(({ index }) => !carried.dropped.includes(index))
  const findings = kept.map(({ finding }) => finding)
  const judgedCount = kept.filter((entry) => !entry.code).length
  const injectionSuspected = input.injectionSuspected ?? (input.plan.injection ?? []).length > 0
  const planned = plannedReviewers(input.plan, input.reviewers)
  // A binary file has no text a reviewer could read: it is listed as not reviewed, never counted as read.
  const binary = input.plan.files.filter((file) => file.noise === null && file.binary === true)
  const unread: UnreadFile[] = [
    ...(input.unread ?? []),
    ...binary.map((file) => ({ path: file.path, reason: "binary file: there is no text diff to review" })),
  ]
  const unreadPaths = new Set(unread.map((file) => file.path))
  const reviewedFiles = input.plan.files.filter((file) => file.noise === null && !unreadPaths.has(file.path)).length
  const coverage = assessCoverage(planned, failedReviewers, {
    read: reviewedFiles,
    unread: unread.some((file) => file.files === null)
      ? null
      : unread.reduce((sum, file) => sum + (file.files ?? 1), 0),
  })
  const judgedVerdict = decide(findings, {
    injectionSuspected,
    injectionAt: injectionLocations(input.plan.injection ?? []),
    breakGlass: input.breakGlass,
    disputed: findings.filter(
      (finding) =>
        finding.verification?.status === "not_confirmed" &&
        finding.verification.originalSeverity === "critical" &&
        finding.severity !== "critical",
    ),
    dismissedCriticals: criticalsOf(carried.dismissed),
    openCriticals: criticalsOf(carried.stillOpen),
  })
  // Break glass is a human's decision and stands; otherwise what did not run cannot be approved.
  const verdict = input.breakGlass
    ? judgedVerdict
    : capForCoverage(judgedVerdict.decision, judgedVerdict.reasons, coverage)
  if (input.breakGlass && !coverage.complete)
    verdict.reasons.push(`the review is incomplete: ${coverage.reasons.join("; ")}`)
  const notes: string[] = []

  const coordinator = input.plan.agents.find((agent) => agent.role === "coordinator")?.name ?? "review_coordinator"
  const recorded: ReviewFinding[] = kept.map(({ finding, index: original }, index) => {
    const thread = carried.continues[original] ?? null
    return {
      id: `f${index + 1}`,
      reviewer:
        index < judgedCount
          ? attribute(finding, input.reviewers, coordinator)
          : code[original - (merged.length - code.length)]!.plugin,
      severity: finding.severity,
      category: finding.category,
      file: finding.file,
      line: finding.line,
      title: finding.title,
      body: finding.body,
      status: thread ? "persisting" : "new",
      thread,
      ...(finding.suggestion ? { suggestion: finding.suggestion } : {}),
      ...(finding.verification ? { verification: finding.verification } : {}),
    }
  })
  const brief = (entry: PreviousFinding) => ({ id: entry.id, title: entry.title, file: entry.file, line: entry.line })
  const resolved = carried.fixed.map(brief)

  for (const clip of input.plan.clipped ?? []) notes.push(`${clip.what}: ${clip.detail}`)
  notes.push(...carried.ignoredClaims)
  const inDiff = new Set(input.plan.files.map((file) => file.path))
  for (const finding of recorded) {
    if (!inDiff.has(finding.file)) notes.push(`${finding.id} cites ${finding.file}, which is not part of the change`)
  }

  if (failedReviewers.length > 0) {
    notes.unshift(
      `coverage is partial: ${failedReviewers.length} of ${planned.length} reviewers failed (${failedReviewers.map((failure) => failure.name).join(", ")})`,
    )
  }
  for (const file of unread) notes.push(`not reviewed: ${file.path} (${file.reason})`)
  const glass = input.breakGlassRequests
  if (input.breakGlass && glass?.honoured)
    notes.push(`break glass requested by ${glass.honoured.by}${glass.honoured.at ? ` at ${glass.honoured.at}` : ""}`)
  const unjudged = input.unjudgedFindings ?? 0
  if (unjudged > 0) {
    notes.push(
      `${unjudged} less severe reviewer finding${unjudged === 1 ? " was" : "s were"} left out of the coordinator's input to fit OpenCode's tool output limit and not judged`,
    )
  }

  return {
    decision: verdict.decision,
    tier: input.plan.tier,
    breakGlass: input.breakGlass,
    injectionSuspected,
    findings: recorded,
    resolved,
    coverage: {
      reviewedFiles,
      filtered: input.plan.files.flatMap((file) =>
        file.noise === null ? [] : [{ path: file.path, reason: file.noise }],
      ),
      failedReviewers,
      unreviewed: unread.map(({ path, reason }) => ({ path, reason })),
      complete: coverage.complete,
      unjudgedFindings: unjudged,
    },
    usage: usageOf(input.usage),
    durationMs: Math.max(0, Math.round(input.durationMs)),
    dismissed: carried.dismissed.map(({ previous, reason }) => ({ ...brief(previous), reason })),
    stillOpen: carried.stillOpen.map(({ previous, reason }) => ({ ...brief(previous), reason })),
    reasons: verdict.reasons,
    summary: input.review.summary,
    answer: input.review.answer,
    notes,
    breakGlassIgnored: (glass?.ignored ?? []).map(({ by, at, reason }) => ({ by, at, reason })),
  }
}

/** Reads plan.json text into the facts a review record needs; never throws. */
export function parsePlanFacts(text: string): ProtocolRead<PlanFacts> {
  return parsePlanFile(text, PlanFacts)
}

// The earlier critical findings among these outcomes, as the decision's reasons name them.
function criticalsOf(outcomes: readonly { previous: PreviousFinding; reason: string }[]) {
  return outcomes.flatMap(({ previous, reason }) =>
    previous.severity === "critical"
      ? [{ title: previous.title, file: previous.file, line: previous.line, reason }]
      : [],
  )
}

// Which specialist raised a final finding: the coordinator may have moved, merged or reworded it,
// so the match goes from the most to the least specific, then falls back to the category — unless
// the reviewer of that name failed, when the coordinator must have raised it itself.
function attribute(finding: Finding, reviewers: readonly ReviewerReport[], coordinator: string): string {
  const title = comparableText(finding.title)
  const category = normalizeCategory(finding.category)
  const tests: Array<(candidate: Finding) => boolean> = [
    (candidate) =>
      candidate.file === finding.file &&
      candidate.line === finding.line &&
      normalizeCategory(candidate.category) === category,
    (candidate) => candidate.file === finding.file && comparableText(candidate.title) === title,
    (candidate) => comparableText(candidate.title) === title,
    (candidate) => candidate.file === finding.file && candidate.line !== null && candidate.line === finding.line,
  ]
  for (const test of tests) {
    const reviewer = reviewers.find((outcome) => outcome.findings.some(test))
    if (reviewer) return reviewer.name
  }
  const named = reviewers.find((outcome) => outcome.name === category)
  return named && !finished.has(named.status) ? coordinator : category
}

// Code findings are facts: a model's finding at the same place and in the same category repeats one.
function codeKey(finding: Finding): string {
  return `${finding.file}\0${finding.line ?? ""}\0${normalizeCategory(finding.category)}`
}

function uniqueCodeFindings(findings: readonly CodeFinding[]): CodeFinding[] {
  const seen = new Set<string>()
  return findings.filter(({ finding }) => {
    const key = `${codeKey(finding)}\0${comparableText(finding.title)}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

// The reviewers the tier called for: those planned, those the spend cap skipped, and any that ran.
function plannedReviewers(plan: PlanFacts, outcomes: readonly ReviewerReport[]): string[] {
  const names = plan.agents.filter((agent) => agent.role === "reviewer").map((agent) => agent.name)
  for (const { name } of plan.skipped ?? []) if (!names.includes(name)) names.push(name)
  for (const outcome of outcomes) if (!names.includes(outcome.name)) names.push(outcome.name)
  return names
}

function failures(plan: PlanFacts, outcomes: readonly ReviewerReport[]): { name: string; error: string }[] {
  return plannedReviewers(plan, outcomes).flatMap((name) => {
    const outcome = outcomes.find((candidate) => candidate.name === name)
    if (outcome && finished.has(outcome.status)) return []
    if (outcome) return [{ name, error: outcome.error ?? outcome.status }]
    const skipped = plan.skipped?.find((entry) => entry.name === name)
    return [{ name, error: skipped?.reason ?? "did not run" }]
  })
}

const finished = new Set(["ok", "done", "completed"])

function usageOf(usage: ReviewRecordInput["usage"]): ReviewUsage {
  const byAgent = usage?.byAgent ?? {}
  const byModel = usage?.byModel ?? {}
  return reviewUsage({ byAgent, byModel, costUsd: usage?.costUsd ?? reviewUsageTotal({ byAgent, byModel }).costUsd })
}
