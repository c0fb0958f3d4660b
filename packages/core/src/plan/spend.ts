import type { Config } from "../config/config"
import { splitModelId } from "../model/model-id"
import type { Price } from "../model/usage"
import type { PlannedAgent } from "./agents"
import type { Tier } from "./risk"

/** USD per million tokens of one model. */
export type { Price }

// Rough shape of a review, from the seed system's numbers: each reviewer re-sends its prompt a few
// times while it reads (system prompt and tool schemas ~4k tokens, plus what it reads of the
// change), the coordinator reads the prompt and every reviewer's findings twice.
const turnsPerReviewer = 3
const baseTokensPerTurn = 4_000
const outputPerAgent = 1_500

/** The price of a model: config `prices` first, then the provider block's `cost`, else null (unknown). */
export function priceOf(config: Pick<Config, "prices" | "provider">, model: string): Price | null {
  const configured = config.prices[model]
  if (configured) return configured
  const id = splitModelId(model)
  const provider = config.provider[id.provider ?? ""] as
    | { models?: Record<string, { cost?: Record<string, unknown> }> }
    | undefined
  const cost = provider?.models?.[id.model]?.cost
  if (cost && typeof cost.input === "number" && typeof cost.output === "number") {
    return {
      input: cost.input,
      output: cost.output,
      cacheRead: typeof cost.cache_read === "number" ? cost.cache_read : undefined,
    }
  }
  return null
}

/**
 * An estimate of a review's cost before it runs: null when a planned model has no known price.
 * `changeTokens` is the size of what reviewers read (shared context plus patches), in tokens.
 */
export function estimateCost(
  agents: readonly PlannedAgent[],
  changeTokens: number,
  config: Pick<Config, "prices" | "provider">,
): number | null {
  let total = 0
  for (const agent of agents) {
    const price = priceOf(config, agent.models[0]!)
    if (!price) return null
    const input =
      agent.role === "coordinator"
        ? 2 * (baseTokensPerTurn + changeTokens / 4)
        : turnsPerReviewer * baseTokensPerTurn + changeTokens
    total += (input * price.input + outputPerAgent * price.output) / 1_000_000
  }
  return total
}

/** What the spend cap did to the plan. */
export interface SpendDecision {
  agents: PlannedAgent[]
  tier: Tier
  reason: string | null
}

/**
 * Applies `maxCostUsd`: when the estimate passes it, the review steps down to the next cheaper tier's
 * agent set until it fits, down to the coordinator and the generalist, and says what it did. It
 * never drops the review: the cheapest set runs even above the cap, with a reason saying so.
 */
export function capSpend(
  tier: Tier,
  select: (tier: Tier) => PlannedAgent[],
  changeTokens: number,
  config: Pick<Config, "prices" | "provider" | "maxCostUsd">,
): SpendDecision {
  const cap = config.maxCostUsd
  const planned = select(tier)
  if (cap === null) return { agents: planned, tier, reason: null }
  const first = estimateCost(planned, changeTokens, config)
  if (first === null)
    return {
      agents: planned,
      tier,
      reason: `spend cap $${cap} not applied: a planned model has no known price (set prices in the config)`,
    }
  if (first <= cap) return { agents: planned, tier, reason: null }
  const order: Tier[] = ["full", "lite", "trivial"]
  for (const cheaper of order.slice(order.indexOf(tier) + 1)) {
    const agents = select(cheaper)
    const estimate = estimateCost(agents, changeTokens, config)
    if (estimate !== null && estimate <= cap) {
      return {
        agents,
        tier: cheaper,
        reason: `spend cap $${cap}: the ${tier} review was estimated at $${first.toFixed(2)}; running the ${cheaper} agent set (estimated $${estimate.toFixed(2)}) instead`,
      }
    }
  }
  const cheapest = select("trivial")
  return {
    agents: cheapest,
    tier: "trivial",
    reason: `spend cap $${cap}: even the smallest agent set is estimated above it ($${(estimateCost(cheapest, changeTokens, config) ?? 0).toFixed(2)}); running it anyway`,
  }
}
