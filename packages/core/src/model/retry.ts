/**
 * The timing knobs and test seams every provider's request layer takes. Defaults: 30 s per
 * attempt, 5 attempts, backoff from 1 s doubling with jitter (docs/gitlab.md, docs/github.md).
 */
export interface RetryTiming {
  /** Waits between attempts; tests inject one that records the delays and returns at once. */
  sleep?: (ms: number) => Promise<void>
  /** Clock in ms since the epoch, for `Retry-After` dates and rate-limit resets. */
  now?: () => number
  /** [0, 1), for backoff jitter. */
  random?: () => number
  /** Per-attempt timeout until the response headers arrive; default 30 s. */
  timeoutMs?: number
  /** Attempts per request, the first included; default 5. */
  maxAttempts?: number
  /** First backoff step after a 5xx or a network error; default 1 s, doubling per attempt. */
  baseDelayMs?: number
}

/** The timing of a request layer with every default filled in. */
export function resolveRetryTiming(options: RetryTiming): Required<RetryTiming> {
  return {
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    now: options.now ?? Date.now,
    random: options.random ?? Math.random,
    timeoutMs: options.timeoutMs ?? 30_000,
    maxAttempts: Math.max(1, options.maxAttempts ?? 5),
    baseDelayMs: options.baseDelayMs ?? 1_000,
  }
}
