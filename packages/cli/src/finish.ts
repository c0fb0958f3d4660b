import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import {
  type BreakGlassOutcome,
  buildReviewRecord,
  type Config,
  type CoordinatorResult,
  describeAttempt,
  parsePlanFacts,
  parseProgressLine,
  parseReview,
  parseSpawnMetadata,
  priceOf,
  type Review,
  ReviewError,
  type ReviewerOutcome,
  type ReviewRecord,
  reportFiles,
  type SpawnMetadata,
  splitAlreadyRaised,
  tallyUsage,
  tools,
  type UsageItem,
  workFiles,
  writeReports,
} from "@opencode-reviewer/core"
import { publishLocal } from "@opencode-reviewer/local"
import packageJson from "../package.json" with { type: "json" }
import { ReviewPublishError, ReviewRunError } from "./errors"
import type { Io } from "./io"
import type { Prepared } from "./prepare"
import type { CoordinatorOutcome } from "./run"
import { verifyFindings } from "./verify"

/** The files a review writes into the output dir; a run removes them first, so none is left from an earlier run. */
export const reviewOutputs = [
  "review.json",
  "review.md",
  "review-error.json",
  reportFiles.codeQuality,
  reportFiles.sarif,
] as const

/** Removes an earlier run's review outputs, so a failed run can never leave a stale review.json behind. */
export async function clearReviewOutputs(outputDir: string): Promise<void> {
  await Promise.all(reviewOutputs.map((name) => rm(join(outputDir, name), { force: true })))
}

/**
 * When no review could be produced: `review-error.json` and a `review.md` that say what happened
 * and what to do, then the provider's word on the merge request (a "could not run" summary, the
 * bot's approval revoked). A review that was done but not published keeps its outputs.
 */
export async function reportFailure(prepared: Prepared, error: unknown, io: Io): Promise<void> {
  const message = error instanceof Error ? error.message : String(error)
  const hint = error instanceof ReviewError && typeof error.data.hint === "string" ? error.data.hint : null
  const name = error instanceof Error ? error.name : "Error"
  const record = {
    error: name,
    message,
    hint,
    head: prepared.change.mergeRequest.headSha,
    at: new Date().toISOString(),
  }
  await mkdir(prepared.outputDir, { recursive: true })
  await writeFile(join(prepared.outputDir, "review-error.json"), JSON.stringify(record, null, 2) + "\n")
  if (error instanceof ReviewPublishError) return
  const markdown = [
    "# Code review: could not run",
    "",
    "Nothing was reviewed.",
    "",
    "~~~text",
    message.replace(/~{3,}/g, "~~"),
    "~~~",
    "",
  ]
  if (hint) markdown.push(`**What to do:** ${hint}`, "")
  await writeFile(join(prepared.outputDir, "review.md"), markdown.join("\n"))
  const lines = (await prepared.provider.publishFailure?.({ message, hint }).catch(() => [])) ?? []
  for (const line of lines) io.stderr(`${line}\n`)
}

/**
 * Turns the coordinator's outcome into review.json and the local reports: the review comes from
 * the comment server's record or, failing that, from a `<review>` block in the final text.
 */
export async function finishReview(prepared: Prepared, outcome: CoordinatorOutcome, io: Io): Promise<ReviewRecord> {
  const { plan } = prepared
  const review = outcome.submission?.review ?? reviewFromText(outcome.result.finalText)
  if (review === null) {
    const attempts = outcome.result.attempts.map((attempt) => `${attempt.model}: ${describeAttempt(attempt)}`)
    throw new ReviewRunError(
      "the coordinator ended without submitting a review (no submit_review call and no <review> block in its answer)",
      attempts,
      "run with --verbose to see the coordinator's events; the work dir keeps its prompt and config",
    )
  }
  const planFacts = parsePlanFacts(await readFile(plan.planFile, "utf8"))
  if (!planFacts.ok) throw new ReviewRunError(`plan.json is unreadable: ${planFacts.error}`, [])
  // Parsed once: every use below reads the same calls.
  const calls = spawnCalls(outcome.result)
  const reviewers = reviewerOutcomes(calls)
  const breakGlass = await readBreakGlass(prepared)
  // What a person already said on the change is not said again (checked against the comment's place).
  const raised = splitAlreadyRaised(review.findings, prepared.change.comments)
  // A critical blocks the merge only once a verifier has confirmed it against the code.
  const verified = await verifyFindings(prepared, { ...review, findings: raised.kept }, io)
  const record = buildReviewRecord({
    review: verified.review,
    plan: planFacts.value,
    reviewers: reviewers.map(({ name, status, error, findings }) => ({ name, status, error, findings })),
    usage: usageOf(
      outcome.result,
      [...calls.flatMap((call) => call.reviewers), ...(await reviewerEnds(plan.workDir))],
      prepared.config,
      verified.usage,
    ),
    durationMs: outcome.durationMs,
    breakGlass: breakGlass.honoured !== null,
    breakGlassRequests: breakGlass,
    injectionSuspected: plan.injection.length > 0,
    unjudgedFindings: unjudgedFindings(calls),
    unread: prepared.change.unreviewed ?? [],
    previous: prepared.change.previousFindings ?? [],
    // Findings plugins established by code while planning: facts that join the coordinator's.
    codeFindings: planFacts.value.findings ?? [],
  })
  record.notes.push(...verified.notes)
  for (const [index, by] of raised.raised) {
    const finding = verified.review.findings[index]!
    const entry = record.findings.find(
      (candidate) =>
        candidate.alreadyRaised === undefined &&
        candidate.file === finding.file &&
        candidate.line === finding.line &&
        candidate.title === finding.title,
    )
    if (entry) entry.alreadyRaised = by
  }
  record.notes.push(...raised.notes)
  for (const call of calls) if (call.error) record.notes.unshift(`spawn_reviewers could not run: ${call.error}`)
  return publish(prepared, record, io)
}

/** review.json for a change with nothing a reviewer could read: no model is called, and it says so. */
export async function finishEmptyReview(prepared: Prepared, io: Io): Promise<ReviewRecord> {
  const { plan } = prepared
  const filtered = plan.files.filter((file) => file.noise !== null).length
  const summary =
    plan.files.length === 0
      ? "The change has no file changes; nothing was reviewed."
      : `Every changed file was filtered as noise (${filtered} file${filtered === 1 ? "" : "s"}: see coverage); no code was reviewed.`
  const planFacts = parsePlanFacts(await readFile(plan.planFile, "utf8"))
  if (!planFacts.ok) throw new ReviewRunError(`plan.json is unreadable: ${planFacts.error}`, [])
  const breakGlass = await readBreakGlass(prepared)
  const record = buildReviewRecord({
    review: { summary, findings: [], answer: null },
    plan: { ...planFacts.value, agents: planFacts.value.agents.filter((agent) => agent.role === "coordinator") },
    reviewers: [],
    durationMs: 0,
    unread: prepared.change.unreviewed ?? [],
    breakGlass: breakGlass.honoured !== null,
    breakGlassRequests: breakGlass,
    injectionSuspected: plan.injection.length > 0,
    previous: prepared.change.previousFindings ?? [],
    codeFindings: planFacts.value.findings ?? [],
  })
  return publish(prepared, record, io)
}

// Local outputs first (review.json, review.md, Code Quality, SARIF): they must exist even when posting
// to the merge request fails. Then the provider posts, and says what it did.
async function publish(prepared: Prepared, record: ReviewRecord, io: Io): Promise<ReviewRecord> {
  await publishLocal(record, { outputDir: prepared.outputDir, write: io.stdout })
  await writeReports(prepared.outputDir, record, { toolVersion: packageJson.version })
  const report = await prepared.provider
    .publish(record, { outputDir: prepared.outputDir, write: io.stdout })
    .catch((error: unknown) => {
      throw new ReviewPublishError(error)
    })
  for (const line of report.lines) io.stderr(`${line}\n`)
  return record
}

// Who broke the glass, and whose requests did not count (the provider asks the platform who may).
async function readBreakGlass(prepared: Prepared): Promise<BreakGlassOutcome> {
  return (await prepared.provider.breakGlass?.(prepared.config.breakGlass)) ?? { honoured: null, ignored: [] }
}

function reviewFromText(text: string): Review | null {
  if (!text.includes("<review")) return null
  const parsed = parseReview(text)
  return parsed.ok ? parsed.review : null
}

// Every completed spawn_reviewers call's metadata, checked against the protocol: a mismatch means
// the runtime plugin and the CLI disagree, which must fail loudly rather than read as "0 findings".
function spawnCalls(result: CoordinatorResult): SpawnMetadata[] {
  return result.toolUses
    .filter((use) => use.tool === tools.spawnReviewers && use.status === "completed")
    .map((use) => {
      const parsed = parseSpawnMetadata(use.metadata)
      if (!parsed.ok)
        throw new ReviewRunError(
          parsed.error,
          [],
          "the runtime plugin and the CLI come from different installs: reinstall opencode-reviewer",
        )
      return parsed.value
    })
}

// A coordinator may call spawn_reviewers more than once (a subset again, say): each reviewer's
// latest outcome counts, in first-run order. Every call's usage was paid for (usageOf).
function reviewerOutcomes(calls: readonly SpawnMetadata[]): ReviewerOutcome[] {
  const latest = new Map<string, ReviewerOutcome>()
  for (const call of calls) for (const outcome of call.reviewers) latest.set(outcome.name, outcome)
  return [...latest.values()]
}

// Findings a call left out of its output to fit OpenCode's tool-output limit: the coordinator never saw them.
function unjudgedFindings(calls: readonly SpawnMetadata[]): number {
  return calls.reduce((sum, call) => sum + call.cut, 0)
}

// Every coordinator step and every reviewer session was paid for, even when the coordinator was
// retried afterwards; units OpenCode reports no cost for are priced from the config.
function usageOf(
  result: CoordinatorResult,
  reports: readonly ReviewerSpend[],
  config: Config,
  extra: readonly UsageItem[] = [],
) {
  const items: UsageItem[] = [
    ...extra,
    ...result.steps.map((step) => ({ agent: step.agent, model: step.model, tokens: step, costUsd: step.costUsd })),
    ...reviewerUsage(reports),
  ]
  return tallyUsage(items, (model) => priceOf(config, model))
}

/** What one reviewer run spent, as spawn_reviewers metadata and progress.jsonl both report it. */
export type ReviewerSpend = Pick<ReviewerOutcome, "name" | "model" | "sessionIDs" | "tokens" | "costUsd">

/**
 * What the reviewers cost, each session once, from every report of a reviewer run: the
 * spawn_reviewers calls' metadata (a second call that joins the running reviewers reports the same
 * sessions again) and progress.jsonl's reviewer-end lines (which also cover reviewers no call
 * collected: they start with the coordinator's first model call, and a coordinator that failed back
 * or never called the tool still paid for them). Reviewers run again in new sessions count again.
 */
export function reviewerUsage(reports: readonly ReviewerSpend[]): UsageItem[] {
  const counted = new Set<string>()
  return reports.flatMap((report) => {
    if (report.sessionIDs.length > 0 && report.sessionIDs.every((id) => counted.has(id))) return []
    for (const id of report.sessionIDs) counted.add(id)
    return [{ agent: report.name, model: report.model, tokens: report.tokens, costUsd: report.costUsd }]
  })
}

// The reviewer-end lines of progress.jsonl; a missing file or a line this version cannot read
// (both only cost the usage of reviewers that no spawn_reviewers call reported) gives nothing.
async function reviewerEnds(workDir: string): Promise<ReviewerSpend[]> {
  const text = await readFile(join(workDir, workFiles.progress), "utf8").catch(() => "")
  return text.split("\n").flatMap((line) => {
    const parsed = line.trim() === "" ? null : parseProgressLine(line)
    return parsed?.ok && parsed.event.event === "reviewer-end" ? [parsed.event] : []
  })
}
