import { splitModelId } from "@opencode-reviewer/core"
import type { ReviewerConfigDocument } from "./document"

/** Model chains after the document was applied, what changed (for the log), and what could not be applied. */
export interface Application {
  /** Every agent given, primary first; unchanged agents keep their chain as given. */
  chains: Record<string, string[]>
  /** One line per agent whose chain changed: `security: a/x, a/y -> b/z`. */
  changes: string[]
  warnings: string[]
}

/**
 * Applies a document to model chains (pure): the agent's assignment replaces its chain, failback
 * overrides rewrite what follows a model, then models of disabled providers are dropped. A chain
 * the switches would empty falls back to the agent's own chain (failback overrides applied) minus
 * disabled providers, else stays as given, with a warning (an agent cannot run without a model).
 */
export function applyReviewerConfig(
  document: ReviewerConfigDocument,
  chains: Readonly<Record<string, readonly string[]>>,
): Application {
  const warnings: string[] = []
  const changes: string[] = []
  const disabled = new Set(
    Object.entries(document.providers ?? {}).flatMap(([id, provider]) => (provider.enabled ? [] : [id])),
  )
  const allowed = (model: string) => !disabled.has(providerOf(model))
  const failback = document.failback ?? {}

  const result = Object.fromEntries(
    Object.entries(chains).map(([agent, original]) => {
      const assigned = document.reviewers?.[agent]?.model
      const wanted = withFailback(
        assigned === undefined ? original : typeof assigned === "string" ? [assigned] : assigned,
        failback,
      )
      const chain = pick(agent, wanted, [...original], withFailback(original, failback), allowed, disabled, warnings)
      if (!sameChain(chain, original)) changes.push(`${agent}: ${original.join(", ")} -> ${chain.join(", ")}`)
      return [agent, chain]
    }),
  )

  for (const [agent, override] of Object.entries(document.reviewers ?? {})) {
    if (override.enabled === false && agent in chains) {
      warnings.push(
        `reviewers.${agent}.enabled=false is not applied: a planned agent cannot be removed after planning; set it in opencode-reviewer.json, or disable its providers`,
      )
    }
    if (override.enabled === true && !(agent in chains)) {
      warnings.push(
        `reviewers.${agent}.enabled=true is not applied: an agent cannot be added after planning; set it in opencode-reviewer.json`,
      )
    }
  }
  return { chains: result, changes, warnings }
}

/** The provider id of a `<provider>/<model>` id. */
export function providerOf(model: string): string {
  return splitModelId(model).provider ?? model
}

/**
 * Rewrites a chain with failback overrides: after a model that has an override, the rest of the
 * chain is replaced by the override (which may itself lead to another override). Each model
 * appears once, so overrides that point at each other end instead of looping.
 */
export function withFailback(
  chain: readonly string[],
  failback: Readonly<Record<string, readonly string[]>>,
): string[] {
  const out: string[] = []
  let rest = [...chain]
  while (rest.length > 0) {
    const model = rest.shift()!
    if (out.includes(model)) continue
    out.push(model)
    const override = failback[model]
    if (override) rest = [...override]
  }
  return out
}

function pick(
  agent: string,
  wanted: string[],
  original: string[],
  own: string[],
  allowed: (model: string) => boolean,
  disabled: Set<string>,
  warnings: string[],
): string[] {
  const kept = wanted.filter(allowed)
  if (kept.length > 0) return kept
  const fallback = own.filter(allowed)
  const off = [...disabled].filter((id) => wanted.some((model) => providerOf(model) === id)).join(", ")
  if (fallback.length > 0) {
    warnings.push(
      `${agent}: every model of its remote assignment (${wanted.join(", ")}) is on a disabled provider (${off}); keeping its own chain ${fallback.join(", ")}`,
    )
    return fallback
  }
  warnings.push(
    `${agent}: every model of its chain (${wanted.join(", ")}) is on a disabled provider (${off}); keeping ${original.join(", ")} because an agent cannot run without a model — expect it to fail`,
  )
  return original
}

function sameChain(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((model, index) => model === b[index])
}
