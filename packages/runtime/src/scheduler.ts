import type { Finding } from "@opencode-reviewer/core/model/finding"
import type { ReviewerOutcome } from "@opencode-reviewer/core/protocol/spawn-metadata"
import { classifyError, describeError } from "@opencode-reviewer/core/run/provider-errors"
import type { SessionError } from "@opencode-reviewer/opencode/errors"
import type { AssistantReply } from "@opencode-reviewer/opencode/session"
import pLimit from "p-limit"
import { type Breakers, selectModel } from "./breaker"
import type { Clock } from "./clock"
import { addTokens, noTokens, type SessionDriver, type Tokens } from "./driver"
import { askForCorrection, askForShorterAnswer, focusSection } from "./instructions"
import type { SessionMonitor, StopReason, TurnEnd, TurnWatch } from "./monitor"

/** One reviewer to run: its agent name, model chain (primary first), timeout and first message. */
export interface ReviewerTask {
  name: string
  models: string[]
  /** Per attempt (each model in the chain gets its own). */
  timeoutMs: number
  /** The first user message (see `briefReviewer`). */
  message: string
}

/** What happened to one reviewer; the tool's metadata carries exactly this (core's protocol). */
export type { ReviewerOutcome }

/** A parse of a reviewer's answer (core's `parseFindings`). */
export type FindingsParse = { ok: true; findings: Finding[] } | { ok: false; error: string }

/** The scheduler's limits in ms (`limitsInMs` of plan.json). */
export interface SchedulerLimits {
  concurrency: number
  overallMs: number
  idleMs: number
  retryBudgetMs: number
}

/** Everything `runReviewers` needs: injected driver, monitor, clock and breakers; no OpenCode inside. */
export interface RunOptions {
  tasks: readonly ReviewerTask[]
  parentID: string
  limits: SchedulerLimits
  driver: SessionDriver
  monitor: SessionMonitor
  clock: Clock
  breakers: Breakers
  parse(text: string): FindingsParse
  /** The parent's abort (ctx.abort): every child is aborted and the rest never start. */
  signal?: AbortSignal
  /** Called as each reviewer finishes. */
  onOutcome?(outcome: ReviewerOutcome, finished: number, total: number): void
  /** Called when a reviewer starts an attempt on a model (the first, or a failback). */
  onAttempt?(name: string, model: string, attempt: number): void
  /**
   * Outcomes that finished in an earlier process of the same review (results.ts): a task named in
   * them is not run again, its outcome is this one (reported through `onOutcome` like the others).
   */
  carried?: readonly ReviewerOutcome[]
}

type AttemptResult =
  | { kind: "done"; findings: Finding[] }
  /** The model failed in a way another model may not: counts for its breaker, fails back. */
  | { kind: "retryable"; error: string }
  /** Nothing another model would fix; `answered` tells the breaker the model itself was fine. */
  | { kind: "fatal"; error: string; answered: boolean }

/** How a focus note reached a reviewer of a running batch. */
export type NoteDelivery =
  /** Sent to its running session: the reviewer reads it with its next step. */
  | "sent"
  /** The reviewer has not started yet: the note joins its first message. */
  | "queued"
  /** The reviewer had already finished (or was stopped): the note was not delivered. */
  | "finished"
  /** No such reviewer in the batch. */
  | "unknown"

/**
 * Reviewers started before anyone waits for them (the runtime starts them with the coordinator's
 * first turn). `note` and `drop` let a later spawn_reviewers call still steer them.
 */
export interface ReviewerBatch {
  /** Every task's outcome, in the order of `tasks`; never rejects. */
  readonly outcomes: Promise<ReviewerOutcome[]>
  /** Delivers a focus note to one reviewer (see {@link NoteDelivery}). */
  note(name: string, text: string): Promise<NoteDelivery>
  /** Stops a reviewer the coordinator did not ask for; it ends failed with `reason`. */
  drop(name: string, reason: string): void
}

/**
 * Runs the reviewers, at most `concurrency` at once, each in its own child session, failing back
 * along its own model chain on retryable errors (skipping models whose circuit is open), within
 * the per-attempt timeout and the overall budget. Never throws for a reviewer's failure: every
 * task gets an outcome, in the order of `tasks`.
 */
export async function runReviewers(options: RunOptions): Promise<ReviewerOutcome[]> {
  return startReviewers(options).outcomes
}

/** Starts {@link runReviewers} and returns at once with a handle on the running batch. */
export function startReviewers(options: RunOptions): ReviewerBatch {
  const { clock, limits, signal } = options
  const budgetAt = clock.now() + limits.overallMs
  const active = new Set<TurnWatch>()
  const stopAll = () => {
    for (const watch of active) watch.stop("aborted")
  }
  signal?.addEventListener("abort", stopAll, { once: true })
  const limit = pLimit(Math.max(1, limits.concurrency))
  const lanes = new Map(options.tasks.map((task) => [task.name, newLane()]))
  const carried = new Map((options.carried ?? []).map((outcome) => [outcome.name, outcome]))
  // Finished from the start: a note for a carried reviewer is reported as late, never queued.
  for (const name of carried.keys()) if (lanes.has(name)) lanes.get(name)!.finished = true
  let finished = 0
  const settle = (outcome: ReviewerOutcome) => {
    lanes.get(outcome.name)!.finished = true
    finished += 1
    options.onOutcome?.(outcome, finished, options.tasks.length)
    return outcome
  }
  const outcomes = Promise.all(
    options.tasks.map((task) => {
      const earlier = carried.get(task.name)
      // Not through the concurrency limit: a carried reviewer takes no slot from one that runs.
      if (earlier) return Promise.resolve().then(() => settle(earlier))
      return limit(async () => {
        const lane = lanes.get(task.name)!
        const outcome = await runReviewer(task, { ...options, budgetAt, active, lane }).catch((cause: unknown) =>
          failedOutcome(task, `internal error: ${cause instanceof Error ? cause.message : String(cause)}`),
        )
        return settle(outcome)
      })
    }),
  ).finally(() => signal?.removeEventListener("abort", stopAll))
  return {
    outcomes,
    async note(name, text) {
      const lane = lanes.get(name)
      if (!lane) return "unknown"
      if (lane.finished || lane.dropped !== null) return "finished"
      if (lane.live === null) {
        lane.notes.push(text)
        return "queued"
      }
      const live = lane.live
      // OpenCode queues a prompt sent to a busy session: the running loop takes the new user message
      // into its next step (docs/opencode.md, "Child sessions"). The turn's watch then waits for it.
      live.noted = true
      const sent = await options.driver
        .prompt(live.sessionID, { agent: live.agent, model: live.model, text: focusSection([text]) })
        .then(() => true)
        .catch(() => false)
      return sent ? "sent" : "finished"
    },
    drop(name, reason) {
      const lane = lanes.get(name)
      if (!lane || lane.finished || lane.dropped !== null) return
      lane.dropped = reason
      lane.watch?.stop("aborted")
    },
  }
}

// What the batch knows of one reviewer while it runs: the session of its current turn (for notes),
// notes waiting for its start, and whether the coordinator dropped it.
interface Lane {
  notes: string[]
  live: { sessionID: string; agent: string; model: string; noted: boolean } | null
  watch: TurnWatch | null
  dropped: string | null
  finished: boolean
}

function newLane(): Lane {
  return { notes: [], live: null, watch: null, dropped: null, finished: false }
}

interface Context extends RunOptions {
  budgetAt: number
  active: Set<TurnWatch>
  lane: Lane
}

interface Progress {
  modelsTried: string[]
  sessionIDs: string[]
  attempts: number
  followUps: number
  usage: Map<string, { tokens: Tokens; cost: number }>
}

async function runReviewer(task: ReviewerTask, context: Context): Promise<ReviewerOutcome> {
  const { clock, breakers, budgetAt, limits } = context
  const startedAt = clock.now()
  const progress: Progress = { modelsTried: [], sessionIDs: [], attempts: 0, followUps: 0, usage: new Map() }
  const end = (status: "done" | "failed", error: string | null, findings: Finding[] = []): ReviewerOutcome => {
    const tokens = noTokens()
    let cost = 0
    for (const usage of progress.usage.values()) {
      addTokens(tokens, usage.tokens)
      cost += usage.cost
    }
    return {
      name: task.name,
      status,
      error,
      model: progress.modelsTried.at(-1) ?? null,
      modelsTried: [...progress.modelsTried],
      attempts: progress.attempts,
      followUps: progress.followUps,
      sessionIDs: [...progress.sessionIDs],
      durationMs: Math.max(0, clock.now() - startedAt),
      tokens,
      costUsd: roundCost(cost),
      findings,
    }
  }

  if (context.lane.dropped !== null) return end("failed", context.lane.dropped)
  if (context.signal?.aborted) return end("failed", "not started: the coordinator's session was aborted")
  if (clock.now() >= budgetAt)
    return end("failed", `not started: the overall budget of ${minutes(limits.overallMs)} was spent`)

  const excluded = new Set<string>()
  // "model: error" of every retryable failure so far, oldest first: a reviewer that finally fails
  // names each model it tried and why, never only the last one.
  const failures: string[] = []
  const lastError = () => failures.at(-1) ?? null
  // The failures before the last one, for the end of the final error.
  const earlier = () => (failures.length > 1 ? ` (after ${failures.slice(0, -1).join("; ")})` : "")
  for (;;) {
    const choice = selectModel(task.models, breakers, excluded)
    if (choice.model === null) {
      const open = choice.skipped.length > 0 ? `circuit open for ${choice.skipped.join(", ")}` : null
      if (lastError() === null) return end("failed", `no model available: ${open ?? "empty model chain"}`)
      return end("failed", `${lastError()}; no model left to fail back to${open ? ` (${open})` : ""}${earlier()}`)
    }
    const model = choice.model
    if (progress.attempts > 0) {
      const reason = retryBlocked(context)
      if (reason) {
        breakers.release(model)
        return end("failed", `${lastError()}; ${reason} (would fail back to ${model})${earlier()}`)
      }
    }
    excluded.add(model)
    progress.attempts += 1
    progress.modelsTried.push(model)
    context.onAttempt?.(task.name, model, progress.attempts)
    const result = await runAttempt(task, model, context, progress).catch(
      (cause: unknown): AttemptResult => ({
        kind: "fatal",
        error: cause instanceof Error ? cause.message : String(cause),
        answered: false,
      }),
    )
    if (result.kind === "done") {
      breakers.succeed(model)
      return end("done", null, result.findings)
    }
    if (context.lane.dropped !== null) {
      breakers.release(model)
      return end("failed", context.lane.dropped)
    }
    if (result.kind === "fatal") {
      if (result.answered) breakers.succeed(model)
      else breakers.release(model)
      // After a failback, say which model this last error came from, and what the earlier ones did.
      return end(
        "failed",
        failures.length > 0 ? `${model}: ${result.error} (after ${failures.join("; ")})` : result.error,
      )
    }
    breakers.fail(model)
    failures.push(`${model}: ${result.error}`)
    if (context.signal?.aborted)
      return end("failed", `${lastError()}; the coordinator's session was aborted${earlier()}`)
  }
}

// One model attempt: a fresh child session, the briefing, then at most one follow-up for an answer
// cut off at the output limit and one for a findings block that does not parse.
async function runAttempt(
  task: ReviewerTask,
  model: string,
  context: Context,
  progress: Progress,
): Promise<AttemptResult> {
  const { clock, driver, limits } = context
  const deadlineAt = Math.min(clock.now() + task.timeoutMs, context.budgetAt)
  const sessionID = await driver.create({ parentID: context.parentID, title: `${task.name} review` })
  progress.sessionIDs.push(sessionID)
  let known = new Set<string>()
  const queued = context.lane.notes.splice(0)
  let text = queued.length > 0 ? `${task.message}\n\n${focusSection(queued)}` : task.message
  let askedShorter = false
  let askedCorrection = false
  for (;;) {
    const turn = await runTurn({ sessionID, agent: task.name, model, text, known, deadlineAt }, context, progress)
    if (turn.end.kind === "stopped") return stopped(turn.end, task, limits.idleMs, context.limits.overallMs)
    const fresh = turn.replies.filter((reply) => !known.has(reply.id))
    const error = turn.end.error ?? fresh.findLast((reply) => reply.error !== null)?.error ?? null
    if (error) return failedWith(error)
    const answer = pickAnswer(fresh)
    if (!answer) return { kind: "fatal", error: "the session went idle without an answer", answered: false }
    known = new Set(turn.replies.map((reply) => reply.id))

    const parsed = context.parse(answer.text)
    if (parsed.ok) return { kind: "done", findings: parsed.findings }
    const cut = fresh.at(-1)?.finish === "length"
    const next = cut && !askedShorter ? "shorter" : !askedCorrection ? "correction" : null
    const problem = cut ? `answer cut off at the output limit (${parsed.error})` : `malformed findings: ${parsed.error}`
    if (next === null) return { kind: "fatal", error: problem, answered: true }
    const blocked = retryBlocked(context)
    if (blocked) return { kind: "fatal", error: `${problem}; ${blocked} (would ask again)`, answered: true }
    if (next === "shorter") askedShorter = true
    else askedCorrection = true
    progress.followUps += 1
    text = next === "shorter" ? askForShorterAnswer() : askForCorrection(parsed.error)
  }
}

interface TurnInput {
  sessionID: string
  agent: string
  model: string
  text: string
  known: ReadonlySet<string>
  deadlineAt: number
}

async function runTurn(
  input: TurnInput,
  context: Context,
  progress: Progress,
): Promise<{ end: TurnEnd; replies: AssistantReply[] }> {
  const { driver, lane } = context
  const { sessionID } = input
  if (context.signal?.aborted || lane.dropped !== null)
    return { end: { kind: "stopped", reason: "aborted", retry: null, error: null }, replies: [] }
  let watch = watchTurn(input, input.known, context)
  const settle = async (end: TurnEnd) => {
    if (end.kind === "stopped") await driver.abort(sessionID).catch(() => {})
    const replies = await driver.read(sessionID).catch(() => [] as AssistantReply[])
    if (replies.length > 0) progress.usage.set(sessionID, sumUsage(replies))
    return { end, replies }
  }
  try {
    try {
      await driver.prompt(sessionID, { agent: input.agent, model: input.model, text: input.text })
    } catch (cause) {
      watch.stop("aborted")
      const message = cause instanceof Error ? cause.message : String(cause)
      return {
        end: { kind: "idle", error: { name: "UnknownError", data: { message: `prompt rejected: ${message}` } } },
        replies: [],
      }
    }
    const live = { sessionID, agent: input.agent, model: input.model, noted: false }
    lane.live = live
    // A note that came while the prompt was being sent found no session to go to.
    const late = lane.notes.splice(0)
    if (late.length > 0) {
      live.noted = true
      await driver
        .prompt(sessionID, { agent: input.agent, model: input.model, text: focusSection(late) })
        .catch(() => {})
    }
    for (;;) {
      const end = await watch.end
      if (end.kind === "stopped" || !live.noted) return await settle(end)
      // A note sent as OpenCode's loop was ending starts a turn of its own: wait for that answer too.
      live.noted = false
      if (!(await driver.pending(sessionID).catch(() => false))) return await settle(end)
      const replies = await driver.read(sessionID).catch(() => [] as AssistantReply[])
      context.active.delete(watch)
      watch = watchTurn(input, new Set(replies.map((reply) => reply.id)), context)
    }
  } finally {
    lane.live = null
    lane.watch = null
    context.active.delete(watch)
  }
}

// Registered before the prompt is sent, so no event is missed; the lane keeps it for `drop`.
function watchTurn(input: TurnInput, known: ReadonlySet<string>, context: Context): TurnWatch {
  const watch = context.monitor.watch({
    sessionID: input.sessionID,
    idleMs: context.limits.idleMs,
    deadlineAt: input.deadlineAt,
    budgetAt: context.budgetAt,
    known,
  })
  context.active.add(watch)
  context.lane.watch = watch
  return watch
}

function stopped(
  end: Extract<TurnEnd, { kind: "stopped" }>,
  task: ReviewerTask,
  idleMs: number,
  overallMs: number,
): AttemptResult {
  const retrying = end.retry ? ` (provider retry ${end.retry.attempt}: ${end.retry.message.slice(0, 200)})` : ""
  const reasons: Record<StopReason, () => AttemptResult> = {
    // A silent model is unavailable in every way that matters: count it and fail back.
    "no-output": () => ({ kind: "retryable", error: `no output for ${seconds(idleMs)}${retrying}` }),
    "retry-late": () => ({ kind: "retryable", error: `provider retry scheduled after the deadline${retrying}` }),
    timeout: () => ({ kind: "fatal", error: `timeout after ${minutes(task.timeoutMs)}${retrying}`, answered: false }),
    budget: () => ({
      kind: "fatal",
      error: `overall budget of ${minutes(overallMs)} spent${retrying}`,
      answered: false,
    }),
    aborted: () => ({ kind: "fatal", error: "aborted: the coordinator's session was aborted", answered: false }),
  }
  return reasons[end.reason]()
}

function failedWith(error: SessionError): AttemptResult {
  const verdict = classifyError(error)
  if (verdict.kind === "retryable") return { kind: "retryable", error: verdict.message }
  if (verdict.kind === "aborted") return { kind: "fatal", error: `aborted (${describeError(error)})`, answered: false }
  return { kind: "fatal", error: verdict.message, answered: false }
}

// The final answer of a turn is its last assistant message; with tool steps in between, the
// findings may sit in an earlier step's text when the last step said nothing.
function pickAnswer(fresh: readonly AssistantReply[]): AssistantReply | null {
  const withFindings = fresh.findLast((reply) => reply.text.includes("<findings"))
  const last = fresh.at(-1) ?? null
  if (last && last.text.trim() !== "") return last.text.includes("<findings") || !withFindings ? last : withFindings
  return withFindings ?? last
}

function retryBlocked(context: Context): string | null {
  const left = context.budgetAt - context.clock.now()
  if (context.signal?.aborted) return "the coordinator's session was aborted"
  if (left >= context.limits.retryBudgetMs) return null
  return `no retry: ${seconds(Math.max(0, left))} of the overall budget left, ${minutes(context.limits.retryBudgetMs)} needed`
}

function failedOutcome(task: ReviewerTask, error: string): ReviewerOutcome {
  return {
    name: task.name,
    status: "failed",
    error,
    model: null,
    modelsTried: [],
    attempts: 0,
    followUps: 0,
    sessionIDs: [],
    durationMs: 0,
    tokens: noTokens(),
    costUsd: 0,
    findings: [],
  }
}

function sumUsage(replies: readonly AssistantReply[]): { tokens: Tokens; cost: number } {
  const tokens = noTokens()
  let cost = 0
  for (const reply of replies) {
    addTokens(tokens, reply.tokens)
    cost += reply.cost
  }
  return { tokens, cost }
}

function roundCost(cost: number): number {
  return Math.round(cost * 1e8) / 1e8
}

/** "90 s", "1.5 s". */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`
}

/** "5 min", "0.25 min". */
export function minutes(ms: number): string {
  return `${Number((ms / 60_000).toFixed(2))} min`
}
