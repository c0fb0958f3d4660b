import type { SessionError } from "@opencode-reviewer/opencode/errors"
import { type RetryStatus, readEvent, type SessionSignal } from "@opencode-reviewer/opencode/session"
import type { Clock } from "./clock"
import type { SessionDriver } from "./driver"

/** Why the monitor ended a turn before the session went idle by itself. */
export type StopReason =
  /** No output for `idleMs`. */
  | "no-output"
  /** The per-attempt deadline passed. */
  | "timeout"
  /** The overall budget of the tool call is spent. */
  | "budget"
  /** The caller stopped it (parent aborted). */
  | "aborted"
  /** OpenCode scheduled its next provider retry after the deadline: waiting is pointless. */
  | "retry-late"

/** How a turn ended: idle on its own (maybe with an error), or stopped by the monitor or the caller. */
export type TurnEnd =
  | { kind: "idle"; error: SessionError | null }
  | { kind: "stopped"; reason: StopReason; retry: RetryStatus | null; error: SessionError | null }

/** What to watch: one prompt in one session, and its limits (absolute clock times in ms). */
export interface TurnOptions {
  sessionID: string
  idleMs: number
  deadlineAt: number
  budgetAt: number
  /** Assistant message ids that existed before the prompt; a new completed one proves the turn ended. */
  known: ReadonlySet<string>
}

/** A watched turn: its end, and a way to stop it early (the caller then aborts the session). */
export interface TurnWatch {
  readonly end: Promise<TurnEnd>
  stop(reason: StopReason): void
}

/** Watches child-session turns through bus events, backed by a status poll. */
export interface SessionMonitor {
  /** Register before sending the prompt, so no event is missed. One turn per session at a time. */
  watch(options: TurnOptions): TurnWatch
  /** Feed every event of the plugin `event` hook here. */
  handle(event: unknown): void
  /** Turns being watched. */
  readonly size: number
}

interface WatchState extends TurnOptions {
  lastOutputAt: number
  seenBusy: boolean
  eventsSeen: boolean
  error: SessionError | null
  retry: RetryStatus | null
  progress: string
  checking: boolean
  settled: boolean
  resolve(end: TurnEnd): void
}

/**
 * Creates a monitor. Completion is the `session.idle`/`session.status` idle event, backed by polling
 * `driver.statuses()` every `pollMs`. A session absent from the status map counts as idle only once
 * it was seen busy or a new completed assistant message exists: right after promptAsync, absent is
 * not proof of completion (docs/opencode.md, pitfall 7). Errors from `session.error` are kept and
 * reported with the idle that follows them (the message only carries them ~150 ms later, pitfall 8 there).
 */
export function createSessionMonitor(options: { driver: SessionDriver; clock: Clock; pollMs: number }): SessionMonitor {
  const { driver, clock } = options
  const pollMs = Math.max(1, options.pollMs)
  const watches = new Map<string, WatchState>()
  let wake = new AbortController()
  let running = false

  const finish = (state: WatchState, end: TurnEnd) => {
    if (state.settled) return
    state.settled = true
    if (watches.get(state.sessionID) === state) watches.delete(state.sessionID)
    // Let the loop end now rather than at its next due time.
    if (watches.size === 0) wake.abort()
    state.resolve(end)
  }
  const stop = (state: WatchState, reason: StopReason) =>
    finish(state, { kind: "stopped", reason, retry: state.retry, error: state.error })

  const apply = (state: WatchState, signal: SessionSignal) => {
    switch (signal.type) {
      case "activity":
        state.lastOutputAt = clock.now()
        return
      case "busy":
        state.seenBusy = true
        return
      case "retry":
        state.seenBusy = true
        state.retry = signal.retry
        if (signal.retry.next >= Math.min(state.deadlineAt, state.budgetAt)) stop(state, "retry-late")
        return
      case "error":
        state.error = signal.error
        return
      case "idle":
        if (state.seenBusy) finish(state, { kind: "idle", error: state.error })
        else void confirmIdle(state)
        return
    }
  }

  // Idle without a busy first: either a stale idle (of an earlier turn) or a turn so short that its
  // busy status was missed. A new completed assistant message tells them apart.
  const confirmIdle = async (state: WatchState) => {
    if (state.checking || state.settled) return
    state.checking = true
    try {
      const replies = await driver.read(state.sessionID)
      const fresh = replies.filter((reply) => !state.known.has(reply.id))
      const last = fresh.at(-1)
      if (last?.completed) finish(state, { kind: "idle", error: state.error ?? last.error })
    } catch {
      // The next poll tries again.
    } finally {
      state.checking = false
    }
  }

  const poll = async () => {
    let statuses: Map<string, SessionSignal>
    try {
      statuses = await driver.statuses()
    } catch {
      return
    }
    for (const state of [...watches.values()]) {
      const status = statuses.get(state.sessionID)
      if (status && status.type !== "idle") apply(state, status)
      else if (state.seenBusy) finish(state, { kind: "idle", error: state.error })
      else await confirmIdle(state)
    }
  }

  // Without any event for a session (the hook not delivering), output is measured on the messages
  // themselves: text length, part count and output tokens of the new assistant messages.
  const progress = async (state: WatchState): Promise<string | null> => {
    try {
      const replies = (await driver.read(state.sessionID)).filter(
        (reply) =>
          !state.known.has(reply.id) && (reply.text !== "" || reply.tokens.output > 0 || reply.tokens.reasoning > 0),
      )
      return replies
        .map((reply) => `${reply.id}:${reply.text.length}:${reply.tokens.output}:${reply.tokens.reasoning}`)
        .join("|")
    } catch {
      return null
    }
  }

  const checkDeadlines = async () => {
    for (const state of [...watches.values()]) {
      const now = clock.now()
      if (now >= state.budgetAt) stop(state, "budget")
      else if (now >= state.deadlineAt) stop(state, "timeout")
      else if (now - state.lastOutputAt >= state.idleMs) {
        if (!state.eventsSeen) {
          const current = await progress(state)
          if (current !== null && current !== state.progress) {
            state.progress = current
            state.lastOutputAt = clock.now()
            continue
          }
        }
        stop(state, "no-output")
      }
    }
  }

  const dueAt = (state: WatchState) => Math.min(state.lastOutputAt + state.idleMs, state.deadlineAt, state.budgetAt)

  const run = async () => {
    running = true
    let lastPoll = clock.now()
    try {
      while (watches.size > 0) {
        const wakeAt = Math.min(lastPoll + pollMs, ...[...watches.values()].map(dueAt))
        const now = clock.now()
        if (wakeAt > now) {
          wake = new AbortController()
          await clock.sleep(wakeAt - now, wake.signal)
        }
        if (clock.now() >= lastPoll + pollMs) {
          lastPoll = clock.now()
          await poll()
        }
        await checkDeadlines()
      }
    } finally {
      running = false
    }
  }

  return {
    watch(turn) {
      const previous = watches.get(turn.sessionID)
      if (previous) stop(previous, "aborted")
      let resolve!: (end: TurnEnd) => void
      const end = new Promise<TurnEnd>((done) => (resolve = done))
      const state: WatchState = {
        ...turn,
        lastOutputAt: clock.now(),
        seenBusy: false,
        eventsSeen: false,
        error: null,
        retry: null,
        // No new output exists before the prompt: the fingerprint of nothing.
        progress: "",
        checking: false,
        settled: false,
        resolve,
      }
      watches.set(turn.sessionID, state)
      // The loop may be asleep until a later due time than this turn's.
      wake.abort()
      if (!running) void run()
      return { end, stop: (reason) => stop(state, reason) }
    },
    handle(event) {
      const signal = readEvent(event)
      if (!signal) return
      const state = watches.get(signal.sessionID)
      if (!state) return
      state.eventsSeen = true
      apply(state, signal)
    },
    get size() {
      return watches.size
    },
  }
}
