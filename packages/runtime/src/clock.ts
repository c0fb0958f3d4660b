/** Time as the scheduler sees it: a millisecond clock and a sleep that an AbortSignal ends early. */
export interface Clock {
  now(): number
  /** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

/** The wall clock (Date.now and setTimeout); what the plugin uses inside OpenCode. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve()
      const timer = setTimeout(done, Math.max(0, ms))
      signal?.addEventListener("abort", done, { once: true })
      function done() {
        clearTimeout(timer)
        signal?.removeEventListener("abort", done)
        resolve()
      }
    })
  },
}

/** A clock that moves only when a test calls `advance`; sleepers wake in time order. */
export interface ManualClock extends Clock {
  /** Moves time forward by `ms`, waking each sleeper at its due time and letting promise chains settle. */
  advance(ms: number): Promise<void>
  /** Jumps to the earliest sleeper's due time and wakes it (and any due with it); false when none sleeps. */
  next(): Promise<boolean>
  /** Lets pending promise chains settle without moving time. */
  settle(): Promise<void>
  /** How many sleepers are waiting. */
  readonly sleepers: number
}

/** Creates a manual clock starting at `start` ms. */
export function createManualClock(start = 0): ManualClock {
  let time = start
  let sequence = 0
  const timers: { at: number; order: number; wake(): void }[] = []
  const settle = async () => {
    // A macrotask turn runs every queued microtask first; a few turns cover chains that hop through
    // several awaits and an immediate.
    for (let turn = 0; turn < 5; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve))
  }
  return {
    now: () => time,
    sleep(ms, signal) {
      return new Promise((resolve) => {
        if (signal?.aborted) return resolve()
        const timer = { at: time + Math.max(0, ms), order: sequence++, wake: done }
        timers.push(timer)
        signal?.addEventListener("abort", done, { once: true })
        function done() {
          const index = timers.indexOf(timer)
          if (index >= 0) timers.splice(index, 1)
          signal?.removeEventListener("abort", done)
          resolve()
        }
      })
    },
    async advance(ms) {
      const target = time + ms
      for (;;) {
        await settle()
        const due = timers.filter((timer) => timer.at <= target).sort((a, b) => a.at - b.at || a.order - b.order)[0]
        if (!due) break
        time = Math.max(time, due.at)
        due.wake()
      }
      time = target
      await settle()
    },
    async next() {
      await settle()
      const due = [...timers].sort((a, b) => a.at - b.at || a.order - b.order)[0]
      if (!due) return false
      await this.advance(Math.max(0, due.at - time))
      return true
    },
    settle,
    get sleepers() {
      return timers.length
    },
  }
}
