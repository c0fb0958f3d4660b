import { defaults, type ModelTier } from "@opencode-reviewer/core"

/**
 * The default failback chains per family, primary first: core's `defaults.models` itself (never a
 * copy), so the gateway and the planner can never disagree about them.
 */
export const defaultChains: Readonly<Record<ModelTier, readonly string[]>> = defaults.models

/** What `sameFamily` found about one chain. */
export interface FamilyCheck {
  /** True when every model of the chain belongs to one family (an empty chain is fine). */
  ok: boolean
  /** The distinct families, in chain order. */
  families: string[]
  /** A human-readable warning when the chain mixes families, else null. */
  warning: string | null
}

// Tokens that say which release or size a model is, not what it is.
const noiseTokens = new Set(["latest", "preview", "exp", "experimental"])

/**
 * The family of a "provider/model" id: the model's last path segment, lower-cased, with versions,
 * dates and sizes removed. "anthropic/claude-opus-4-7" → "claude-opus", "claude-3-5-haiku-20241022"
 * → "claude-haiku", "moonshotai/kimi-k2.5" → "kimi-k", "ollama/qwen2.5-coder:7b" → "qwen-coder".
 * The provider does not count: the same model through a gateway is the same family.
 */
export function familyOf(model: string): string {
  const name = (model.split("/").pop() ?? model).toLowerCase()
  const tokens = name
    .split(/[-_:@\s]+/)
    .filter((token) => !/^\d+(\.\d+)*[bmk]?$/.test(token) && !noiseTokens.has(token))
    .map((token) => token.replace(/[\d.]+/g, ""))
    .filter((token) => token.length > 0)
  return tokens.length > 0 ? tokens.join("-") : name
}

/**
 * Checks that a failback chain stays within one family: an open model fails back along its
 * family's chain, never across families (docs/design-numbers.md#reviewers-and-model-families).
 * Returns a warning instead of throwing.
 */
export function sameFamily(chain: readonly string[]): FamilyCheck {
  const families = [...new Set(chain.map(familyOf))]
  if (families.length <= 1) return { ok: true, families, warning: null }
  return {
    ok: false,
    families,
    warning: `model chain ${chain.join(" → ")} mixes families (${families.join(", ")}); failback should stay within one family`,
  }
}
