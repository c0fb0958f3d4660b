import type { OpencodeConfig } from "@opencode-reviewer/opencode/config"
import { splitModelId } from "../model/model-id"

// Context windows of the default models, used when the config's provider block gives no
// `limit.context` for the model. A provider block always wins.
const knownContext: Record<string, number> = {
  "anthropic/claude-opus-4-7": 200_000,
  "anthropic/claude-opus-4-6": 200_000,
  "anthropic/claude-sonnet-4-6": 200_000,
  "anthropic/claude-sonnet-4-5": 200_000,
  "moonshotai/kimi-k2.5": 256_000,
}

/** The share of its context window at which the coordinator's prompt earns a warning (50 %: docs/design-numbers.md#control-plane-and-telemetry). */
export const contextWarningShare = 0.5

/** The model's context window in tokens from the provider block or the known table; null when unknown. */
export function contextWindow(config: Pick<OpencodeConfig, "provider">, model: string): number | null {
  const id = splitModelId(model)
  const provider = config.provider[id.provider ?? ""] as
    | { models?: Record<string, { limit?: { context?: unknown } }> }
    | undefined
  const limit = provider?.models?.[id.model]?.limit?.context
  if (typeof limit === "number" && limit > 0) return limit
  return knownContext[model] ?? null
}

/** A rough token count for English text and code: about four bytes a token. */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text) / 4)
}

/**
 * A warning when the coordinator's first request (its system prompt plus the prompt on stdin) would
 * pass half the model's context window, or null. Past that, OpenCode compacts mid-review and the
 * judge pass loses what the reviewers said; past the whole window the review cannot run at all (the
 * provider refuses the request, or OpenCode compacts before the coordinator has judged anything,
 * which ended a run with "Tool call not allowed while generating summary"), and the warning says so.
 */
export function contextWarning(config: OpencodeConfig, model: string, system: string, prompt: string): string | null {
  const window = contextWindow(config, model)
  if (window === null) return null
  const tokens = estimateTokens(system) + estimateTokens(prompt)
  if (tokens <= window * contextWarningShare) return null
  const share = Math.round((tokens / window) * 100)
  const size = `the coordinator's prompt is about ${tokens.toLocaleString("en-US")} tokens, ${share} % of ${model}'s ${window.toLocaleString("en-US")}-token context window`
  if (tokens > window)
    return `${size}: it does not fit, so the review will fail; narrow the change (fewer comments, a shorter description) or use a model with a larger window`
  return `${size} (warning above ${contextWarningShare * 100} %): narrow the change or use a model with a larger window`
}
