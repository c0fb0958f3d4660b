import { type Logger, silentLogger } from "@opencode-reviewer/core/model/logger"
import { buildPayload, type TrackerEvent, type TrackerPayload } from "./events"

/** The fetch the tracker and the metrics pusher call; the global `fetch` satisfies it. */
export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** How to reach the tracker endpoint and how much the job is willing to wait for it. */
export interface TrackerOptions {
  /** Endpoint every event is POSTed to as JSON. */
  url: string
  /** Identifies the review job in every payload; a random UUID when absent. */
  jobId?: string
  /** Extra request headers (e.g. the endpoint's own authorization); never part of a payload. */
  headers?: Record<string, string>
  fetch?: Fetch
  /** Per-request timeout; the request is aborted and counted as timed out after it. Default 2000. */
  timeoutMs?: number
  /** Requests in flight beyond this abort the oldest one, counted as dropped. Default 50. */
  maxPending?: number
  /** Clock for the payload's `at` (epoch ms). */
  now?: () => number
  log?: Logger
}

/** What became of the tracked events so far (cumulative). */
export interface TrackerTotals {
  /** Answered with a 2xx status. */
  sent: number
  /** Answered with another status, or the endpoint could not be reached. */
  failed: number
  /** Aborted because newer events pushed them past `maxPending`. */
  dropped: number
  /** Aborted after `timeoutMs`, or still in flight when a flush's deadline passed. */
  timedOut: number
}

/** Totals plus the events refused as invalid and the requests still in flight. */
export interface TrackerStats extends TrackerTotals {
  tracked: number
  invalid: number
  pending: number
}

/** A fire-and-forget client of the tracker endpoint; nothing it does can fail or block the review. */
export interface Tracker {
  readonly jobId: string
  /** Starts posting the event and returns at once; never throws, never awaits. */
  track(event: TrackerEvent): void
  /**
   * Waits for the requests in flight, never longer than `deadlineMs` (default: the request timeout);
   * whatever is still in flight then is aborted and counted as timed out. Call it just before exit.
   */
  flush(deadlineMs?: number): Promise<TrackerTotals>
  /** A snapshot of the counters. */
  stats(): TrackerStats
}

/** Creates a tracker for one review job (see `Tracker`). */
export function createTracker(options: TrackerOptions): Tracker {
  const send = options.fetch ?? fetch
  const timeoutMs = Math.max(1, options.timeoutMs ?? 2000)
  const maxPending = Math.max(1, Math.floor(options.maxPending ?? 50))
  const now = options.now ?? Date.now
  const log = options.log ?? silentLogger
  const jobId = options.jobId ?? crypto.randomUUID()
  const headers = {
    ...options.headers,
    "content-type": "application/json",
    "user-agent": "opencode-reviewer-telemetry",
  }
  // A Set iterates in insertion order, so its first entry is always the oldest request in flight.
  const pending = new Set<InFlight>()
  const counts = { tracked: 0, invalid: 0, sent: 0, failed: 0, dropped: 0, timedOut: 0 }
  let reported = false

  function track(event: TrackerEvent): void {
    try {
      counts.tracked += 1
      const built = buildPayload(event, { at: new Date(now()).toISOString(), jobId, seq: counts.tracked })
      if (!built.ok) {
        counts.invalid += 1
        log.warn({ type: typeOf(event), error: built.error }, "telemetry event invalid, not sent")
        return
      }
      while (pending.size >= maxPending) {
        const oldest = pending.values().next().value
        if (!oldest) break
        end(oldest, "dropped", dropReason)
      }
      start(built.payload)
    } catch (error) {
      counts.invalid += 1
      log.warn({ error: describe(error) }, "telemetry event not sent")
    }
  }

  function start(payload: TrackerPayload): void {
    const controller = new AbortController()
    const request: InFlight = {
      type: payload.type,
      seq: payload.seq,
      controller,
      done: Promise.resolve(),
      settled: false,
    }
    const timer = setTimeout(() => end(request, "timedOut", timeoutReason), timeoutMs)
    // Unref'd: while the request is in flight its socket keeps the process alive anyway; the timer
    // alone must never hold a finished job open.
    unref(timer)
    pending.add(request)
    request.done = post(payload, controller.signal)
      .then((outcome) => {
        if (outcome.kind === "sent") return end(request, "sent")
        if (outcome.kind === "failed") return end(request, "failed", undefined, outcome.error)
      })
      .catch(() => {})
      .finally(() => clearTimeout(timer))
  }

  async function post(
    payload: TrackerPayload,
    signal: AbortSignal,
  ): Promise<{ kind: "sent" } | { kind: "failed"; error: string } | { kind: "aborted" }> {
    try {
      const response = await send(options.url, { method: "POST", headers, body: JSON.stringify(payload), signal })
      await response.body?.cancel().catch(() => {})
      if (response.ok) return { kind: "sent" }
      return { kind: "failed", error: `status ${response.status}` }
    } catch (error) {
      if (signal.aborted) return { kind: "aborted" }
      return { kind: "failed", error: describe(error) }
    }
  }

  // Every request ends exactly once: the first of answer, failure, timeout, drop or flush deadline wins.
  function end(request: InFlight, outcome: keyof TrackerTotals, reason?: Error, error?: string): void {
    if (request.settled) return
    request.settled = true
    pending.delete(request)
    counts[outcome] += 1
    if (reason) request.controller.abort(reason)
    if (outcome === "sent") return
    const data = { type: request.type, seq: request.seq, outcome, ...(error ? { error } : {}) }
    if (reported) {
      log.debug(data, "telemetry request not delivered")
      return
    }
    reported = true
    log.warn(data, "telemetry request not delivered")
  }

  async function flush(deadlineMs?: number): Promise<TrackerTotals> {
    if (pending.size === 0) return totals()
    let expired = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(
        () => {
          expired = true
          resolve()
        },
        Math.max(0, deadlineMs ?? timeoutMs),
      )
    })
    while (pending.size > 0 && !expired) {
      await Promise.race([Promise.all([...pending].map((request) => request.done)), deadline])
    }
    clearTimeout(timer)
    for (const request of [...pending]) end(request, "timedOut", deadlineReason)
    return totals()
  }

  function totals(): TrackerTotals {
    return { sent: counts.sent, failed: counts.failed, dropped: counts.dropped, timedOut: counts.timedOut }
  }

  return {
    jobId,
    track,
    flush,
    stats: () => ({ ...counts, pending: pending.size }),
  }
}

interface InFlight {
  type: string
  seq: number
  controller: AbortController
  done: Promise<void>
  settled: boolean
}

const dropReason = new Error("telemetry request dropped: too many pending")
const timeoutReason = new Error("telemetry request timed out")
const deadlineReason = new Error("telemetry flush deadline passed")

function unref(timer: ReturnType<typeof setTimeout>): void {
  if (typeof timer === "object" && timer !== null && "unref" in timer) timer.unref()
}

function typeOf(event: unknown): string {
  return typeof event === "object" && event !== null && "type" in event ? String(event.type) : "unknown"
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}
