/** A model's circuit: closed (in use), open (skipped) or half-open (one probe allowed). */
export type BreakerState = "closed" | "open" | "half-open"

/** Settings of the breakers; `now` is injectable so tests never wait real minutes. */
export interface BreakerOptions {
  /** Consecutive retryable failures that open a closed circuit. */
  failures: number
  /** How long an open circuit stays open before letting one probe through. */
  cooldownMs: number
  now(): number
}

/** A state change, for logs: noun-verb names as elsewhere in the project. */
export type BreakerEvent =
  | { type: "breaker-open"; model: string; failures: number }
  | { type: "breaker-probe"; model: string }
  | { type: "breaker-close"; model: string }

/**
 * Circuit breakers, one per model id. Every `acquire` that returns true must be followed by exactly
 * one of `succeed`, `fail` or `release` for that model.
 */
export interface Breakers {
  /** Whether the model may be used now. Half-open: true for exactly one caller until its outcome is recorded. */
  acquire(model: string): boolean
  /** The model answered: closes the circuit and resets the failure count. */
  succeed(model: string): void
  /** A retryable failure: counts towards opening; a failed probe re-opens at once. */
  fail(model: string): void
  /** Inconclusive outcome (aborted, timed out, non-retryable error): frees a probe slot, changes nothing else. */
  release(model: string): void
  state(model: string): BreakerState
}

interface Circuit {
  failures: number
  openedAt: number | null
  probing: boolean
}

/** Creates an empty set of breakers (every model closed). */
export function createBreakers(options: BreakerOptions, onEvent: (event: BreakerEvent) => void = () => {}): Breakers {
  const circuits = new Map<string, Circuit>()
  const circuit = (model: string) => {
    const existing = circuits.get(model)
    if (existing) return existing
    const created: Circuit = { failures: 0, openedAt: null, probing: false }
    circuits.set(model, created)
    return created
  }
  const stateOf = (entry: Circuit): BreakerState => {
    if (entry.openedAt === null) return "closed"
    return options.now() - entry.openedAt < options.cooldownMs ? "open" : "half-open"
  }
  const open = (model: string, entry: Circuit) => {
    entry.openedAt = options.now()
    entry.probing = false
    onEvent({ type: "breaker-open", model, failures: entry.failures })
  }
  return {
    acquire(model) {
      const entry = circuit(model)
      const state = stateOf(entry)
      if (state === "closed") return true
      if (state === "open" || entry.probing) return false
      entry.probing = true
      onEvent({ type: "breaker-probe", model })
      return true
    },
    succeed(model) {
      const entry = circuit(model)
      const wasOpen = entry.openedAt !== null
      entry.failures = 0
      entry.openedAt = null
      entry.probing = false
      if (wasOpen) onEvent({ type: "breaker-close", model })
    },
    fail(model) {
      const entry = circuit(model)
      entry.failures += 1
      const state = stateOf(entry)
      // A failure that started before the circuit opened must not extend the cooldown.
      if (state === "open") return
      if (state === "half-open" || entry.failures >= options.failures) open(model, entry)
    },
    release(model) {
      circuit(model).probing = false
    },
    state: (model) => stateOf(circuit(model)),
  }
}

/** The model a reviewer should try next, and the ones skipped because their circuit is open. */
export interface ModelChoice {
  model: string | null
  skipped: string[]
}

/**
 * Picks the first model of the reviewer's own chain (plan.json order) that is neither excluded
 * (already tried in this call) nor behind an open circuit. Never looks outside the chain: failback
 * stays within the model family the plan chose. A returned model holds an `acquire`.
 */
export function selectModel(
  chain: readonly string[],
  breakers: Breakers,
  excluded: ReadonlySet<string> = new Set(),
): ModelChoice {
  const skipped: string[] = []
  for (const model of chain) {
    if (excluded.has(model)) continue
    if (breakers.acquire(model)) return { model, skipped }
    skipped.push(model)
  }
  return { model: null, skipped }
}
