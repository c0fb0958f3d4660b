import { writeFile } from "node:fs/promises"
import { type OpencodeConfig, withDefaultAgentModel } from "@opencode-reviewer/opencode/config"
import {
  cutOffReason,
  errorEventOf,
  type JsonlLine,
  type RunEvent,
  readJsonl,
  type StepFinish,
  stepFinishOf,
  type ToolUse,
  textOf,
  toolUseOf,
} from "@opencode-reviewer/opencode/events"
import { spawnRun } from "@opencode-reviewer/opencode/run"
import { OpencodeStartError } from "../model/errors"
import type { Logger } from "../model/logger"
import { type ClassifiedError, classifyProviderError, retryableText } from "./provider-errors"

/** Tokens of one model step, as `step_finish` reports them. */
export interface StepUsage {
  agent: string
  model: string
  input: number
  output: number
  reasoning: number
  cacheRead: number
  cacheWrite: number
  costUsd: number
}

/** How one attempt of the coordinator ended. */
export interface CoordinatorAttempt {
  model: string
  outcome: "ok" | "error" | "length" | "crash" | "timeout" | "aborted"
  exitCode: number | null
  error: ClassifiedError | null
  durationMs: number
  stderrTail: string
}

/** Everything the CLI needs from the coordinator run: what happened, what it cost, what it said. */
export interface CoordinatorResult {
  ok: boolean
  attempts: CoordinatorAttempt[]
  steps: StepUsage[]
  /** Completed tool calls of the root session (spawn_reviewers metadata carries the reviewers). */
  toolUses: ToolUse[]
  /** The root session's final text (the last `text` event), for a review given without the tool. */
  finalText: string
  /** Lines that were not JSON events (kept for the log; never fatal). */
  badLines: number
}

/** Options of one coordinator run; nothing here is read from the environment. */
export interface CoordinatorOptions {
  binary: string
  repoDir: string
  title: string
  /** The bytes sent on stdin (never argv: a multi-megabyte prompt would hit E2BIG). */
  prompt: Uint8Array | string
  config: OpencodeConfig
  /** opencode.json on disk, rewritten on each hot-swap so the work dir shows what ran. */
  configFile: string | null
  /** The coordinator's model chain, primary first. */
  models: readonly string[]
  /** The sanitised child environment (see childEnv); OpenCode's own settings are added here. */
  env: Record<string, string>
  coordinatorMinutes: number
  heartbeatSeconds: number
  /** Most attempts in all (default: one per model in the chain, plus one). */
  maxAttempts?: number
  log: Logger
  signal?: AbortSignal
  onEvent?(event: RunEvent): void
  onProgress?(line: string): void
  /**
   * Ends the run successfully as soon as this returns true for an event. After submit_review the
   * coordinator has nothing left to say, but OpenCode would still send the whole conversation back
   * to the model for one more turn: stopping there saves that turn's time and tokens.
   */
  stopWhen?(event: RunEvent): boolean
  /** Polled every 100 ms: true ends the run successfully (e.g. once the submission file exists). */
  shouldStop?(): boolean
}

const killGraceMs = 5_000
const stderrKeep = 16_384

/**
 * Runs the coordinator: `opencode run --format json` with the prompt on stdin, reading JSONL as it
 * streams. An `error` event or a crash before any output fails back to the next model of the chain
 * (hot-swapped into the config) when the error is retryable; `length` retries the same model.
 */
export async function runCoordinator(options: CoordinatorOptions): Promise<CoordinatorResult> {
  const result: CoordinatorResult = { ok: false, attempts: [], steps: [], toolUses: [], finalText: "", badLines: 0 }
  const maxAttempts = options.maxAttempts ?? options.models.length + 1
  let index = 0
  while (result.attempts.length < maxAttempts && index < options.models.length) {
    options.signal?.throwIfAborted()
    const model = options.models[index]!
    const attempt = await runAttempt(model, options, result)
    result.attempts.push(attempt)
    options.log.info(
      { model, outcome: attempt.outcome, exitCode: attempt.exitCode, ms: attempt.durationMs },
      "coordinator attempt ended",
    )
    if (attempt.outcome === "ok") {
      result.ok = true
      return result
    }
    if (attempt.outcome === "timeout" || attempt.outcome === "aborted") return result
    if (attempt.outcome === "length") {
      options.onProgress?.(`coordinator answer was cut off (length) on ${model}; retrying`)
      continue
    }
    if (attempt.error?.verdict === "fatal") return result
    index += 1
    const next = options.models[index]
    if (next)
      options.onProgress?.(`coordinator failed on ${model} (${describeAttempt(attempt)}); failing back to ${next}`)
  }
  return result
}

/** A one-line account of an attempt's failure for people. */
export function describeAttempt(attempt: CoordinatorAttempt): string {
  if (attempt.outcome === "crash") {
    const last = attempt.stderrTail.trim().split("\n").at(-1) ?? ""
    return `opencode exited with code ${attempt.exitCode} before printing anything${last ? `: ${last}` : ""}`
  }
  if (attempt.error) {
    const status = attempt.error.statusCode ? ` ${attempt.error.statusCode}` : ""
    const from = attempt.error.provider ? ` from ${attempt.error.provider}` : ""
    return `${attempt.error.name}${status}${from}: ${attempt.error.message}`
  }
  if (attempt.outcome === "timeout") return "killed by the outer timeout"
  return attempt.outcome
}

async function runAttempt(
  model: string,
  options: CoordinatorOptions,
  result: CoordinatorResult,
): Promise<CoordinatorAttempt> {
  const started = performance.now()
  const config = withDefaultAgentModel(options.config, model)
  if (options.configFile) await writeFile(options.configFile, JSON.stringify(config, null, 2) + "\n", { mode: 0o600 })

  const child = spawnOpencode(options.binary, () =>
    spawnRun({
      binary: options.binary,
      directory: options.repoDir,
      config,
      title: options.title,
      prompt: options.prompt,
      env: options.env,
    }),
  )

  let lastOutput = performance.now()
  let outcome: CoordinatorAttempt["outcome"] | null = null
  let lastError: unknown = null
  let lastReason: string | null = null
  let events = 0
  const heartbeatMs = options.heartbeatSeconds * 1000
  const heartbeat = setInterval(() => {
    const quiet = performance.now() - lastOutput
    if (quiet >= heartbeatMs)
      options.onProgress?.(`Model is thinking... (${Math.round(quiet / 1000)}s since last output)`)
  }, heartbeatMs)
  const kill = (why: "timeout" | "aborted" | "ok") => {
    outcome ??= why
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), killGraceMs).unref?.()
  }
  const timer = setTimeout(() => kill("timeout"), options.coordinatorMinutes * 60_000)
  const watch = options.shouldStop ? setInterval(() => options.shouldStop!() && kill("ok"), 100) : null
  const onAbort = () => kill("aborted")
  options.signal?.addEventListener("abort", onAbort)

  const handle = (batch: JsonlLine[]) => {
    lastOutput = performance.now()
    for (const line of batch) {
      if (!line.ok) {
        result.badLines += 1
        options.log.warn({ line: line.line, error: line.error }, "coordinator printed a line that is not a JSON event")
        continue
      }
      events += 1
      const event = line.event
      options.onEvent?.(event)
      const failed = errorEventOf(event)
      if (failed) lastError = failed.error
      const text = textOf(event)
      if (text !== null) result.finalText = text
      const step = stepFinishOf(event)
      if (step) {
        lastReason = step.reason
        result.steps.push(stepUsage(config.default_agent, model, step))
      }
      const use = toolUseOf(event)
      if (use) result.toolUses.push(use)
      if (options.stopWhen?.(event)) kill("ok")
    }
  }

  const stderrChunks: string[] = []
  const stderrDone = (async () => {
    const decoder = new TextDecoder()
    for await (const chunk of child.stderr) {
      stderrChunks.push(decoder.decode(chunk, { stream: true }))
      while (stderrChunks.join("").length > stderrKeep * 2) stderrChunks.shift()
    }
  })()
  try {
    await readJsonl(child.stdout, handle)
    await child.exited
    await stderrDone
  } finally {
    clearInterval(heartbeat)
    if (watch) clearInterval(watch)
    clearTimeout(timer)
    options.signal?.removeEventListener("abort", onAbort)
  }
  const stderrTail = stderrChunks.join("").slice(-stderrKeep)
  if (stderrTail.trim()) options.log.debug({ stderr: stderrTail }, "coordinator stderr")
  const exitCode = child.exitCode
  const durationMs = Math.round(performance.now() - started)
  const base = { model, exitCode, durationMs, stderrTail }

  if (outcome) return { ...base, outcome, error: null }
  if (lastError !== null) return { ...base, outcome: "error", error: classifyProviderError(lastError) }
  if (lastReason === cutOffReason) return { ...base, outcome: "length", error: null }
  if (exitCode !== 0 || events === 0) {
    const tail = stderrTail.trim().split("\n").slice(-3).join(" ")
    const error = classifyProviderError({
      name: "UnknownError",
      data: {
        message: `opencode exited with code ${exitCode}${events > 0 ? ` after ${events} event${events === 1 ? "" : "s"}` : ""}${tail ? `: ${tail}` : ""}`,
      },
    })
    // Nothing printed at all (even with exit 0): the process died on start-up or never ran the
    // agent; another attempt may well work.
    if (events === 0) return { ...base, outcome: "crash", error: { ...error, verdict: "failback" } }
    return { ...base, outcome: "error", error: retryableText(stderrTail) ? { ...error, verdict: "failback" } : error }
  }
  return { ...base, outcome: "ok", error: null }
}

function stepUsage(agent: string, model: string, step: StepFinish): StepUsage {
  return { agent, model, ...step.tokens, costUsd: step.costUsd }
}

// spawnRun throws synchronously, as Bun.spawn does, when the binary is missing or not executable:
// say which and what to do.
function spawnOpencode<T>(binary: string, spawn: () => T): T {
  try {
    return spawn()
  } catch (cause) {
    throw new OpencodeStartError(binary, cause)
  }
}
