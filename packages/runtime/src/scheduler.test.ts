import { parseFindings } from "@opencode-reviewer/core/protocol/findings-xml"
import { describe, expect, test } from "vitest"
import { type Breakers, createBreakers } from "./breaker"
import { createManualClock, type ManualClock } from "./clock"
import { createFakeDriver, type FakeBehaviour, type FakeDriver, type FakePrompt, reviewerOutcome } from "./fake-driver"
import { createSessionMonitor, type SessionMonitor } from "./monitor"
import {
  type ReviewerBatch,
  type ReviewerOutcome,
  type ReviewerTask,
  runReviewers,
  type SchedulerLimits,
  startReviewers,
} from "./scheduler"

const minute = 60_000
const defaults: SchedulerLimits = { concurrency: 7, overallMs: 25 * minute, idleMs: 60_000, retryBudgetMs: 2 * minute }

const block = (title: string, severity = "warning") =>
  `Looked at the change.\n<findings>\n  <finding severity="${severity}" file="src/app.ts" line="3" category="security">\n    <title>${title}</title>\n    <body>Why.</body>\n  </finding>\n</findings>`

const task = (name: string, models: string[] = [`fake/${name}`], timeoutMinutes = 5): ReviewerTask => ({
  name,
  models,
  timeoutMs: timeoutMinutes * minute,
  message: `Work directory: /work\nReview as ${name}.`,
})

interface Setup {
  tasks: ReviewerTask[]
  behave(prompt: FakePrompt): FakeBehaviour
  limits?: Partial<SchedulerLimits>
  pollMs?: number
  events?: boolean
  breakers?: Breakers
  clock?: ManualClock
  signal?: AbortSignal
}

function start(setup: Setup) {
  const clock = setup.clock ?? createManualClock(1_000_000)
  const driver = createFakeDriver(clock, setup.behave, { events: setup.events ?? true })
  const monitor = createSessionMonitor({ driver, clock, pollMs: setup.pollMs ?? 3_000 })
  driver.connect((event) => monitor.handle(event))
  const breakers = setup.breakers ?? createBreakers({ failures: 3, cooldownMs: 2 * minute, now: () => clock.now() })
  const finished: ReviewerOutcome[] = []
  const started = clock.now()
  const run = runReviewers({
    tasks: setup.tasks,
    parentID: "ses_parent",
    limits: { ...defaults, ...setup.limits },
    driver,
    monitor,
    clock,
    breakers,
    parse: (text) => parseFindings(text),
    ...(setup.signal ? { signal: setup.signal } : {}),
    onOutcome: (outcome) => finished.push(outcome),
  })
  let settled = false
  void run.then(() => (settled = true))
  // Moves the clock from one due sleeper to the next until the run ends: minutes pass in milliseconds.
  const finish = async () => {
    for (let step = 0; !settled; step += 1) {
      if (step > 10_000) throw new Error("the run did not finish")
      await clock.settle()
      if (settled) break
      const moved = await clock.next()
      if (!moved && !settled) {
        await clock.settle()
        if (!settled) throw new Error("the run is stuck: nothing sleeps and nothing settles")
      }
    }
    return { outcomes: await run, elapsed: clock.now() - started }
  }
  return { clock, driver, breakers, finished, finish, started }
}

const byName = (outcomes: ReviewerOutcome[], name: string) => outcomes.find((outcome) => outcome.name === name)!

describe("runReviewers", () => {
  test("runs every reviewer in its own child session of the parent, concurrently, and returns their findings", async () => {
    const names = ["security", "code-quality", "performance", "compliance", "documentation", "release", "agents-md"]
    const { driver, finish } = start({
      tasks: names.map((name) => task(name)),
      behave: (prompt) => ({
        kind: "answer",
        text: block(`${prompt.agent} finding`),
        afterMs: 1_000,
        tokens: { input: 100, output: 20, cacheRead: 50 },
        cost: 0.001,
      }),
    })
    const { outcomes, elapsed } = await finish()
    expect(outcomes.map((outcome) => [outcome.name, outcome.status])).toEqual(names.map((name) => [name, "done"]))
    expect(driver.peakBusy).toBe(7)
    expect(elapsed).toBe(1_000)
    expect(driver.created.every((session) => session.parentID === "ses_parent")).toBe(true)
    expect(driver.created.map((session) => session.title)).toEqual(names.map((name) => `${name} review`))
    expect(driver.prompts.map((prompt) => [prompt.agent, prompt.model])).toEqual(
      names.map((name) => [name, `fake/${name}`]),
    )
    const security = byName(outcomes, "security")
    expect(security).toMatchObject({
      error: null,
      model: "fake/security",
      modelsTried: ["fake/security"],
      attempts: 1,
      followUps: 0,
      durationMs: 1_000,
      tokens: { input: 100, output: 20, reasoning: 0, cacheRead: 50, cacheWrite: 0 },
      costUsd: 0.001,
    })
    expect(security.findings).toEqual([
      {
        severity: "warning",
        file: "src/app.ts",
        line: 3,
        category: "security",
        title: "security finding",
        body: "Why.",
      },
    ])
    expect(security.sessionIDs).toHaveLength(1)
  })

  test("never runs more than `concurrency` reviewers at once", async () => {
    const { driver, finish } = start({
      tasks: ["a", "b", "c", "d", "e"].map((name) => task(name)),
      limits: { concurrency: 2 },
      behave: () => ({ kind: "answer", text: "<findings/>", afterMs: 1_000 }),
    })
    const { outcomes, elapsed } = await finish()
    expect(outcomes.every((outcome) => outcome.status === "done")).toBe(true)
    expect(driver.peakBusy).toBe(2)
    expect(elapsed).toBe(3_000)
  })

  test("fails back to the next model of the chain on a retryable error", async () => {
    const { driver, breakers, finish } = start({
      tasks: [task("security", ["fake/primary", "fake/secondary"])],
      behave: (prompt) =>
        prompt.model === "fake/primary"
          ? {
              kind: "error",
              error: { name: "APIError", data: { message: "Service unavailable", statusCode: 503, isRetryable: true } },
            }
          : { kind: "answer", text: block("found on the secondary") },
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({
      status: "done",
      model: "fake/secondary",
      modelsTried: ["fake/primary", "fake/secondary"],
      attempts: 2,
    })
    expect(outcomes[0]!.sessionIDs).toHaveLength(2)
    expect(driver.prompts.map((prompt) => prompt.model)).toEqual(["fake/primary", "fake/secondary"])
    expect(breakers.state("fake/secondary")).toBe("closed")
  })

  test("does not fail back on an auth error: one request, then failed", async () => {
    const { driver, finish } = start({
      tasks: [task("security", ["fake/primary", "fake/secondary"])],
      behave: () => ({
        kind: "error",
        error: { name: "APIError", data: { message: "Incorrect API key", statusCode: 401, isRetryable: false } },
      }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({
      status: "failed",
      error: "APIError 401: Incorrect API key",
      attempts: 1,
      modelsTried: ["fake/primary"],
    })
    expect(driver.prompts).toHaveLength(1)
  })

  test("fails with every error of the chain when the last model fails too", async () => {
    const { finish } = start({
      tasks: [task("security", ["fake/one", "fake/two"])],
      behave: (prompt) => ({
        kind: "error",
        error: { name: "APIError", data: { message: `down ${prompt.model}`, statusCode: 529, isRetryable: true } },
      }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]!.status).toBe("failed")
    expect(outcomes[0]!.error).toBe(
      "fake/two: APIError 529: down fake/two; no model left to fail back to (after fake/one: APIError 529: down fake/one)",
    )
  })

  test("names every model of a longer chain and its error, oldest first, whether the last one is retryable or not", async () => {
    const down = (model: string): FakeBehaviour => ({
      kind: "error",
      error: { name: "APIError", data: { message: `down ${model}`, statusCode: 429, isRetryable: true } },
    })
    const exhausted = start({
      tasks: [task("security", ["fake/one", "fake/two", "fake/three"])],
      behave: (prompt) => down(prompt.model),
    })
    const { outcomes } = await exhausted.finish()
    expect(outcomes[0]!.error).toBe(
      "fake/three: APIError 429: down fake/three; no model left to fail back to (after fake/one: APIError 429: down fake/one; fake/two: APIError 429: down fake/two)",
    )
    const fatal = start({
      tasks: [task("security", ["fake/one", "fake/two", "fake/three"])],
      behave: (prompt) =>
        prompt.model === "fake/three"
          ? {
              kind: "error",
              error: { name: "APIError", data: { message: "bad key", statusCode: 401, isRetryable: false } },
            }
          : down(prompt.model),
    })
    const { outcomes: fatalOutcomes } = await fatal.finish()
    expect(fatalOutcomes[0]!.error).toBe(
      "fake/three: APIError 401: bad key (after fake/one: APIError 429: down fake/one; fake/two: APIError 429: down fake/two)",
    )
  })

  test("names the model of the last error after a failback", async () => {
    const { finish } = start({
      tasks: [task("security", ["fake/primary", "fake/secondary"])],
      behave: (prompt) =>
        prompt.model === "fake/primary"
          ? {
              kind: "error",
              error: { name: "APIError", data: { message: "down", statusCode: 503, isRetryable: true } },
            }
          : {
              kind: "error",
              error: { name: "APIError", data: { message: "bad key", statusCode: 401, isRetryable: false } },
            },
    })
    const { outcomes } = await finish()
    expect(outcomes[0]!.error).toBe("fake/secondary: APIError 401: bad key (after fake/primary: APIError 503: down)")
  })

  test("aborts a reviewer with no output for idleSeconds and keeps the others' findings", async () => {
    const { driver, finish } = start({
      tasks: [task("security"), task("performance", ["fake/hang"]), task("documentation")],
      limits: { idleMs: 2_000 },
      behave: (prompt) =>
        prompt.model === "fake/hang" ? { kind: "hang" } : { kind: "answer", text: block(prompt.agent), afterMs: 500 },
    })
    const { outcomes, elapsed } = await finish()
    expect(byName(outcomes, "performance")).toMatchObject({
      status: "failed",
      error: "fake/hang: no output for 2 s; no model left to fail back to",
    })
    expect(byName(outcomes, "security").findings).toHaveLength(1)
    expect(byName(outcomes, "documentation").findings).toHaveLength(1)
    expect(driver.aborted).toEqual([byName(outcomes, "performance").sessionIDs[0]])
    expect(elapsed).toBe(2_000)
  })

  test("fails back to the next model after a silent one", async () => {
    const { finish } = start({
      tasks: [task("performance", ["fake/hang", "fake/ok"])],
      limits: { idleMs: 2_000 },
      behave: (prompt) => (prompt.model === "fake/hang" ? { kind: "hang" } : { kind: "answer", text: "<findings/>" }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({ status: "done", model: "fake/ok", attempts: 2, findings: [] })
  })

  test("times a chatty reviewer out after its own timeoutMinutes", async () => {
    const { driver, finish } = start({
      tasks: [task("code-quality", ["fake/chatty", "fake/other"], 10), task("security", ["fake/chatty-too"], 5)],
      behave: () => ({ kind: "chatter", everyMs: 10_000 }),
    })
    const { outcomes } = await finish()
    expect(byName(outcomes, "security")).toMatchObject({
      status: "failed",
      error: "timeout after 5 min",
      durationMs: 5 * minute,
    })
    expect(byName(outcomes, "code-quality")).toMatchObject({
      status: "failed",
      error: "timeout after 10 min",
      durationMs: 10 * minute,
      attempts: 1,
    })
    expect(driver.aborted).toHaveLength(2)
  })

  test("aborts every remaining session when the overall budget is spent, and starts no queued reviewer", async () => {
    const { driver, finish } = start({
      tasks: [task("a"), task("b"), task("c")],
      limits: { concurrency: 2, overallMs: 3 * minute },
      behave: () => ({ kind: "chatter", everyMs: 5_000 }),
    })
    const { outcomes, elapsed } = await finish()
    expect(elapsed).toBe(3 * minute)
    expect(byName(outcomes, "a").error).toBe("overall budget of 3 min spent")
    expect(byName(outcomes, "b").error).toBe("overall budget of 3 min spent")
    expect(byName(outcomes, "c")).toMatchObject({
      status: "failed",
      error: "not started: the overall budget of 3 min was spent",
      attempts: 0,
      model: null,
    })
    expect(driver.aborted).toHaveLength(2)
    expect(driver.created).toHaveLength(2)
  })

  test("does not fail back when less than retryBudgetMinutes of the overall budget remain", async () => {
    const { driver, finish } = start({
      tasks: [task("security", ["fake/slow-fail", "fake/ok"])],
      limits: { overallMs: 5 * minute, retryBudgetMs: 2 * minute, idleMs: 10 * minute },
      behave: (prompt) =>
        prompt.model === "fake/slow-fail"
          ? {
              kind: "error",
              afterMs: 3.5 * minute,
              error: { name: "APIError", data: { message: "overloaded", statusCode: 503, isRetryable: true } },
            }
          : { kind: "answer", text: "<findings/>" },
    })
    const { outcomes } = await finish()
    expect(outcomes[0]!.status).toBe("failed")
    expect(outcomes[0]!.error).toBe(
      "fake/slow-fail: APIError 503: overloaded; no retry: 90 s of the overall budget left, 2 min needed (would fail back to fake/ok)",
    )
    expect(driver.prompts).toHaveLength(1)
  })

  test("fails back at once when OpenCode schedules its next retry after the deadline", async () => {
    const { driver, finish } = start({
      tasks: [task("security", ["fake/limited", "fake/ok"])],
      behave: (prompt) =>
        prompt.model === "fake/limited"
          ? { kind: "retry", nextInMs: 3_600_000, message: "Rate limit exceeded" }
          : { kind: "answer", text: "<findings/>", afterMs: 1_000 },
    })
    const { outcomes, elapsed } = await finish()
    expect(outcomes[0]).toMatchObject({ status: "done", model: "fake/ok", attempts: 2 })
    expect(elapsed).toBe(1_000)
    expect(driver.aborted).toHaveLength(1)
  })

  test("asks once more with the parse error after malformed findings, and takes the corrected answer", async () => {
    const { driver, finish } = start({
      tasks: [task("security")],
      behave: (prompt) => ({
        kind: "answer",
        text: prompt.turn === 0 ? '<findings><finding severity="bad"' : block("corrected"),
      }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({ status: "done", attempts: 1, followUps: 1 })
    expect(outcomes[0]!.findings.map((finding) => finding.title)).toEqual(["corrected"])
    expect(driver.prompts).toHaveLength(2)
    expect(driver.prompts[1]!.sessionID).toBe(driver.prompts[0]!.sessionID)
    expect(driver.prompts[1]!.text).toMatch(/^Your <findings> block could not be read: /)
    expect(driver.prompts[1]!.text).toContain("only the corrected <findings> block")
  })

  test("counts a reviewer as failed when the corrected answer is malformed too, without failing back", async () => {
    const { driver, breakers, finish } = start({
      tasks: [task("security", ["fake/one", "fake/two"])],
      behave: () => ({ kind: "answer", text: "no block at all" }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]!.status).toBe("failed")
    expect(outcomes[0]!.error).toMatch(/^malformed findings: no <findings> block found/)
    expect(driver.prompts.map((prompt) => prompt.model)).toEqual(["fake/one", "fake/one"])
    expect(breakers.state("fake/one")).toBe("closed")
  })

  test("asks for a shorter answer once when the answer was cut off at the output limit", async () => {
    const { driver, finish } = start({
      tasks: [task("security")],
      behave: (prompt) =>
        prompt.turn === 0
          ? { kind: "answer", text: '<findings><finding severity="warning" file="a"', finish: "length" }
          : { kind: "answer", text: block("short") },
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({ status: "done", followUps: 1 })
    expect(driver.prompts[1]!.text).toMatch(/cut off at the output limit/)
  })

  test("sums tokens and cost over every session and turn of a reviewer", async () => {
    const { finish } = start({
      tasks: [task("security", ["fake/down", "fake/up"])],
      behave: (prompt) =>
        prompt.model === "fake/down"
          ? { kind: "error", error: { name: "APIError", data: { message: "x", statusCode: 503, isRetryable: true } } }
          : {
              kind: "answer",
              text: prompt.turn === 0 ? "garbage" : "<findings/>",
              tokens: { input: 10, output: 5, cacheWrite: 2 },
              cost: 0.25,
            },
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({
      status: "done",
      costUsd: 0.5,
      tokens: { input: 20, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 4 },
    })
  })

  test("skips a model whose breaker is open and probes it again after the cooldown", async () => {
    const clock = createManualClock(0)
    const breakers = createBreakers({ failures: 1, cooldownMs: 2 * minute, now: () => clock.now() })
    breakers.fail("fake/primary")
    const first = start({
      clock,
      breakers,
      tasks: [task("security", ["fake/primary", "fake/secondary"])],
      behave: () => ({ kind: "answer", text: "<findings/>" }),
    })
    const { outcomes } = await first.finish()
    expect(outcomes[0]).toMatchObject({ status: "done", model: "fake/secondary", modelsTried: ["fake/secondary"] })
    await clock.advance(2 * minute)
    const second = start({
      clock,
      breakers,
      tasks: [
        task("security", ["fake/primary", "fake/secondary"]),
        task("performance", ["fake/primary", "fake/secondary"]),
      ],
      behave: () => ({ kind: "answer", text: "<findings/>" }),
    })
    const again = await second.finish()
    // Exactly one reviewer probes the half-open primary; the other fails back along its chain.
    expect(again.outcomes.map((outcome) => outcome.model).sort()).toEqual(["fake/primary", "fake/secondary"])
    expect(breakers.state("fake/primary")).toBe("closed")
  })

  test("fails a reviewer whose whole chain is behind open breakers without creating a session", async () => {
    const clock = createManualClock(0)
    const breakers = createBreakers({ failures: 1, cooldownMs: 2 * minute, now: () => clock.now() })
    breakers.fail("fake/one")
    breakers.fail("fake/two")
    const { driver, finish } = start({
      clock,
      breakers,
      tasks: [task("security", ["fake/one", "fake/two"])],
      behave: () => ({ kind: "hang" }),
    })
    const { outcomes } = await finish()
    expect(outcomes[0]).toMatchObject({
      status: "failed",
      error: "no model available: circuit open for fake/one, fake/two",
      attempts: 0,
    })
    expect(driver.created).toHaveLength(0)
  })

  test("opens a model's breaker after three reviewers failed on it, so later reviewers skip it", async () => {
    const { breakers, driver, finish } = start({
      tasks: ["a", "b", "c", "d"].map((name) => task(name, ["fake/flaky", "fake/steady"])),
      limits: { concurrency: 3 },
      behave: (prompt) =>
        prompt.model === "fake/flaky"
          ? {
              kind: "error",
              error: { name: "APIError", data: { message: "overloaded", statusCode: 503, isRetryable: true } },
            }
          : { kind: "answer", text: "<findings/>" },
    })
    const { outcomes } = await finish()
    expect(outcomes.every((outcome) => outcome.status === "done" && outcome.model === "fake/steady")).toBe(true)
    expect(breakers.state("fake/flaky")).toBe("open")
    expect(driver.prompts.filter((prompt) => prompt.model === "fake/flaky")).toHaveLength(3)
    expect(byName(outcomes, "d").modelsTried).toEqual(["fake/steady"])
  })

  test("aborts every child when the parent is aborted", async () => {
    const controller = new AbortController()
    const { driver, clock, finish } = start({
      tasks: [task("a"), task("b"), task("c")],
      limits: { concurrency: 2 },
      signal: controller.signal,
      behave: () => ({ kind: "chatter", everyMs: 1_000 }),
    })
    await clock.advance(5_000)
    controller.abort()
    const { outcomes, elapsed } = await finish()
    expect(elapsed).toBe(5_000)
    expect(outcomes.map((outcome) => outcome.error)).toEqual([
      "aborted: the coordinator's session was aborted",
      "aborted: the coordinator's session was aborted",
      "not started: the coordinator's session was aborted",
    ])
    expect(driver.aborted).toHaveLength(2)
    expect(driver.busy()).toEqual([])
  })

  test("completes through the status poll when no bus event arrives", async () => {
    const { finish } = start({
      tasks: [task("security"), task("performance")],
      events: false,
      pollMs: 3_000,
      behave: (prompt) => ({ kind: "answer", text: block(prompt.agent), afterMs: 1_000 }),
    })
    const { outcomes, elapsed } = await finish()
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["done", "done"])
    expect(elapsed).toBe(3_000)
  })
})

describe("startReviewers", () => {
  // What every batch here is started with besides its tasks, limits and hooks.
  const batchOptions = (clock: ManualClock, driver: FakeDriver, monitor: SessionMonitor) => ({
    parentID: "ses_parent",
    driver,
    monitor,
    clock,
    breakers: createBreakers({ failures: 3, cooldownMs: 2 * minute, now: () => clock.now() }),
    parse: (text: string) => parseFindings(text),
  })
  // Moves the manual clock from one sleeper to the next until the batch has every outcome.
  const settle = async (clock: ManualClock, batch: ReviewerBatch) => {
    let settled = false
    void batch.outcomes.then(() => (settled = true))
    for (let step = 0; !settled && step < 100; step += 1) {
      await clock.settle()
      if (!settled) await clock.next()
    }
    return batch.outcomes
  }
  test("a note sent just as a reviewer's turn ends is answered in a turn of its own, which the reviewer waits for", async () => {
    const clock = createManualClock(1_000_000)
    const driver = createFakeDriver(clock, (prompt) => ({
      kind: "answer",
      text: block(prompt.turn === 0 ? "before the note" : "after the note"),
      afterMs: 1_000,
    }))
    const monitor = createSessionMonitor({ driver, clock, pollMs: 3_000 })
    let batch: ReturnType<typeof startReviewers> | null = null
    let noted = false
    // The note goes out between OpenCode's idle and the scheduler seeing it: the race a real run can hit.
    driver.connect((event) => {
      const type = (event as { type: string }).type
      if (type === "session.idle" && !noted) {
        noted = true
        void batch!.note("security", "look at the token check")
      }
      monitor.handle(event)
    })
    batch = startReviewers({
      tasks: [task("security")],
      ...batchOptions(clock, driver, monitor),
      limits: defaults,
    })
    const [outcome] = await settle(clock, batch)
    expect(driver.prompts.map((prompt) => prompt.turn)).toEqual([0, 1])
    expect(driver.prompts[1]!.text).toContain("- look at the token check")
    expect(outcome!.findings.map((finding) => finding.title)).toEqual(["after the note"])
  })

  test("a note for a reviewer that has not started joins its first message", async () => {
    const clock = createManualClock(1_000_000)
    const driver = createFakeDriver(clock, () => ({ kind: "answer", text: "<findings/>", afterMs: 1_000 }))
    const monitor = createSessionMonitor({ driver, clock, pollMs: 3_000 })
    driver.connect((event) => monitor.handle(event))
    const batch = startReviewers({
      tasks: [task("security"), task("performance")],
      ...batchOptions(clock, driver, monitor),
      limits: { ...defaults, concurrency: 1 },
    })
    expect(await batch.note("performance", "the cache loop")).toBe("queued")
    expect(await batch.note("nobody", "x")).toBe("unknown")
    await settle(clock, batch)
    const performance = driver.prompts.find((prompt) => prompt.agent === "performance")!
    expect(performance.turn).toBe(0)
    expect(performance.text).toContain(`${task("performance").message}\n\nFocus notes from the coordinator`)
    expect(performance.text).toContain("- the cache loop")
    expect(await batch.note("performance", "too late")).toBe("finished")
  })

  test("a reviewer carried over from an earlier process is not run again, takes no slot and reports its outcome", async () => {
    const clock = createManualClock(1_000_000)
    const driver = createFakeDriver(clock, () => ({ kind: "answer", text: "<findings/>", afterMs: 1_000 }))
    const monitor = createSessionMonitor({ driver, clock, pollMs: 3_000 })
    driver.connect((event) => monitor.handle(event))
    const earlier = reviewerOutcome("security", { sessionIDs: ["ses_earlier"], durationMs: 4_000, costUsd: 0.5 })
    const reported: [string, number, number][] = []
    const batch = startReviewers({
      tasks: [task("security"), task("performance")],
      ...batchOptions(clock, driver, monitor),
      limits: { ...defaults, concurrency: 1 },
      carried: [earlier],
      onOutcome: (outcome, finished, total) => reported.push([outcome.name, finished, total]),
    })
    // Finished from the start: a note to it is late, not queued for a first message it never gets.
    expect(await batch.note("security", "the token check")).toBe("finished")
    const outcomes = await settle(clock, batch)
    expect(outcomes.map((outcome) => outcome.name)).toEqual(["security", "performance"])
    expect(outcomes[0]).toBe(earlier)
    expect(driver.prompts.map((prompt) => prompt.agent)).toEqual(["performance"])
    // With one slot, performance still ran at once: the carried reviewer took none.
    expect(clock.now() - 1_000_000).toBe(1_000)
    expect(reported).toEqual([
      ["security", 1, 2],
      ["performance", 2, 2],
    ])
  })
})
