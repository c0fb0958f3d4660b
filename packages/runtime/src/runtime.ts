import { appendFileSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { parseFindings } from "@opencode-reviewer/core/protocol/findings-xml"
import { tools, workFiles } from "@opencode-reviewer/core/protocol/names"
import { type ProgressEntry, progressLine } from "@opencode-reviewer/core/protocol/progress"
import { SpawnMetadata } from "@opencode-reviewer/core/protocol/spawn-metadata"
import { redactDeep } from "@opencode-reviewer/core/run/redact"
import { type Hooks, type PluginInput, sessionClientOf, tool, writeLog } from "@opencode-reviewer/opencode/plugin"
import { type BreakerEvent, type Breakers, createBreakers } from "./breaker"
import { type Clock, systemClock } from "./clock"
import { createClientDriver, type SessionDriver } from "./driver"
import { briefReviewer } from "./instructions"
import { createSessionMonitor, type SessionMonitor } from "./monitor"
import { defaultTimeoutMinutes, limitsInMs, type RuntimePlan, readPlanFile } from "./plan-file"
import { renderFailure, renderResults } from "./render"
import { type ReviewerTask, runReviewers } from "./scheduler"

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
 * sessions' events to the scheduler. Never throws: a missing or bad plan becomes the tool's output.
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

  void writeSentinel(options.workDir)

  return {
    event: async ({ event }) => {
      monitor?.instance.handle(event)
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
          "Runs the specialist reviewers the plan chose, concurrently, each in its own child session, and returns",
          "their results as one XML document: a <reviewer_result> per reviewer with status (done or failed), model,",
          "error and its <findings>. No arguments are needed; call it once.",
        ].join(" "),
        args: {
          reviewers: s
            .array(s.string())
            .optional()
            .describe(
              "Only these planned reviewers (default: every reviewer the plan chose). Unknown names are ignored.",
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
          const started = clock.now()
          const read = await readPlanFile(options.workDir)
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
          const { plan } = read
          const limits = limitsInMs(plan.limits)
          breakers ??= createBreakers(
            { failures: limits.breakerFailures, cooldownMs: limits.breakerCooldownMs, now: () => clock.now() },
            (event: BreakerEvent) => log("warn", event.type, { ...event }),
          )
          const { tasks, notes } = planTasks(plan, args, options.workDir!)
          log("info", "reviewers start", { plan: read.file, reviewers: tasks.map((task) => task.name) })
          const progress = progressWriter(options.workDir!)
          progress({ event: "reviewers-start", reviewers: tasks.map((task) => task.name) })
          const outcomes = await runReviewers({
            tasks,
            parentID: context.sessionID,
            limits,
            driver,
            monitor: monitorFor(limits.pollMs),
            clock,
            breakers,
            parse: (text) => parseFindings(text),
            signal: context.abort,
            onAttempt(name, model, attempt) {
              progress({ event: "reviewer-start", name, model, attempt })
            },
            onOutcome(outcome, finished, total) {
              progress({
                event: "reviewer-end",
                name: outcome.name,
                status: outcome.status,
                error: outcome.error,
                model: outcome.model,
                findings: outcome.findings.length,
              })
              log(outcome.status === "done" ? "info" : "warn", "reviewer-end", {
                name: outcome.name,
                status: outcome.status,
                error: outcome.error,
                model: outcome.model,
                findings: outcome.findings.length,
              })
              context.metadata({ title: `${finished}/${total} reviewers finished` })
            },
          })
          const rendered = renderResults(outcomes, { plan: read.file, notes })
          const failed = outcomes.filter((outcome) => outcome.status === "failed").length
          // Validated here, the one writer: the CLI refuses metadata that does not match.
          const metadata = SpawnMetadata.parse({
            plan: read.file,
            error: null,
            reviewers: outcomes,
            cut: rendered.cut,
            durationMs: Math.max(0, clock.now() - started),
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

/**
 * The tasks for one call: the planned reviewers (narrowed by `args.reviewers` when that names any
 * planned one), each with its chain, timeout and briefing; plus notes for the coordinator.
 */
export function planTasks(
  plan: RuntimePlan,
  args: SpawnArgs,
  workDir: string,
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
      workDir: base,
      contextFile,
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
