import { describe, expect, test } from "vitest"
import { cacheHitRate, costOf, ReviewUsage, reviewUsage, reviewUsageTotal, tallyUsage } from "./usage"

const tokens = { input: 1_000, output: 200, cacheRead: 4_000, cacheWrite: 0 }

describe("usage", () => {
  test("costOf prices cached tokens at input's price unless given their own", () => {
    expect(costOf(tokens, { input: 3, output: 15 })).toBeCloseTo((1_000 * 3 + 200 * 15 + 4_000 * 3) / 1e6, 12)
    expect(costOf(tokens, { input: 3, output: 15, cacheRead: 0.3 })).toBeCloseTo(
      (1_000 * 3 + 200 * 15 + 4_000 * 0.3) / 1e6,
      12,
    )
  })

  test("tallyUsage sums per agent and per model, keeps the provider's cost, prices only what has none", () => {
    const usage = tallyUsage(
      [
        { agent: "review_coordinator", model: "a/top", tokens, costUsd: 0.01 },
        { agent: "review_coordinator", model: "a/top", tokens, costUsd: 0.02 },
        { agent: "security", model: "b/unpriced", tokens, costUsd: 0 },
        { agent: "docs", model: null, tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, costUsd: 0 },
      ],
      (model) => (model === "b/unpriced" ? { input: 1, output: 2 } : null),
    )
    expect(usage.byAgent.review_coordinator).toEqual({
      input: 2_000,
      output: 400,
      cacheRead: 8_000,
      cacheWrite: 0,
      costUsd: 0.03,
      cacheHitRate: 0.8,
    })
    expect(usage.byAgent.security!.costUsd).toBe(0.0054)
    expect(usage.byAgent.docs!.cacheHitRate).toBe(0)
    expect(Object.keys(usage.byModel)).toEqual(["a/top", "b/unpriced"])
    expect(usage.costUsd).toBe(0.0354)
    expect(usage.cacheHitRate).toBe(0.8)
    expect(reviewUsageTotal(usage)).toMatchObject({ input: 3_000, costUsd: 0.0354, cacheHitRate: 0.8 })
    expect(ReviewUsage.parse(usage)).toEqual(usage)
  })

  test("costOf prices reasoning tokens, which output leaves out, at the output price as OpenCode does", () => {
    expect(costOf({ ...tokens, reasoning: 300 }, { input: 3, output: 15 })).toBeCloseTo(
      (1_000 * 3 + (200 + 300) * 15 + 4_000 * 3) / 1e6,
      12,
    )
    const usage = tallyUsage(
      [{ agent: "security", model: "b/unpriced", tokens: { ...tokens, reasoning: 300 }, costUsd: 0 }],
      () => ({ input: 1, output: 2 }),
    )
    expect(usage.byAgent.security).toMatchObject({ output: 200, costUsd: 0.006 })
  })

  test("cacheHitRate is cache reads over all prompt tokens, to 3 decimals, 0 without a prompt", () => {
    expect(cacheHitRate({ input: 1_000, cacheRead: 4_000, cacheWrite: 0 })).toBe(0.8)
    expect(cacheHitRate({ input: 2_000, cacheRead: 1_000, cacheWrite: 0 })).toBe(0.333)
    expect(cacheHitRate({ input: 1_000, cacheRead: 2_000, cacheWrite: 1_000 })).toBe(0.5)
    expect(cacheHitRate({ input: 0, cacheRead: 0, cacheWrite: 0 })).toBe(0)
    expect(cacheHitRate({ input: 0, cacheRead: 10, cacheWrite: 0 })).toBe(1)
  })

  test("reviewUsage rates each agent and model and the whole review from their own tokens", () => {
    const usage = reviewUsage({
      byAgent: {
        review_coordinator: { input: 1_000, output: 10, cacheRead: 3_000, cacheWrite: 0, costUsd: 0.5 },
        security: { input: 3_000, output: 10, cacheRead: 0, cacheWrite: 1_000, costUsd: 0.25 },
      },
      byModel: {
        "a/top": { input: 1_000, output: 10, cacheRead: 3_000, cacheWrite: 0, costUsd: 0.5 },
        "b/fast": { input: 3_000, output: 10, cacheRead: 0, cacheWrite: 1_000, costUsd: 0.25 },
      },
    })
    expect(usage.byAgent.review_coordinator!.cacheHitRate).toBe(0.75)
    expect(usage.byAgent.security!.cacheHitRate).toBe(0)
    expect(usage.byModel["a/top"]!.cacheHitRate).toBe(0.75)
    expect(usage.cacheHitRate).toBe(0.375)
    expect(usage.costUsd).toBe(0.75)
    // The fields stay in their order, the rate last.
    expect(Object.keys(usage)).toEqual(["byAgent", "byModel", "costUsd", "cacheHitRate"])
    expect(Object.keys(usage.byAgent.security!)).toEqual([
      "input",
      "output",
      "cacheRead",
      "cacheWrite",
      "costUsd",
      "cacheHitRate",
    ])
  })
})
