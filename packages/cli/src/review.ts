import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import {
  buildReviewRecord,
  type Config,
  type CoordinatorResult,
  childEnv,
  describeAttempt,
  findOpencodeBinary,
  missingProviderKeys,
  opencodeHomeEnv,
  ProviderKeyMissingError,
  parsePlanFacts,
  parseProgressLine,
  parseReview,
  parseSpawnMetadata,
  parseSubmission,
  plural,
  prepareOpencodeHome,
  priceOf,
  providerKeyVariables,
  providerOf,
  type Review,
  ReviewError,
  type ReviewerOutcome,
  type ReviewRecord,
  type RunEvent,
  reportFiles,
  runCoordinator,
  type SpawnMetadata,
  type Submission,
  submitReviewTool,
  tallyUsage,
  tools,
  type UsageItem,
  workDirVariable,
  workFiles,
  writeReports,
} from "@opencode-reviewer/core"
import { describePublishResult, type PublishResult } from "@opencode-reviewer/gitlab"
import { publishLocal } from "@opencode-reviewer/local"
import { otelPassThrough } from "@opencode-reviewer/tracing"
import packageJson from "../package.json" with { type: "json" }
import type { Io, Prepared } from "./main"

/** What the coordinator run produced, before it becomes review.json. */
export interface CoordinatorOutcome {
  result: CoordinatorResult
  /** The raw submission the comment server recorded, or null when the coordinator never called it. */
  submission: Submission | null
  durationMs: number
}

/** The review was done, but publishing it on the merge request failed; review.json has it. */
export class ReviewPublishError extends ReviewError<{ hint: string }> {
  constructor(cause: unknown) {
    super(
      "ReviewPublishError",
      `the review was done but could not be published: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        hint: "review.json, review.md and the reports in the output dir hold the review; re-run the job to publish it",
      },
      { cause },
    )
  }
}

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

/** The review could not be produced; the message names every attempt. */
export class ReviewRunError extends ReviewError<{ attempts: string[]; hint: string | null }> {
  constructor(message: string, attempts: string[], hint: string | null = null) {
    super("ReviewRunError", message, { attempts, hint })
  }
}

/**
 * Runs the coordinator for a prepared plan in an isolated OpenCode home, with the sanitised
 * environment and live progress on stderr, and returns what it submitted.
 */
export async function runReview(prepared: Prepared, io: Io): Promise<CoordinatorOutcome> {
  const { plan, config, log } = prepared
  const started = performance.now()
  // A key that is certainly missing fails here, in a second, with what to set; not as a 401 later.
  const missing = missingProviderKeys({
    config: plan.assembly.config,
    agents: plan.agents,
    env: io.env,
    authenticated: await storedCredentials(io.env.OPENCODE_REVIEWER_AUTH_FILE),
  })
  if (missing.length > 0) throw new ProviderKeyMissingError(missing)
  const home = await prepareOpencodeHome(join(prepared.outputDir, "opencode-home"))
  const submissionFile = join(plan.workDir, workFiles.submission)
  await rm(submissionFile, { force: true })
  // /fullreview passes the user's own OpenCode credentials (`opencode auth login`) for this run
  // only; the copy is removed when the run ends. CI never sets this.
  const auth = await lendAuth(io.env.OPENCODE_REVIEWER_AUTH_FILE, home.data)
  const models = plan.agents.flatMap((agent) => agent.models)
  const { env, dropped } = childEnv({
    parent: io.env,
    config: plan.assembly.config,
    models,
    // OpenCode exports its own spans only when the user asks for it (config tracing.opencode).
    extra: {
      ...otelPassThrough(io.env, config.tracing.opencode),
      ...plan.assembly.env,
      ...opencodeHomeEnv(home),
      [workDirVariable]: plan.workDir,
    },
  })
  log.debug({ dropped }, "environment variables withheld from the opencode child")
  const coordinator = plan.agents.find((agent) => agent.role === "coordinator")!
  const reviewers = plan.agents.filter((agent) => agent.role === "reviewer").map((agent) => agent.name)
  io.stderr(
    `review: ${plan.tier} tier, ${reviewers.length} reviewers (${reviewers.join(", ")}), coordinator on ${coordinator.models[0]}\n`,
  )

  const tail = tailProgress(join(plan.workDir, workFiles.progress), io)
  await rm(tail.file, { force: true })
  let result: Awaited<ReturnType<typeof runCoordinator>>
  try {
    result = await runCoordinator({
      binary: findOpencodeBinary(io.env, import.meta.url),
      repoDir: prepared.repoDir,
      title: `opencode-reviewer: ${prepared.change.mergeRequest.title}`.slice(0, 120),
      prompt: new Uint8Array(await readFile(plan.promptFile)),
      config: plan.assembly.config,
      configFile: plan.configFile,
      models: coordinator.models,
      env,
      coordinatorMinutes: config.limits.coordinatorMinutes,
      heartbeatSeconds: config.limits.heartbeatSeconds,
      log: log.child({ stage: "coordinator" }),
      onEvent: (event) => progress(event, io, tail.seen()),
      stopWhen: (event) =>
        event.type === "tool_use" && event.part?.tool === submitReviewTool && existsSync(submissionFile),
      shouldStop: () => existsSync(submissionFile),
      onProgress: (line) => io.stderr(`review: ${line}\n`),
    })
  } finally {
    tail.stop()
    await auth.release()
  }
  const submission = await readSubmission(submissionFile)
  const durationMs = Math.round(performance.now() - started)
  if (!result.ok && submission === null) {
    const attempts = result.attempts.map((attempt) => `${attempt.model}: ${describeAttempt(attempt)}`)
    const refused = authRefusal(result, plan.assembly.config)
    const headline = refused
      ? `an authentication problem stopped the review: ${refused.what}`
      : "the coordinator could not finish the review"
    throw new ReviewRunError(`${headline}:\n  ${attempts.join("\n  ")}`, attempts, refused?.hint ?? hintFor(result))
  }
  return { result, submission, durationMs }
}

// The provider ids of the OpenCode credentials /fullreview lends (auth.json: provider id → credential).
async function storedCredentials(source: string | undefined): Promise<string[]> {
  if (!source) return []
  const text = await readFile(source, "utf8").catch(() => null)
  try {
    const parsed: unknown = text === null ? null : JSON.parse(text)
    return parsed && typeof parsed === "object" ? Object.keys(parsed) : []
  } catch {
    return []
  }
}

async function lendAuth(source: string | undefined, dataDir: string): Promise<{ release(): Promise<void> }> {
  const none = { release: async () => undefined }
  if (!source) return none
  const text = await readFile(source, "utf8").catch(() => null)
  if (text === null) return none
  const target = join(dataDir, "opencode", "auth.json")
  await mkdir(dirname(target), { recursive: true })
  await writeFile(target, text, { mode: 0o600 })
  return { release: () => rm(target, { force: true }) }
}

async function readSubmission(file: string): Promise<Submission | null> {
  const text = await readFile(file, "utf8").catch(() => null)
  if (text === null) return null
  const parsed = parseSubmission(text)
  if (!parsed.ok)
    throw new ReviewRunError(
      parsed.error,
      [],
      "the comment server and the CLI come from different installs: reinstall opencode-reviewer",
    )
  return parsed.value
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
  const reviewers = reviewerOutcomes(outcome.result)
  const breakGlass = prepared.provider.breakGlass?.(prepared.config.breakGlass) ?? null
  const record = buildReviewRecord({
    review,
    plan: planFacts.value,
    reviewers: reviewers.map(({ name, status, error, findings }) => ({ name, status, error, findings })),
    usage: usageOf(outcome.result, prepared.config),
    durationMs: outcome.durationMs,
    breakGlass: breakGlass !== null,
    injectionSuspected: plan.injection.length > 0,
    unjudgedFindings: unjudgedFindings(outcome.result),
    unread: prepared.change.unreviewed ?? [],
    previous: prepared.change.previousFindings ?? [],
    // Findings plugins established by code while planning: facts that join the coordinator's.
    codeFindings: planFacts.value.findings ?? [],
  })
  if (breakGlass)
    record.notes.push(`break glass requested by ${breakGlass.by}${breakGlass.at ? ` at ${breakGlass.at}` : ""}`)
  for (const call of spawnCalls(outcome.result))
    if (call.error) record.notes.unshift(`spawn_reviewers could not run: ${call.error}`)
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
  const record = buildReviewRecord({
    review: { summary, findings: [], answer: null },
    plan: { ...planFacts.value, agents: planFacts.value.agents.filter((agent) => agent.role === "coordinator") },
    reviewers: [],
    durationMs: 0,
    unread: prepared.change.unreviewed ?? [],
    breakGlass: prepared.provider.breakGlass?.(prepared.config.breakGlass) != null,
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
  const result = await prepared.provider
    .publish(record, { outputDir: prepared.outputDir, write: io.stdout })
    .catch((error: unknown) => {
      throw new ReviewPublishError(error)
    })
  if (prepared.provider.name === "gitlab")
    io.stderr(describePublishResult(result as PublishResult).replace(/\n?$/, "\n"))
  return record
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
function reviewerOutcomes(result: CoordinatorResult): ReviewerOutcome[] {
  const latest = new Map<string, ReviewerOutcome>()
  for (const call of spawnCalls(result)) for (const outcome of call.reviewers) latest.set(outcome.name, outcome)
  return [...latest.values()]
}

// Findings a call left out of its output to fit OpenCode's tool-output limit: the coordinator never saw them.
function unjudgedFindings(result: CoordinatorResult): number {
  return spawnCalls(result).reduce((sum, call) => sum + call.cut, 0)
}

// Every coordinator step and every spawn_reviewers call was paid for, even when the coordinator
// was retried afterwards; units OpenCode reports no cost for are priced from the config.
function usageOf(result: CoordinatorResult, config: Config) {
  const items: UsageItem[] = [
    ...result.steps.map((step) => ({ agent: step.agent, model: step.model, tokens: step, costUsd: step.costUsd })),
    ...spawnCalls(result).flatMap((call) =>
      call.reviewers.map((report) => ({
        agent: report.name,
        model: report.model,
        tokens: report.tokens,
        costUsd: report.costUsd,
      })),
    ),
  ]
  return tallyUsage(items, (model) => priceOf(config, model))
}

function hintFor(result: CoordinatorResult): string | null {
  const last = result.attempts.at(-1)
  if (last?.error?.name === "ContextOverflowError")
    return "the change is too large for the coordinator's model: raise the model or narrow the change"
  return null
}

// A 401/403 from the provider: name the provider as the config knows it and the variable that
// holds its key, which is what the person has to fix.
function authRefusal(
  result: CoordinatorResult,
  config: { provider?: Record<string, { options?: Record<string, unknown> }> },
): { what: string; hint: string } | null {
  const last = result.attempts.at(-1)
  const status = last?.error?.statusCode
  if (!last || (status !== 401 && status !== 403)) return null
  const provider = providerOf(last.model) ?? last.model
  const apiKey = config.provider?.[provider]?.options?.apiKey
  const reference = typeof apiKey === "string" ? /\{env:([A-Za-z_][A-Za-z0-9_]*)\}/.exec(apiKey)?.[1] : undefined
  const variables = reference ? [reference] : [...(providerKeyVariables[provider] ?? [])]
  const where = last.error?.provider ? ` at ${last.error.provider}` : ""
  const what = `provider ${provider}${where} refused the credentials (HTTP ${status}) for ${last.model}`
  const fix =
    variables.length > 0
      ? `set ${variables.join(" or ")} to a valid key for provider ${provider}`
      : typeof apiKey === "string"
        ? `provider.${provider}.options.apiKey in the config holds a key the provider refuses: replace it`
        : `give provider ${provider} a key (provider.${provider}.options.apiKey, e.g. "{env:MY_KEY}")`
  return {
    what,
    hint: `${fix}${status === 403 ? ", one that may use this model" : ""}; in CI, a masked variable of the project or group`,
  }
}

// Child sessions are invisible in the parent's JSONL; the spawn_reviewers tool result carries each
// reviewer's outcome, so that is where per-reviewer progress comes from.
function progress(event: RunEvent, io: Io, live: boolean): void {
  if (event.type !== "tool_use") return
  const part = event.part as { tool?: string; state?: { status?: string; metadata?: unknown } } | undefined
  if (part?.tool !== tools.spawnReviewers) {
    if (part?.tool) io.stderr(`review: coordinator used ${part.tool} (${part.state?.status ?? "?"})\n`)
    return
  }
  // The live progress file already told each reviewer's story; this is the fallback without it.
  if (live) return
  const metadata = parseSpawnMetadata(part.state?.metadata)
  if (!metadata.ok) return void io.stderr(`review: ${metadata.error}\n`)
  for (const reviewer of metadata.value.reviewers) {
    const detail =
      reviewer.status === "done" ? plural(reviewer.findings.length, "finding") : `failed: ${reviewer.error}`
    io.stderr(`review:   ${reviewer.name.padEnd(14)} ${detail}\n`)
  }
}

/** Follows the runtime's progress file while the coordinator runs and prints each reviewer's start and end. */
function tailProgress(file: string, io: Io): { file: string; seen(): boolean; stop(): void } {
  let offset = 0
  let pending = ""
  let lines = 0
  const read = () => {
    let size = 0
    try {
      size = statSync(file).size
    } catch {
      return
    }
    if (size <= offset) return
    const handle = openSync(file, "r")
    try {
      const buffer = Buffer.alloc(size - offset)
      readSync(handle, buffer, 0, buffer.length, offset)
      offset = size
      pending += buffer.toString("utf8")
    } finally {
      closeSync(handle)
    }
    const complete = pending.split("\n")
    pending = complete.pop() ?? ""
    for (const line of complete) {
      const entry = parseProgress(line)
      if (!entry) continue
      lines += 1
      io.stderr(`review: ${entry}\n`)
    }
  }
  const timer = setInterval(read, 200)
  return {
    file,
    seen: () => {
      read()
      return lines > 0
    },
    stop() {
      clearInterval(timer)
      read()
    },
  }
}

function parseProgress(line: string): string | null {
  const parsed = parseProgressLine(line)
  if (!parsed.ok) return null
  const entry = parsed.event
  if (entry.event === "reviewers-start") return `running ${entry.reviewers.join(", ")}`
  const name = entry.name.padEnd(14)
  if (entry.event === "reviewer-start")
    return entry.attempt > 1 ? `  ${name} failing back to ${entry.model}` : `  ${name} started on ${entry.model}`
  return entry.status === "done"
    ? `  ${name} done, ${plural(entry.findings, "finding")}`
    : `  ${name} FAILED: ${entry.error}`
}
