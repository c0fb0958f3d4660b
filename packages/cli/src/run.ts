import { existsSync } from "node:fs"
import { mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import {
  type CoordinatorResult,
  childEnv,
  describeAttempt,
  missingProviderKeys,
  ProviderKeyMissingError,
  parseSubmission,
  providerKeyVariables,
  providerOf,
  runCoordinator,
  type Submission,
  submitReviewTool,
  workDirVariable,
  workFiles,
} from "@opencode-reviewer/core"
import { findOpencodeBinary, opencodeHomeEnv, prepareOpencodeHome } from "@opencode-reviewer/opencode/binary"
import { type RunEvent, stepFinishOf, toolUseOf } from "@opencode-reviewer/opencode/events"
import { otelPassThrough } from "@opencode-reviewer/tracing"
import { ReviewRunError } from "./errors"
import type { Io } from "./io"
import type { Prepared } from "./prepare"
import { progress, tailProgress } from "./progress"

/** What the coordinator run produced, before it becomes review.json. */
export interface CoordinatorOutcome {
  result: CoordinatorResult
  /** The raw submission the comment server recorded, or null when the coordinator never called it. */
  submission: Submission | null
  durationMs: number
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

  const submitted = submittedWatch(submissionFile)
  const tail = tailProgress(join(plan.workDir, workFiles.progress), io)
  await rm(tail.file, { force: true })
  let result: CoordinatorResult
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
      stopWhen: (event) => submitted.stopAt(event),
      shouldStop: () => submitted.overdue(),
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

/** How long the run may go on after submission.json appeared without the submit step ending. */
const submitGraceMs = 10_000

/**
 * When the coordinator's run is over: at the `step_finish` that follows a submit_review call which
 * recorded the review, so that step's tokens are counted (the runtime plugin holds the closing turn
 * OpenCode would start next). If that step never ends, the run stops `submitGraceMs` after the
 * submission was written.
 */
export function submittedWatch(submissionFile: string, now: () => number = () => performance.now()) {
  let submitted = false
  let seenAt: number | null = null
  return {
    stopAt(event: RunEvent): boolean {
      if (toolUseOf(event)?.tool === submitReviewTool && existsSync(submissionFile)) submitted = true
      return submitted && stepFinishOf(event) !== null
    },
    overdue(): boolean {
      if (seenAt === null) seenAt = existsSync(submissionFile) ? now() : null
      return seenAt !== null && now() - seenAt >= submitGraceMs
    },
  }
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
