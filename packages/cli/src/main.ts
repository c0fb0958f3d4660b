import packageJson from "../package.json" with { type: "json" }
import { parse } from "./args"
import { commandHelp, mainHelp } from "./help"
import { type Io, readPatchAhead, routeHumanOutput } from "./io"

export type { Io } from "./io"

// Each command imports what it runs when it runs: `--version` and `--help` load none of core, the
// providers, the plugins or the telemetry libraries.

/** Runs the CLI and returns the exit code: 0 done, 1 could not be done, 2 decision at or above --fail-on. */
export async function main(io: Io): Promise<number> {
  const [command, ...rest] = io.argv
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    io.stdout(mainHelp)
    return command === undefined ? 1 : 0
  }
  if (command === "--version" || command === "-V") {
    io.stdout(`${packageJson.version}\n`)
    return 0
  }
  try {
    switch (command) {
      case "plan":
        return await plan(rest, io)
      case "review":
        return await review(rest, io)
      case "eval": {
        const { evaluate } = await import("./eval")
        return await evaluate(rest, io)
      }
      case "demo": {
        const { values } = await parse(rest, "demo")
        if (values.help) {
          io.stdout(commandHelp.demo)
          return 0
        }
        // The demo brings its own change, config and model: any other flag used to be taken silently
        // (--json printed no JSON, --patch replaced the sample change, --vcs github posted).
        const other = Object.keys(values).find((name) => !demoFlags.has(name))
        if (other !== undefined) {
          const { CliUsageError } = await import("./errors")
          throw new CliUsageError(`demo takes only --output-dir and -v, not --${other}`, "demo")
        }
        const { demo } = await import("./demo")
        return await demo(values, io)
      }
      default: {
        const { CliUsageError } = await import("./errors")
        throw new CliUsageError(`unknown command "${command}"`, null)
      }
    }
  } catch (error) {
    const { exitCodeFor, formatError } = await import("./errors")
    io.stderr(formatError(error))
    return exitCodeFor(error)
  }
}

const demoFlags = new Set(["output-dir", "verbose", "help"])

async function plan(args: string[], io: Io): Promise<number> {
  const { values } = await parse(args, "plan")
  if (values.help) {
    io.stdout(commandHelp.plan)
    return 0
  }
  // Read while the modules load: they take the main thread, the read does not.
  const ahead = values.patch === undefined ? undefined : readPatchAhead(values.patch, io)
  const [{ planJson }, { prepare }, { renderPlan }] = await Promise.all([
    import("@opencode-reviewer/core"),
    import("./prepare"),
    import("./render"),
  ])
  // Printed as soon as the plan is known; prepare returns once every work dir file is complete.
  await prepare(
    values,
    routeHumanOutput(io, values.json),
    "plan",
    (result, change) =>
      io.stdout(values.json ? JSON.stringify(planJson(result), null, 2) + "\n" : renderPlan(result, change.source)),
    ahead,
  )
  return 0
}

async function review(args: string[], io: Io): Promise<number> {
  const { values } = await parse(args, "review")
  if (values.help) {
    io.stdout(commandHelp.review)
    return 0
  }
  const ahead = values.patch === undefined ? undefined : readPatchAhead(values.patch, io)
  const [
    { atOrAbove, Decision, reviewIncomplete },
    { createTracing },
    { CliUsageError, formatError, ReviewIncompleteError },
    { clearReviewOutputs, finishEmptyReview, finishReview, reportFailure },
    { observeReview },
    { prepare },
    { runReview },
  ] = await Promise.all([
    import("@opencode-reviewer/core"),
    import("@opencode-reviewer/tracing"),
    import("./errors"),
    import("./finish"),
    import("./observe"),
    import("./prepare"),
    import("./run"),
  ])
  const failOn = values["fail-on"] === undefined ? null : Decision.safeParse(values["fail-on"])
  if (failOn && !failOn.success) {
    throw new CliUsageError(`--fail-on must be one of ${Decision.options.join(", ")}`, "review")
  }
  // With --json, everything printed for a person goes to stderr: stdout gets the record alone, at
  // the end, and nothing at all when no review was produced.
  const human = routeHumanOutput(io, values.json)
  const prepared = await prepare(values, human, "review", undefined, ahead)
  await clearReviewOutputs(prepared.outputDir)
  const observe = observeReview(prepared, human)
  const { endpoint } = prepared.config.tracing
  const tracing = createTracing(endpoint ? { endpoint } : {})
  const reviewable = prepared.plan.files.some((file) => file.noise === null)
  const started = Date.now()
  const attributes = {
    "opencode_reviewer.tier": prepared.plan.tier,
    "opencode_reviewer.agents": prepared.plan.agents.map((agent) => agent.name),
  }
  const run = async () => {
    if (!reviewable) return finishEmptyReview(prepared, human)
    const outcome = await runReview(prepared, human)
    const finished = await finishReview(prepared, outcome, human)
    tracing.recordReview({ result: outcome.result, record: finished, startedAt: started, endedAt: Date.now() })
    return finished
  }
  const record = await tracing
    .span("review", attributes, run)
    .catch(async (error: unknown) => {
      await observe.failed(error)
      await reportFailure(prepared, error, human)
      throw error
    })
    .finally(() => tracing.shutdown())
  await observe.finished(record)
  const threshold = failOn?.data ?? prepared.config.failOn
  if (values.json) io.stdout(JSON.stringify(record, null, 2) + "\n")
  if (atOrAbove(record.decision, threshold)) return 2
  // Published as not approved, but the job must not pass quietly: exit 1 says it could not be done.
  if (reviewIncomplete(record)) {
    io.stderr(formatError(new ReviewIncompleteError(record)))
    return 1
  }
  return 0
}
