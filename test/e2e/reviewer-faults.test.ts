import { readFile } from "node:fs/promises"
import { join } from "node:path"
import {
  findingsReply,
  type RecordedRequest,
  type Reply,
  rateLimitReply,
  resetReply,
  stallReply,
} from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import {
  cleanUp,
  gitlabScenario,
  type Run,
  type Scenario,
  specialists,
  sqlFinding,
  summaryNotes,
  threads,
} from "./harness"

// A reviewer's model stream failing mid-review, end to end: the real opencode binary, the scripted
// model, the GitLab fake. A rate limit or a reset is retried (by OpenCode, honouring Retry-After) and
// the findings arrive; a stall is cut short and fails back along the reviewer's chain; a reviewer
// that finally fails is listed in coverage.failedReviewers and in the summary note. Never does a
// reviewer silently vanish: every planned reviewer either finished (its findings in review.json) or
// is listed as failed with an error that says what happened.

afterEach(cleanUp)

// The full tier for the harness's change (src/auth/login.ts): six reviewers, release not planned.
const planned = ["security", "code-quality", "performance", "compliance", "documentation", "agents-md"]

const perfFinding = {
  severity: "warning" as const,
  file: "src/auth/login.ts",
  line: 1,
  category: "performance",
  title: "Query per login without an index",
  body: "Every login scans the users table.",
}

/** `failure` for the first `count` requests of a model, then `answer`. */
function failFirst(count: number, failure: Reply, answer: Reply): (request: RecordedRequest) => Reply {
  let seen = 0
  return () => (++seen <= count ? failure : answer)
}

/**
 * Every specialist on its own fake model, with the given chains instead. A chain's models are
 * numbered members of one family ("performance-1", "performance"): failback stays within a family.
 */
function chains(overrides: Record<string, string[]>): Record<string, { model: string[] }> {
  return Object.fromEntries(specialists.map((name) => [name, { model: overrides[name] ?? [`fake/${name}`] }]))
}

// Short enough that a stall costs seconds: the provider drops a stream silent for 2 s (OpenCode's
// chunkTimeout through the gateway plugin), and a reviewer silent for 3 s is aborted.
const stallSettings = {
  providerTimeouts: { chunkSeconds: 2, headerSeconds: 2 },
  limits: { heartbeatSeconds: 30, idleSeconds: 3 },
}

// "In seconds": what these faults cost with the settings above, on a machine that may be busy
// with other tests. The failures they guard against take a minute or more (a reviewer silent until
// the default idle limit, OpenCode's own five retries with backoff), so the bound stays well below.
const inSecondsMs = 40_000

const requestsFor = (scenario: Scenario, model: string) =>
  scenario.server.requests.filter((request) => request.model === model && !request.isTitle)

interface ProgressEnd {
  name: string
  status: string
  error: string | null
  model: string | null
  findings: number
}

/**
 * The "never silently vanishes" check: every reviewer of the plan ended exactly once; the failed ones
 * are exactly coverage.failedReviewers with the same errors; each one that finished has its findings
 * in review.json; and the coordinator was told about every failure in its tool result.
 */
async function accountedFor(
  scenario: Scenario,
  run: Run,
): Promise<{ ends: ProgressEnd[]; starts: { name: string; model: string; attempt: number }[] }> {
  const work = join(scenario.outputDir, "work")
  const plan = JSON.parse(await readFile(join(work, "plan.json"), "utf8")) as {
    agents: { name: string; role: string }[]
  }
  expect(plan.agents.filter((agent) => agent.role === "reviewer").map((agent) => agent.name)).toEqual(planned)
  const entries = (await readFile(join(work, "progress.jsonl"), "utf8"))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  const ends = entries.filter((entry) => entry.event === "reviewer-end") as unknown as ProgressEnd[]
  const starts = entries.filter((entry) => entry.event === "reviewer-start") as unknown as {
    name: string
    model: string
    attempt: number
  }[]
  expect(ends.map((end) => end.name).sort()).toEqual([...planned].sort())
  const record = run.record!
  const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name)
  const failed = ends.filter((end) => end.status !== "done")
  expect([...record.coverage.failedReviewers].sort(byName)).toEqual(
    failed.map((end) => ({ name: end.name, error: end.error })).sort(byName),
  )
  for (const failure of record.coverage.failedReviewers) {
    expect(failure.error, failure.name).not.toMatch(/undefined|null|\[object/)
    expect(failure.error.length, failure.name).toBeGreaterThan(10)
  }
  for (const end of ends.filter((candidate) => candidate.status === "done")) {
    expect(
      record.findings.filter((finding) => finding.reviewer === end.name),
      end.name,
    ).toHaveLength(end.findings)
  }
  // The coordinator's tool result named every failed reviewer (the scripted coordinator echoes them).
  const judged = requestsFor(scenario, "coordinator").find((request) => request.toolResults.length === 1)!
  for (const end of failed)
    expect(judged.toolResults[0]!.content).toContain(`<reviewer_result name="${end.name}" status="failed"`)
  return { ends, starts }
}

/** Runs the scenario and prints how long the whole review took. */
async function timed(label: string, scenario: Scenario, env: Record<string, string>): Promise<Run & { ms: number }> {
  const started = performance.now()
  const run = await scenario.run({ env })
  const ms = Math.round(performance.now() - started)
  console.info(`${label}: review ${ms} ms, exit ${run.code}`)
  return { ...run, ms }
}

describe("a reviewer's model stream failing mid-review", () => {
  test("429 with retry-after: 1 on the first request: OpenCode waits the second it was told, retries, and the findings arrive", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        replies: { "fake/security": failFirst(1, rateLimitReply({ retryAfter: 1 }), findingsReply([sqlFinding])) },
      },
    })
    const run = await timed("429 retry-after 1", scenario, env)
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    expect(record.coverage).toMatchObject({ failedReviewers: [], complete: true })
    expect(record.decision).toBe("significant_concerns")
    expect(record.findings).toEqual([
      expect.objectContaining({ reviewer: "security", title: sqlFinding.title, file: sqlFinding.file, line: 2 }),
    ])
    const { starts } = await accountedFor(scenario, run)
    // Retried inside the same session by OpenCode, not failed back: one attempt on one model.
    expect(starts.filter((start) => start.name === "security").map((start) => [start.model, start.attempt])).toEqual([
      ["fake/security", 1],
    ])
    const [limited, retried, ...more] = requestsFor(scenario, "security")
    expect(more).toEqual([])
    expect(limited!.reply).toMatchObject({ type: "status", status: 429, headers: { "retry-after": "1" } })
    expect(retried!.reply!.type).toBe("text")
    // Honoured: at least the second asked for. OpenCode's own first backoff without the header is
    // 2 s or more (2000 ms + jitter), so a gap below 2 s shows the header, not the default, decided.
    const gap = retried!.at - limited!.finishedAt!
    expect(gap).toBeGreaterThanOrEqual(950)
    expect(gap).toBeLessThan(2_000)
    console.info(`429 retry-after 1: retried after ${gap} ms`)
    // On GitLab: the finding's thread, and a summary that does not call the review partial.
    expect(threads(fake).map((thread) => thread.notes[0]!.body)).toEqual([expect.stringContaining(sqlFinding.title)])
    const [summary, ...others] = summaryNotes(fake)
    expect(others).toEqual([])
    expect(summary!.body).toContain("Every scheduled reviewer finished.")
    expect(summary!.body).not.toMatch(/Partial review|Incomplete review/)
    expect(run.ms).toBeLessThan(inSecondsMs)
  })

  test("a connection reset mid-answer: OpenCode retries the stream and the findings arrive", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        replies: {
          "fake/security": failFirst(
            1,
            resetReply("Reviewed the change; the query in src/auth"),
            findingsReply([sqlFinding]),
          ),
        },
      },
    })
    const run = await timed("reset mid-stream", scenario, env)
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    expect(record.coverage).toMatchObject({ failedReviewers: [], complete: true })
    expect(record.findings).toEqual([expect.objectContaining({ reviewer: "security", title: sqlFinding.title })])
    const { starts } = await accountedFor(scenario, run)
    expect(starts.filter((start) => start.name === "security").map((start) => [start.model, start.attempt])).toEqual([
      ["fake/security", 1],
    ])
    const [reset, retried, ...more] = requestsFor(scenario, "security")
    expect(more).toEqual([])
    expect(reset!.reply).toMatchObject({ type: "reset", text: expect.any(String) })
    expect(retried!.reply!.type).toBe("text")
    expect(retried!.at).toBeGreaterThan(reset!.finishedAt!)
    expect(threads(fake)).toHaveLength(1)
    expect(summaryNotes(fake)[0]!.body).not.toMatch(/Partial review|Incomplete review/)
    expect(run.ms).toBeLessThan(inSecondsMs)
  })

  test("a stalled stream with a two-model chain: the stalled model is dropped in seconds and the next one's findings arrive", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        replies: {
          "fake/performance-1": stallReply("Reviewed the change; looking at"),
          "fake/performance": findingsReply([perfFinding]),
        },
        config: { ...stallSettings, reviewers: chains({ performance: ["fake/performance-1", "fake/performance"] }) },
      },
    })
    const run = await timed("stall, two-model chain", scenario, env)
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    expect(record.coverage).toMatchObject({ failedReviewers: [], complete: true })
    expect(record.findings.map((finding) => [finding.reviewer, finding.title]).sort()).toEqual([
      ["performance", perfFinding.title],
      ["security", sqlFinding.title],
    ])
    const { starts } = await accountedFor(scenario, run)
    expect(starts.filter((start) => start.name === "performance").map((start) => [start.model, start.attempt])).toEqual(
      [
        ["fake/performance-1", 1],
        ["fake/performance", 2],
      ],
    )
    expect(run.stderr).toMatch(/performance\s+failing back to fake\/performance/)
    // The provider's chunk timeout (2 s, from providerTimeouts through the gateway plugin) closed the
    // stalled stream, not OpenCode's default 300 s.
    const config = JSON.parse(await readFile(join(scenario.outputDir, "work", "opencode.json"), "utf8"))
    expect(config.provider.fake.options).toMatchObject({ chunkTimeout: 2_000, headerTimeout: 2_000 })
    // One request: aborting the session also cancelled OpenCode's own retry of the stalled stream.
    const [stalled, ...retries] = requestsFor(scenario, "performance-1")
    expect(retries).toEqual([])
    expect(stalled!.reply!.type).toBe("stall")
    expect(stalled!.finishedAt! - stalled!.at).toBeGreaterThanOrEqual(1_900)
    expect(stalled!.finishedAt! - stalled!.at).toBeLessThan(2_900)
    const [backup, ...more] = requestsFor(scenario, "performance")
    expect(more).toEqual([])
    // Failed back after the 3 s idle limit, well before OpenCode's retries of the stall would end.
    expect(backup!.at - stalled!.at).toBeGreaterThanOrEqual(2_900)
    expect(backup!.at - stalled!.at).toBeLessThan(6_000)
    console.info(`stall failback: second model asked ${backup!.at - stalled!.at} ms after the stalled request`)
    expect(
      threads(fake)
        .map((thread) => thread.notes[0]!.body)
        .join("\n"),
    ).toContain(perfFinding.title)
    expect(summaryNotes(fake)[0]!.body).not.toMatch(/Partial review|Incomplete review/)
    expect(run.ms).toBeLessThan(inSecondsMs)
  })

  test("a stalled stream with a one-model chain, not security: listed as failed with why, the review incomplete, never approved", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        replies: { "fake/documentation": stallReply("Reviewed the docs; looking at") },
        config: stallSettings,
      },
    })
    const run = await timed("stall, one-model chain (documentation)", scenario, env)
    // One non-security reviewer of six failing: incomplete (no approval whatever the findings); the
    // security finding still decides the exit code.
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    expect(record.coverage.complete).toBe(false)
    expect(record.decision).toBe("significant_concerns")
    expect(record.coverage.failedReviewers).toEqual([
      {
        name: "documentation",
        error: expect.stringMatching(/^fake\/documentation: no output for 3 s\b.*; no model left to fail back to$/),
      },
    ])
    expect(record.findings.map((finding) => finding.reviewer)).toEqual(["security"])
    await accountedFor(scenario, run)
    expect(run.stderr).toMatch(/documentation\s+FAILED: fake\/documentation: no output for 3 s/)
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("### AI code review: ⚠️ incomplete, not approved: documentation did not finish")
    expect(summary).toMatch(/> \*\*Incomplete review\.\*\* documentation \(fake\/documentation: no output for 3 s/)
    expect(summary).toContain("Failed reviewers: documentation.")
    expect(threads(fake)).toHaveLength(1)
    expect(run.ms).toBeLessThan(inSecondsMs)
  })

  test("the security reviewer's stream stalling: listed as failed, the review incomplete, never approved, exit 1", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: { replies: { "fake/security": stallReply("Reviewed the change; looking at") }, config: stallSettings },
    })
    const run = await timed("stall, security", scenario, env)
    expect(run.code, run.stderr).toBe(1)
    const record = run.record!
    expect(record.coverage.complete).toBe(false)
    // Nothing else found anything: the findings alone would approve; the missing security review forbids it.
    expect(record.findings).toEqual([])
    expect(record.decision).toBe("minor_issues")
    expect(record.coverage.failedReviewers).toEqual([
      { name: "security", error: expect.stringMatching(/^fake\/security: no output for 3 s\b/) },
    ])
    await accountedFor(scenario, run)
    expect(run.stderr).toMatch(
      /error: the review is incomplete: the security review did not run; 1 of \d planned reviewers did not finish \(security: fake\/security: no output for 3 s/,
    )
    expect(fake.state.approvals).toEqual([])
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("AI code review: ⚠️ incomplete, not approved: security did not finish")
    expect(summary).toMatch(
      /> \*\*Incomplete review\.\*\* security \(fake\/security: no output for 3 s.*\) did not finish/,
    )
    expect(summary).not.toContain("✅")
    expect(run.ms).toBeLessThan(inSecondsMs)
  })

  test("429 on every model of the chain: listed as failed with the 429 named, the summary says so, in seconds", async () => {
    const busy = rateLimitReply({ retryAfterMs: 0 })
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        replies: { "fake/performance-1": busy, "fake/performance-2": busy },
        config: {
          reviewers: chains({ performance: ["fake/performance-1", "fake/performance-2"] }),
          limits: { heartbeatSeconds: 30 },
        },
      },
    })
    const run = await timed("429 until the chain is exhausted", scenario, env)
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    expect(record.coverage.complete).toBe(false)
    expect(record.decision).toBe("significant_concerns")
    const [failure, ...others] = record.coverage.failedReviewers
    expect(others).toEqual([])
    expect(failure).toEqual({
      name: "performance",
      error: expect.stringContaining("APIError 429: Rate limit exceeded (model-server)"),
    })
    expect(failure!.error).toContain("no model left to fail back to")
    // Both models of the chain are named: the reader sees the chain was tried, not one model.
    expect(failure!.error).toMatch(
      /^fake\/performance-2: APIError 429: .*; no model left to fail back to \(after fake\/performance-1: APIError 429: /,
    )
    const { starts } = await accountedFor(scenario, run)
    expect(starts.filter((start) => start.name === "performance").map((start) => [start.model, start.attempt])).toEqual(
      [
        ["fake/performance-1", 1],
        ["fake/performance-2", 2],
      ],
    )
    // OpenCode's own five retries per model (retry-after-ms: 0: immediate), then the failback.
    const a = requestsFor(scenario, "performance-1")
    const b = requestsFor(scenario, "performance-2")
    expect(a).toHaveLength(6)
    expect(b).toHaveLength(6)
    expect(b[0]!.at).toBeGreaterThan(a.at(-1)!.finishedAt!)
    const spent = b.at(-1)!.finishedAt! - a[0]!.at
    expect(spent).toBeLessThan(5_000)
    console.info(`429 exhausted: 12 requests over ${spent} ms`)
    expect(run.stderr).toMatch(/performance\s+FAILED: .*429/)
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toMatch(/> \*\*Incomplete review\.\*\* performance \([^)]*429/)
    expect(summary).toContain("Failed reviewers: performance.")
    expect(run.ms).toBeLessThan(inSecondsMs)
  })
})
