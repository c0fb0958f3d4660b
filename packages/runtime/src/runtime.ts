import { appendFileSync, existsSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { parseFindings } from "@opencode-reviewer/core/protocol/findings-xml"
import { tools, workFiles } from "@opencode-reviewer/core/protocol/names"
import { type ProgressEntry, progressLine } from "@opencode-reviewer/core/protocol/progress"
import { SpawnMetadata } from "@opencode-reviewer/core/protocol/spawn-metadata"
import { redactDeep } from "@opencode-reviewer/core/run/redact"
import { type Hooks, type PluginInput, sessionClientOf, tool, writeLog } from "@opencode-reviewer/opencode/plugin"
import { shapeToolDefinition, stripEnvironment } from "@opencode-reviewer/opencode/request-shape"
import { type BreakerEvent, type Breakers, createBreakers } from "./breaker"
import { type Clock, systemClock } from "./clock"
import { createClientDriver, type SessionDriver } from "./driver"
import { briefReviewer, inlineContextBytes } from "./instructions"
import { createSessionMonitor, type SessionMonitor } from "./monitor"
import { defaultTimeoutMinutes, limitsInMs, type PlanRead, type RuntimePlan, readPlanFile } from "./plan-file"
import { renderFailure, renderResults } from "./render"
import { loadFinished, saveFinished } from "./results"
import { type ReviewerBatch, type ReviewerOutcome, type ReviewerTask, startReviewers } from "./scheduler"

/** The plugin's service name in OpenCode's log. */
export const logService = "opencode-reviewer-runtime"

/** The sentinel file the plugin writes into the work dir when it loads (proof it loaded, and what it read). */
export const sentinelFile = workFiles.sentinel

/** What the runtime needs besides OpenCode's plugin input; everything timing-related is injectable. */
export interface RuntimeOptions {
  /** The review's work dir (OPENCODE_REVIEWER_WORK_DIR), holding plan.json. */
  workDir: string | null
  clock?: Clock
  /** Breakers shared by every call in this process; created from the first plan's limits when absent. */
  breakers?: Breakers
  driver?: SessionDriver
}

/** Arguments of `spawn_reviewers`, all optional. */
export interface SpawnArgs {
  reviewers?: string[] | undefined
  focus?: string | undefined
  notes?: { reviewer: string; focus: string }[] | undefined
}

/** The metadata the tool returns; the CLI reads it from the parent's `tool_use` JSONL event (core's protocol). */
export type { SpawnMetadata }

const s = tool.schema

/**
 * Builds the runtime's hooks: the `spawn_reviewers` tool and the `event` hook that feeds child
 * sessions' events to the scheduler; the reviewers start with the coordinator's first model call
 * (`chat.params`), so they work while it runs, and the tool joins them. Also trims what OpenCode adds to every request (`tool.definition`,
 * `experimental.chat.system.transform`). Never throws: a missing or bad plan becomes the tool's output.
 */
export function createRuntimeHooks(input: PluginInput, options: RuntimeOptions): Hooks {
  const clock = options.clock ?? systemClock
  const driver = options.driver ?? createClientDriver(sessionClientOf(input))
  const log = (level: "debug" | "info" | "warn" | "error", message: string, extra: Record<string, unknown> = {}) => {
    // Fire and forget: logging must never hold up or break a review.
    void Promise.resolve()
      .then(() => writeLog(input, { service: logService, level, message, extra }))
      .catch(() => {})
  }
  let breakers = options.breakers ?? null
  let monitor: { instance: SessionMonitor; pollMs: number } | null = null
  const monitorFor = (pollMs: number) => {
    // A new monitor only when idle: one watching turns keeps its poll interval.
    if (!monitor || (monitor.pollMs !== pollMs && monitor.instance.size === 0)) {
      monitor = { instance: createSessionMonitor({ driver, clock, pollMs }), pollMs }
    }
    return monitor.instance
  }
  // plan.json is written before OpenCode starts and never changes during the run: read it once
  // (a failed read is tried again, and reported by each call that finds it missing).
  let planRead: Promise<PlanRead> | null = null
  const readPlan = () =>
    (planRead ??= readPlanFile(options.workDir).then((read) => {
      if (!read.ok) planRead = null
      return read
    }))
  // The one batch of reviewers of this process: started as the coordinator's first model call goes
  // out, or by spawn_reviewers when that came first (a coordinator session the hooks did not see).
  let batch: { parentID: string; ready: Promise<Batch> } | null = null
  let coordinatorSession: string | null = null
  // The waiting tool call's progress title, once a call waits.
  let reportProgress: ((finished: number, total: number) => void) | null = null

  const start = async (read: Extract<PlanRead, { ok: true }>, parentID: string, args: SpawnArgs): Promise<Batch> => {
    const started = clock.now()
    const { plan } = read
    const limits = limitsInMs(plan.limits)
    breakers ??= createBreakers(
      { failures: limits.breakerFailures, cooldownMs: limits.breakerCooldownMs, now: () => clock.now() },
      (event: BreakerEvent) => log("warn", event.type, { ...event }),
    )
    const workDir = options.workDir!
    const context = await readContext(plan, workDir)
    const { tasks, notes } = planTasks(plan, args, workDir, {
      repoDir: input.directory,
      context,
      today: new Date(clock.now()).toISOString().slice(0, 10),
    })
    // Reviewers that finished in an earlier process of this review (a coordinator failback) are
    // carried over, not run and paid for again.
    const { digest } = read
    const carried = await loadFinished(
      workDir,
      digest,
      tasks.map((task) => task.name),
    )
    const reused = new Set(carried.map((outcome) => outcome.name))
    log("info", "reviewers start", {
      plan: read.file,
      reviewers: tasks.map((task) => task.name),
      carried: [...reused],
    })
    const progress = progressWriter(workDir)
    progress({ event: "reviewers-start", reviewers: tasks.map((task) => task.name) })
    if (reused.size > 0)
      notes.push(`${[...reused].join(", ")}: finished in an earlier attempt of this review, results carried over`)
    const controller = new AbortController()
    const run = startReviewers({
      tasks,
      parentID,
      limits,
      driver,
      monitor: monitorFor(limits.pollMs),
      clock,
      breakers,
      parse: (text) => parseFindings(text),
      signal: controller.signal,
      carried,
      onAttempt(name, model, attempt) {
        progress({ event: "reviewer-start", name, model, attempt })
      },
      onOutcome(outcome, finished, total) {
        if (!reused.has(outcome.name)) {
          try {
            saveFinished(workDir, digest, outcome)
          } catch (cause) {
            log("warn", "cannot save a reviewer's result", { name: outcome.name, error: String(cause) })
          }
        }
        progress({
          event: "reviewer-end",
          name: outcome.name,
          status: outcome.status,
          error: outcome.error,
          model: outcome.model,
          findings: outcome.findings.length,
          sessionIDs: outcome.sessionIDs,
          tokens: outcome.tokens,
          costUsd: outcome.costUsd,
        })
        log(outcome.status === "done" ? "info" : "warn", "reviewer-end", {
          name: outcome.name,
          status: outcome.status,
          error: outcome.error,
          model: outcome.model,
          findings: outcome.findings.length,
        })
        reportProgress?.(finished, total)
      },
    })
    return { parentID, started, tasks, notes, run, controller }
  }

  void writeSentinel(options.workDir)

  return {
    event: async ({ event }) => {
      monitor?.instance.handle(event)
    },
    // OpenCode's long descriptions of read, glob and grep travel in every request of every session.
    "tool.definition": async ({ toolID }, output) => {
      shapeToolDefinition(toolID, output)
    },
    // The model line and <env> block change with the checkout and the day; the facts go into the
    // first user message instead, after the part a provider can cache (instructions.ts).
    "experimental.chat.system.transform": async (_, output) => {
      stripEnvironment(output.system)
    },
    // The coordinator's session is the one whose message names the coordinator agent (the
    // `--agent` of opencode run); reviewers' messages name their own agents.
    "chat.message": async (message) => {
      if (coordinatorSession !== null || !message.agent) return
      const read = await readPlan()
      const coordinator = read.ok ? read.plan.agents.find((agent) => agent.role === "coordinator") : undefined
      if (coordinatorSession === null && message.agent === coordinator?.name) coordinatorSession = message.sessionID
    },
    "chat.params": async (call) => {
      if (call.sessionID !== coordinatorSession) return
      // The reviewers start as the coordinator's first model call goes out: they work while it
      // reads the request and decides to collect them. Not earlier: OpenCode sends no request
      // before its instance has started, and the reviewers' silence timers would run meanwhile.
      if (batch === null) {
        const read = await readPlan()
        if (read.ok && batch === null) batch = { parentID: call.sessionID, ready: start(read, call.sessionID, {}) }
        return
      }
      // Once the review is submitted the coordinator has nothing left to do, but OpenCode would send
      // the whole conversation to the model once more for a closing turn nobody reads. The
      // submit_review step has ended by then, so its step_finish (with its tokens) is printed; the
      // CLI ends the run on it, and this call is held until then.
      if (options.workDir === null || !existsSync(join(options.workDir, workFiles.submission))) return
      log("info", "review submitted: holding the coordinator's closing turn until the run ends")
      await new Promise<never>(() => {})
    },
    // Every tool result of every session (the reviewers' reads and greps included) loses the
    // credentials a runner leaves in the checkout (a token in .git/config's origin URL) before the
    // model or OpenCode's database sees it: title, output and metadata (read keeps a preview there).
    "tool.execute.after": async (call, output) => {
      const count = redactDeep(output)
      if (count > 0) log("warn", "credentials redacted from a tool result", { tool: call.tool, count })
    },
    tool: {
      [tools.spawnReviewers]: tool({
        description: [
          "Returns the results of the specialist reviewers the plan chose, which started with the review, each in",
          "its own child session: one XML document with a <reviewer_result> per reviewer (status done or failed,",
          "model, error, <findings>). No arguments are needed; call it once.",
        ].join(" "),
        args: {
          reviewers: s
            .array(s.string())
            .optional()
            .describe(
              "Only these planned reviewers (default: every reviewer the plan chose); the others are stopped. Unknown names are ignored.",
            ),
          focus: s
            .string()
            .optional()
            .describe("A short focus note for every reviewer, in your own words (never MR text)."),
          notes: s
            .array(s.object({ reviewer: s.string(), focus: s.string() }))
            .optional()
            .describe("Focus notes for single reviewers."),
        },
        async execute(args, context) {
          const read = await readPlan()
          if (!read.ok) {
            log("error", "spawn_reviewers cannot run", { error: read.error, plan: read.file })
            const metadata = SpawnMetadata.parse({
              plan: read.file,
              error: read.error,
              reviewers: [],
              cut: 0,
              durationMs: 0,
            })
            return {
              title: "spawn_reviewers could not run",
              output: renderFailure(read.error, read.file),
              metadata: { ...metadata },
            }
          }
          const joined = batch !== null && batch.parentID === context.sessionID
          if (!joined) {
            coordinatorSession = context.sessionID
            batch = { parentID: context.sessionID, ready: start(read, context.sessionID, args) }
          }
          const current = await batch!.ready
          const steer = joined ? await steerBatch(current, args) : []
          reportProgress = (finished, total) => context.metadata({ title: `${finished}/${total} reviewers finished` })
          const abort = () => current.controller.abort()
          if (context.abort.aborted) abort()
          context.abort.addEventListener("abort", abort, { once: true })
          let outcomes: ReviewerOutcome[]
          try {
            outcomes = await current.run.outcomes
          } finally {
            context.abort.removeEventListener("abort", abort)
          }
          const rendered = renderResults(outcomes, { plan: read.file, notes: [...current.notes, ...steer] })
          const failed = outcomes.filter((outcome) => outcome.status === "failed").length
          // Validated here, the one writer: the CLI refuses metadata that does not match.
          const metadata = SpawnMetadata.parse({
            plan: read.file,
            error: null,
            reviewers: outcomes,
            cut: rendered.cut,
            durationMs: Math.max(0, clock.now() - current.started),
          })
          return {
            title: `${outcomes.length} reviewer${outcomes.length === 1 ? "" : "s"} finished (${failed} failed)`,
            output: rendered.output,
            metadata: { ...metadata },
          }
        },
      }),
    },
  }
}

/** The reviewers of one review as they run, and who waits for them. */
interface Batch {
  /** The coordinator's session: the parent of every reviewer session. */
  parentID: string
  started: number
  tasks: ReviewerTask[]
  /** Advice for the coordinator from planning the tasks (unknown names, …). */
  notes: string[]
  run: ReviewerBatch
  controller: AbortController
}

/**
 * Applies a spawn_reviewers call's arguments to reviewers that already run: the ones it leaves out
 * are stopped, its focus notes are sent to the ones still working. Returns notes for the coordinator.
 */
async function steerBatch(batch: Batch, args: SpawnArgs): Promise<string[]> {
  const notes: string[] = []
  const names = batch.tasks.map((task) => task.name)
  const wanted = (args.reviewers ?? []).map((name) => name.trim()).filter((name) => name !== "")
  const unknown = wanted.filter((name) => !names.includes(name))
  if (unknown.length > 0) notes.push(`not in the plan, ignored: ${unknown.join(", ")}`)
  const kept = names.filter((name) => wanted.includes(name))
  if (wanted.length > 0 && kept.length === 0) notes.push("no planned reviewer was named, so every planned reviewer ran")
  if (kept.length > 0) {
    const dropped = names.filter((name) => !kept.includes(name))
    for (const name of dropped)
      batch.run.drop(name, `stopped: the coordinator narrowed the review to ${kept.join(", ")}`)
  }
  const late: string[] = []
  for (const name of kept.length > 0 ? kept : names) {
    const focus = [
      ...(args.focus ? [args.focus] : []),
      ...(args.notes ?? []).filter((note) => note.reviewer === name).map((note) => note.focus),
    ]
    for (const text of focus) if ((await batch.run.note(name, text)) === "finished") late.push(name)
  }
  if (late.length > 0)
    notes.push(
      `${[...new Set(late)].join(", ")} had finished before your focus notes arrived; check those leads yourself with read or grep`,
    )
  return notes
}

// The shared context travels in each reviewer's first message when it is small enough; a context
// that cannot be read is left to the reviewer's own read, which reports the problem.
async function readContext(plan: RuntimePlan, workDir: string): Promise<string | null> {
  const file = plan.contextFile ?? join(plan.workDir ?? workDir, "shared-mr-context.txt")
  const text = await readFile(file, "utf8").catch(() => null)
  if (text === null || Buffer.byteLength(text, "utf8") > inlineContextBytes) return null
  return text
}

/**
 * The tasks for one batch: the planned reviewers (narrowed by `args.reviewers` when that names any
 * planned one), each with its chain, timeout and briefing; plus notes for the coordinator.
 */
export function planTasks(
  plan: RuntimePlan,
  args: SpawnArgs,
  workDir: string,
  session: { repoDir: string; context: string | null; today: string },
): { tasks: ReviewerTask[]; notes: string[] } {
  const planned = plan.agents.filter((agent) => agent.role === "reviewer")
  const notes: string[] = []
  const wanted = (args.reviewers ?? []).map((name) => name.trim()).filter((name) => name !== "")
  const unknown = wanted.filter((name) => !planned.some((agent) => agent.name === name))
  if (unknown.length > 0) notes.push(`not in the plan, ignored: ${unknown.join(", ")}`)
  const narrowed = planned.filter((agent) => wanted.includes(agent.name))
  if (wanted.length > 0 && narrowed.length === 0)
    notes.push("no planned reviewer was named, so every planned reviewer ran")
  const chosen = narrowed.length > 0 ? narrowed : planned
  const base = plan.workDir ?? workDir
  const contextFile = plan.contextFile ?? join(base, "shared-mr-context.txt")
  const tasks = chosen.map((agent) => ({
    name: agent.name,
    models: agent.models,
    timeoutMs: (agent.timeoutMinutes ?? defaultTimeoutMinutes) * 60_000,
    message: briefReviewer({
      repoDir: session.repoDir,
      workDir: base,
      contextFile,
      context: session.context,
      today: session.today,
      focus: [
        ...(args.focus ? [args.focus] : []),
        ...(args.notes ?? []).filter((note) => note.reviewer === agent.name).map((note) => note.focus),
      ],
    }),
  }))
  return { tasks, notes }
}

// The sentinel proves the plugin loaded (OpenCode hides plugin load failures, docs/opencode.md,
// pitfall 3) and records what it read; the CLI can check it after the run.
async function writeSentinel(workDir: string | null): Promise<void> {
  if (!workDir) return
  const read = await readPlanFile(workDir)
  const record = {
    loaded: true,
    pid: process.pid,
    time: new Date().toISOString(),
    plan: read.file,
    error: read.ok ? null : read.error,
    reviewers: read.ok ? read.plan.agents.filter((agent) => agent.role === "reviewer").map((agent) => agent.name) : [],
  }
  await writeFile(join(workDir, sentinelFile), JSON.stringify(record, null, 2) + "\n").catch(() => {})
}

/** The file the CLI tails for live progress: one JSON line per reviewer start and end. */
export const progressFileName = workFiles.progress

// Child sessions never reach the parent's stdout, so progress travels through the work dir. A write
// failure only costs the progress display, never the review.
function progressWriter(workDir: string): (entry: ProgressEntry) => void {
  const file = join(workDir, progressFileName)
  return (entry) => {
    try {
      appendFileSync(file, progressLine(entry, Date.now()))
    } catch {
      // progress is best effort
    }
  }
}
