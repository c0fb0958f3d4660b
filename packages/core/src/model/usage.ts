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

/**
 * Tokens and cost of one agent, one model or a whole review. `input` is the prompt's uncached part
 * (OpenCode subtracts cache reads and writes from the provider's prompt tokens); `output` leaves
 * reasoning out, as OpenCode counts it.
 */
export const UsageEntry = z.object({
  input: z.number().nonnegative(),
  output: z.number().nonnegative(),
  cacheRead: z.number().nonnegative(),
  cacheWrite: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
})
export type UsageEntry = z.infer<typeof UsageEntry>

/** The share of prompt tokens the provider served from its cache: see {@link cacheHitRate}. */
const CacheHitRate = z.number().min(0).max(1)

/** One agent's or one model's entry in review.json's `usage`: its tokens, cost and cache hit rate. */
export const ReviewUsageEntry = UsageEntry.extend({ cacheHitRate: CacheHitRate })
export type ReviewUsageEntry = z.infer<typeof ReviewUsageEntry>

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

/**
 * What `tokens` cost at `price`, in USD, as OpenCode computes it: reasoning tokens (which `output`
 * leaves out) at the output price.
 */
export function costOf(
  tokens: Pick<TokenCounts, "input" | "output" | "cacheRead" | "cacheWrite"> & { reasoning?: number | undefined },
  price: Price,
): number {
  return (
    (tokens.input * price.input +
      (tokens.output + (tokens.reasoning ?? 0)) * price.output +
      tokens.cacheRead * (price.cacheRead ?? price.input) +
      tokens.cacheWrite * (price.cacheWrite ?? price.input)) /
    1_000_000
  )
}

/**
 * The share of a prompt the provider served from its cache: cacheRead ÷ (input + cacheRead +
 * cacheWrite), to 3 decimals; 0 when there were no prompt tokens.
 */
export function cacheHitRate(tokens: Pick<TokenCounts, "input" | "cacheRead" | "cacheWrite">): number {
  const prompt = tokens.input + tokens.cacheRead + tokens.cacheWrite
  return prompt > 0 ? Math.round((tokens.cacheRead / prompt) * 1_000) / 1_000 : 0
}

/** One paid-for unit of work: a coordinator step or a reviewer's sessions. */
export interface UsageItem {
  agent: string
  /** null when the reviewer never got a model (its cost is 0). */
  model: string | null
  /** `reasoning` only prices a unit the provider reported no cost for; review.json does not list it. */
  tokens: Pick<TokenCounts, "input" | "output" | "cacheRead" | "cacheWrite"> & { reasoning?: number | undefined }
  /** As the provider reported it (0 when OpenCode knows no price). */
  costUsd: number
}

/** review.json's `usage`: tokens, cost and cache hit rate per agent and per model; the total cost and hit rate. */
export const ReviewUsage = z.object({
  byAgent: z.record(z.string(), ReviewUsageEntry),
  byModel: z.record(z.string(), ReviewUsageEntry),
  costUsd: z.number().nonnegative(),
  cacheHitRate: CacheHitRate,
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
  return reviewUsage({ byAgent, byModel })
}

/**
 * review.json's `usage` from tokens and cost per agent and per model: each entry gets its cache hit
 * rate, and the review its total cost (unless given) and overall hit rate.
 */
export function reviewUsage(usage: {
  byAgent: Record<string, UsageEntry>
  byModel: Record<string, UsageEntry>
  costUsd?: number | undefined
}): ReviewUsage {
  const total = reviewUsageTotal(usage)
  return {
    byAgent: withHitRates(usage.byAgent),
    byModel: withHitRates(usage.byModel),
    costUsd: usage.costUsd ?? round(Object.values(usage.byAgent).reduce((sum, entry) => sum + entry.costUsd, 0)),
    cacheHitRate: total.cacheHitRate,
  }
}

/** The usage of a whole review: per model when recorded, else per agent, summed, with its cache hit rate. */
export function reviewUsageTotal(usage: {
  byAgent: Record<string, UsageEntry>
  byModel: Record<string, UsageEntry>
}): ReviewUsageEntry {
  const entries = Object.keys(usage.byModel).length > 0 ? usage.byModel : usage.byAgent
  const total: UsageEntry = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costUsd: 0 }
  for (const entry of Object.values(entries)) {
    total.input += entry.input
    total.output += entry.output
    total.cacheRead += entry.cacheRead
    total.cacheWrite += entry.cacheWrite
    total.costUsd += entry.costUsd
  }
  return { ...total, cacheHitRate: cacheHitRate(total) }
}

function withHitRates(table: Record<string, UsageEntry>): Record<string, ReviewUsageEntry> {
  return Object.fromEntries(
    Object.entries(table).map(([key, entry]) => [
      key,
      { ...pickTokens(entry), costUsd: entry.costUsd, cacheHitRate: cacheHitRate(entry) },
    ]),
  )
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
