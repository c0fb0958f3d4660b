import { describe, expect, test } from "vitest"
import { costOf, reviewUsageTotal, tallyUsage } from "./usage"

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
    })
    expect(usage.byAgent.security!.costUsd).toBe(0.0054)
    expect(Object.keys(usage.byModel)).toEqual(["a/top", "b/unpriced"])
    expect(usage.costUsd).toBe(0.0354)
    expect(reviewUsageTotal(usage)).toMatchObject({ input: 3_000, costUsd: 0.0354 })
  })
})
