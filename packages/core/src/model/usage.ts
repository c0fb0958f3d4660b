import * as z from "zod"

/** Tokens as OpenCode counts them for one model step or one reviewer's sessions. */
export const TokenCounts = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  reasoning: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
})
export type TokenCounts = z.infer<typeof TokenCounts>

/** Tokens and cost of one agent, one model or a whole review (review.json `usage`). */
export const UsageEntry = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
})
export type UsageEntry = z.infer<typeof UsageEntry>

/** A model's price in USD per million tokens; cached tokens cost input's price unless given. */
export interface Price {
  input: number
  output: number
  cacheRead?: number | undefined
  cacheWrite?: number | undefined
}

/** Zero tokens, a fresh object. */
export function noTokens(): TokenCounts {
  return { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
}

/** Adds `more` into `sum` (mutates and returns `sum`). */
export function addTokens(sum: TokenCounts, more: TokenCounts): TokenCounts {
  sum.input += more.input
  sum.output += more.output
  sum.reasoning += more.reasoning
  sum.cacheRead += more.cacheRead
  sum.cacheWrite += more.cacheWrite
  return sum
}

/** What `tokens` cost at `price`, in USD. */
export function costOf(
  tokens: Pick<TokenCounts, "input" | "output" | "cacheRead" | "cacheWrite">,
  price: Price,
): number {
  return (
    (tokens.input * price.input +
      tokens.output * price.output +
      tokens.cacheRead * (price.cacheRead ?? price.input) +
      tokens.cacheWrite * (price.cacheWrite ?? price.input)) /
    1_000_000
  )
}

/** One paid-for unit of work: a coordinator step or a reviewer's sessions. */
export interface UsageItem {
  agent: string
  /** null when the reviewer never got a model (its cost is 0). */
  model: string | null
  tokens: Pick<TokenCounts, "input" | "output" | "cacheRead" | "cacheWrite">
  /** As the provider reported it (0 when OpenCode knows no price). */
  costUsd: number
}

/** review.json's `usage`: tokens and cost per agent and per model, and the total. */
export const ReviewUsage = z.object({
  byAgent: z.record(z.string(), UsageEntry),
  byModel: z.record(z.string(), UsageEntry),
  costUsd: z.number().nonnegative(),
})
export type ReviewUsage = z.infer<typeof ReviewUsage>

/**
 * Adds up a review's usage per agent and per model. A unit the provider reported no cost for is
 * priced from `priceOf` (config `prices`, then the provider block's `cost`); costs are rounded to
 * millionths of a dollar.
 */
export function tallyUsage(items: readonly UsageItem[], priceOf: (model: string) => Price | null): ReviewUsage {
  const byAgent: Record<string, UsageEntry> = {}
  const byModel: Record<string, UsageEntry> = {}
  for (const item of items) {
    const price = item.costUsd > 0 || item.model === null ? null : priceOf(item.model)
    const entry: UsageEntry = { ...pickTokens(item.tokens), costUsd: price ? costOf(item.tokens, price) : item.costUsd }
    add(byAgent, item.agent, entry)
    if (item.model) add(byModel, item.model, entry)
  }
  return { byAgent, byModel, costUsd: round(Object.values(byAgent).reduce((sum, entry) => sum + entry.costUsd, 0)) }
}

/** The usage of a whole review: per model when recorded, else per agent, summed. */
export function reviewUsageTotal(usage: Pick<ReviewUsage, "byAgent" | "byModel">): UsageEntry {
  const entries = Object.keys(usage.byModel).length > 0 ? usage.byModel : usage.byAgent
  const total: UsageEntry = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costUsd: 0 }
  for (const entry of Object.values(entries)) {
    total.input += entry.input
    total.output += entry.output
    total.cacheRead += entry.cacheRead
    total.cacheWrite += entry.cacheWrite
    total.costUsd += entry.costUsd
  }
  return total
}

function add(table: Record<string, UsageEntry>, key: string, entry: UsageEntry): void {
  const current = table[key] ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costUsd: 0 }
  table[key] = {
    input: current.input + entry.input,
    output: current.output + entry.output,
    cacheRead: current.cacheRead + entry.cacheRead,
    cacheWrite: current.cacheWrite + entry.cacheWrite,
    costUsd: round(current.costUsd + entry.costUsd),
  }
}

function pickTokens(tokens: UsageItem["tokens"]) {
  return { input: tokens.input, output: tokens.output, cacheRead: tokens.cacheRead, cacheWrite: tokens.cacheWrite }
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6
}
