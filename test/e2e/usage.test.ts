import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { findingsReply, type RecordedRequest, statusReply, text, toolCall } from "@opencode-reviewer/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { cleanUp, createScenario, type Run, type Scenario, specialists } from "./harness"

// What a review cost, end to end: the scripted model plays a provider with OpenAI's automatic prompt
// cache, and review.json must add up exactly what it reported, cache reads included, priced at the
// config's rates (the harness gives every model input 3, output 15, cache read 0.3 USD per million).

const price = { input: 3, output: 15, cacheRead: 0.3 }

/**
 * Tokens as OpenCode reports them from the server's usage (input is the uncached part of the
 * prompt); a request answered with an error reported none.
 */
function tokensOf(requests: readonly RecordedRequest[]) {
  const answered = requests.filter((request) => request.promptTokens !== undefined)
  const sum = (pick: (request: RecordedRequest) => number) =>
    answered.reduce((total, request) => total + pick(request), 0)
  return {
    input: sum((request) => request.promptTokens! - request.cachedTokens!),
    output: sum((request) => request.completionTokens!),
    cacheRead: sum((request) => request.cachedTokens!),
    cacheWrite: 0,
  }
}

function costOf(tokens: ReturnType<typeof tokensOf>): number {
  return (tokens.input * price.input + tokens.output * price.output + tokens.cacheRead * price.cacheRead) / 1e6
}

describe("review usage with a provider prompt cache", () => {
  // One review for two tests (each opencode process costs seconds of CPU to start): every reviewer
  // on one model, as a team would run them, and a coordinator, fake/top, that collects the
  // reviewers, then answers 503 until the coordinator fails back to fake/coordinator in a new
  // OpenCode process. The reviewers had finished: their results are carried over from the work dir,
  // not run and paid for a second time.
  describe("a review whose coordinator fails back after its reviewers finished", () => {
    let scenario: Scenario
    let run: Run
    let requests: RecordedRequest[]

    beforeAll(async () => {
      scenario = await createScenario({
        server: { promptCache: true },
        coordinator: ["fake/top", "fake/coordinator"],
        replies: {
          "fake/reviewer": findingsReply([]),
          "fake/top": (request) =>
            request.toolResults.length === 0
              ? toolCall("spawn_reviewers", {})
              : statusReply(503, { message: "overloaded", headers: { "retry-after-ms": "0" } }),
        },
        config: { reviewers: Object.fromEntries(specialists.map((name) => [name, { model: "fake/reviewer" }])) },
      })
      run = await scenario.run()
      requests = scenario.server.requests.filter((request) => !request.isTitle)
    }, 120_000)

    afterAll(cleanUp)

    test("review.json counts every reported request once, with its cache reads, price and hit rate", async () => {
      expect(run.code).toBe(0)
      const usage = run.record!.usage
      const reviewers = requests.filter((request) => request.model === "reviewer")
      expect(reviewers).toHaveLength(6)
      expect(reviewers.every((request) => request.promptTokens !== undefined)).toBe(true)
      // The first reviewer request fills the cache; the others read from it the start they share
      // (the tool definitions and the rules every reviewer gets, before its own prompt).
      expect(reviewers.filter((request) => request.cachedTokens! > 0)).toHaveLength(5)
      expect(usage.byModel["fake/reviewer"]).toMatchObject(tokensOf(reviewers))
      // Per agent: one session each, so the six agents' cache reads are the six requests'.
      const agents = Object.entries(usage.byAgent).filter(([name]) => name !== "review_coordinator")
      expect(agents).toHaveLength(6)
      const byValue = (a: number, b: number) => a - b
      expect(agents.map(([, entry]) => entry.cacheRead).sort(byValue)).toEqual(
        reviewers.map((request) => request.cachedTokens!).sort(byValue),
      )
      for (const [name, entry] of agents) {
        const rate = Math.round((entry.cacheRead / (entry.input + entry.cacheRead)) * 1_000) / 1_000
        expect(entry.cacheHitRate, name).toBe(rate)
      }

      // The failback coordinator's second request extends its first and reads it from the cache. It
      // is the one that calls submit_review: the CLI ends the run on that step's step_finish, so it
      // is counted, and the closing turn OpenCode would send next never goes out (the runtime plugin
      // holds it).
      const coordinator = requests.filter((request) => request.model === "coordinator")
      expect(coordinator).toHaveLength(2)
      expect(coordinator.every((request) => request.promptTokens !== undefined)).toBe(true)
      const submit = coordinator.at(-1)!
      expect(submit.reply).toMatchObject({ type: "tool", name: "review_submit_review" })
      expect(submit.cachedTokens).toBeGreaterThan(0)
      expect(usage.byModel["fake/coordinator"]).toMatchObject(tokensOf(coordinator))

      // The whole review: every request once, priced at the config's rates.
      const total = tokensOf(requests)
      expect(total.cacheRead).toBeGreaterThan(5 * 1_024)
      const entries = Object.values(usage.byModel)
      expect(entries.reduce((sum, entry) => sum + entry.cacheRead, 0)).toBe(total.cacheRead)
      expect(entries.reduce((sum, entry) => sum + entry.input, 0)).toBe(total.input)
      expect(usage.costUsd).toBeCloseTo(costOf(total), 5)
      const rate = Math.round((total.cacheRead / (total.input + total.cacheRead)) * 1_000) / 1_000
      expect(usage.cacheHitRate).toBe(rate)
      expect(rate).toBeGreaterThan(0.2)

      // review.md and the CLI's closing lines show the hit rate beside the cache reads.
      const shown = `${total.cacheRead.toLocaleString("en-US")} cache read, 0 cache write (${Math.round(rate * 100)} % cache hits)`
      expect(await readFile(join(scenario.outputDir, "review.md"), "utf8")).toContain(shown)
      expect(run.stdout).toContain(shown)
    })

    test("a coordinator that fails back after its reviewers finished gets their results without running them again, each request counted once", () => {
      expect(run.code).toBe(0)
      expect(run.stderr).toMatch(/failing back to fake\/coordinator/)
      const usage = run.record!.usage
      const top = requests.filter((request) => request.model === "top")
      expect(top.filter((request) => request.promptTokens !== undefined)).toHaveLength(1)
      expect(top.length).toBeGreaterThan(2)
      const reviewers = requests.filter((request) => request.model === "reviewer")
      expect(reviewers).toHaveLength(6)
      const coordinator = requests.filter((request) => request.model === "coordinator")
      expect(coordinator.at(-1)!.reply).toMatchObject({ type: "tool", name: "review_submit_review" })
      // The failback's spawn_reviewers returned the six results, and said where they came from.
      const results = coordinator.flatMap((request) => request.toolResults.map((result) => result.content))
      const collected = results.find((content) => content.includes("<reviewer_result"))!
      expect(collected.match(/<reviewer_result name="[^"]+" status="done"/g)).toHaveLength(6)
      expect(collected).toContain("finished in an earlier attempt of this review, results carried over")
      expect(run.record!.coverage.complete).toBe(true)

      expect(usage.byModel["fake/top"]).toMatchObject(tokensOf(top))
      expect(usage.byModel["fake/reviewer"]).toMatchObject(tokensOf(reviewers))
      expect(usage.byModel["fake/coordinator"]).toMatchObject(tokensOf(coordinator))
      const counted = tokensOf(requests)
      expect(usage.byAgent.review_coordinator).toMatchObject(tokensOf([...top, ...coordinator]))
      expect(usage.costUsd).toBeCloseTo(costOf(counted), 5)
      expect(usage.cacheHitRate).toBe(
        Math.round((counted.cacheRead / (counted.input + counted.cacheRead)) * 1_000) / 1_000,
      )
    })
  })

  describe("a coordinator that never collects", () => {
    afterEach(cleanUp)

    test("reviewers the coordinator never collected are paid for and counted", async () => {
      // The reviewers start with the coordinator's first model call; this coordinator answers in
      // text without calling spawn_reviewers, after they finished (progress.jsonl says when).
      const scenario = await createScenario({
        server: { promptCache: true },
        replies: {
          "fake/reviewer": findingsReply([]),
          // Streamed slowly (8 pieces 400 ms apart), so the reviewers are long done when it ends.
          "fake/coordinator": () =>
            text("<review><summary>Looked myself.</summary><findings/></review>", { chunkSize: 8, delayMs: 400 }),
        },
        config: { reviewers: Object.fromEntries(specialists.map((name) => [name, { model: "fake/reviewer" }])) },
      })
      scenario.server.setLatency(500)
      const run = await scenario.run()
      const requests = scenario.server.requests.filter((request) => !request.isTitle)
      const reviewers = requests.filter((request) => request.model === "reviewer")
      expect(reviewers).toHaveLength(6)
      const usage = run.record!.usage
      expect(usage.byModel["fake/reviewer"]).toMatchObject(tokensOf(reviewers))
      expect(usage.costUsd).toBeCloseTo(costOf(tokensOf(requests)), 5)
      // Not collected, so not judged: the review says every planned reviewer did not run.
      expect(run.record!.coverage.complete).toBe(false)
    })
  })
})
