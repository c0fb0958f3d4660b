import { describe, expect, test } from "vitest"
import { parseConfig } from "../config/config"
import { selectAgents } from "./agents"
import type { Tier } from "./risk"
import { capSpend, estimateCost, priceOf } from "./spend"

const signals = { release: [], agentsMd: [], security: [] }
const config = (extra: Record<string, unknown>) =>
  parseConfig({
    models: { top: ["p/top"], standard: ["p/std"], light: ["p/light"] },
    prices: {
      "p/top": { input: 15, output: 75 },
      "p/std": { input: 3, output: 15 },
      "p/light": { input: 0.5, output: 2 },
    },
    ...extra,
  }).config
const select = (cfg: ReturnType<typeof config>) => (tier: Tier) => selectAgents(tier, signals, cfg)

describe("spend cap", () => {
  test("prices come from config, then the provider block's cost", () => {
    const cfg = parseConfig({
      provider: { fake: { models: { m: { cost: { input: 1, output: 2, cache_read: 0.1 } } } } },
    }).config
    expect(priceOf(cfg, "fake/m")).toEqual({ input: 1, output: 2, cacheRead: 0.1 })
    expect(priceOf(cfg, "anthropic/unknown")).toBeNull()
  })

  test("grows with the change and the agent set", () => {
    const cfg = config({})
    const full = estimateCost(select(cfg)("full"), 20_000, cfg)!
    const lite = estimateCost(select(cfg)("lite"), 20_000, cfg)!
    expect(full).toBeGreaterThan(lite)
    expect(estimateCost(select(cfg)("full"), 200_000, cfg)!).toBeGreaterThan(full)
  })

  test("leaves the plan alone under the cap or without a cap", () => {
    expect(capSpend("full", select(config({})), 20_000, config({}))).toMatchObject({ tier: "full", reason: null })
    expect(capSpend("full", select(config({ maxCostUsd: 100 })), 20_000, config({ maxCostUsd: 100 }))).toMatchObject({
      tier: "full",
      reason: null,
    })
  })

  test("steps down to the cheapest set that fits and says so", () => {
    const cfg = config({ maxCostUsd: 0.5 })
    const result = capSpend("full", select(cfg), 20_000, cfg)
    expect(result.tier).not.toBe("full")
    expect(result.agents.length).toBeLessThan(select(cfg)("full").length)
    expect(result.reason).toMatch(
      /^spend cap \$0\.5: the full review was estimated at \$\d+\.\d\d; running the (lite|trivial) agent set/,
    )
    expect(estimateCost(result.agents, 20_000, cfg)!).toBeLessThanOrEqual(0.5)
  })

  test("never drops the review: the smallest set runs above the cap, saying so", () => {
    const cfg = config({ maxCostUsd: 0.0001 })
    const result = capSpend("full", select(cfg), 20_000, cfg)
    expect(result.agents.map((agent) => agent.name)).toEqual(["review_coordinator", "code-quality"])
    expect(result.reason).toContain("even the smallest agent set is estimated above it")
  })

  test("says it could not apply the cap when a price is unknown", () => {
    const cfg = parseConfig({ maxCostUsd: 1 }).config
    expect(capSpend("full", select(cfg), 20_000, cfg).reason).toContain("no known price")
  })
})
