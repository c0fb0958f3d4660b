import type { SessionError } from "@opencode-reviewer/opencode/errors"
import type { AssistantReply, SessionSignal } from "@opencode-reviewer/opencode/session"
import type { Clock } from "./clock"
import { noTokens, type SessionDriver, type Tokens } from "./driver"
import type { ReviewerOutcome } from "./scheduler"

/** A finished reviewer's outcome for tests: done on `fake/<name>` in one session, no findings, unless `fields` say otherwise. */
export function reviewerOutcome(name: string, fields: Partial<ReviewerOutcome> = {}): ReviewerOutcome {
  return {
    name,
    status: "done",
    error: null,
    model: `fake/${name}`,
    modelsTried: [`fake/${name}`],
    attempts: 1,
    followUps: 0,
    sessionIDs: ["ses_1"],
    durationMs: 1234.4,
    tokens: noTokens(),
    costUsd: 0,
    findings: [],
    ...fields,
  }
}

/** What a scripted model does with one prompt. */
export type FakeBehaviour =
  /** Answers `text` after `afterMs`. */
  | { kind: "answer"; text: string; afterMs?: number; finish?: string; tokens?: Partial<Tokens>; cost?: number }
  /** Ends with `error` (a session.error then idle) after `afterMs`. */
  | { kind: "error"; error: SessionError; afterMs?: number }
  /** Never answers (until aborted). */
  | { kind: "hang" }
  /** Emits output every `everyMs` forever (until aborted). */
  | { kind: "chatter"; everyMs: number }
  /** Goes into OpenCode's retry status with `next` = now + `nextInMs`, then hangs. */
  | { kind: "retry"; nextInMs: number; message: string }

/** One prompt the fake received. */
export interface FakePrompt {
  sessionID: string
  agent: string
  model: string
  text: string
  at: number
  /** 0 for the first prompt of a session, 1 for its first follow-up, … */
  turn: number
}

/** A scripted SessionDriver for scheduler tests: sessions live in memory, time is the given clock. */
export interface FakeDriver extends SessionDriver {
  /** Connect the monitor that receives the fake's bus events. */
  connect(handle: (event: unknown) => void): void
  readonly prompts: FakePrompt[]
  readonly created: { sessionID: string; parentID: string; title: string }[]
  readonly aborted: string[]
  /** Sessions busy right now. */
  busy(): string[]
  /** Largest number of sessions busy at once so far. */
  readonly peakBusy: number
}

/**
 * Creates a fake driver. `behave` decides per prompt; `events: false` emits no bus events at all,
 * leaving completion to the status poll (the fallback the monitor must handle).
 */
export function createFakeDriver(
  clock: Clock,
  behave: (prompt: FakePrompt) => FakeBehaviour,
  options: { events?: boolean } = {},
): FakeDriver {
  const events = options.events ?? true
  let handle: (event: unknown) => void = () => {}
  const emit = (type: string, properties: Record<string, unknown>) => {
    if (events) handle({ type, properties })
  }
  const sessions = new Map<
    string,
    {
      replies: AssistantReply[]
      status: SessionSignal | null
      turns: number
      run: AbortController | null
      /** Prompts that came while busy: like OpenCode's loop, the running turn takes them in before it ends. */
      queued: FakePrompt[]
      /** Whether the last message is a prompt no reply follows yet. */
      unanswered: boolean
    }
  >()
  const prompts: FakePrompt[] = []
  const created: { sessionID: string; parentID: string; title: string }[] = []
  const aborted: string[] = []
  let counter = 0
  let peakBusy = 0
  const busyCount = () => [...sessions.values()].filter((session) => session.status !== null).length

  const setStatus = (sessionID: string, status: SessionSignal | null) => {
    const session = sessions.get(sessionID)!
    session.status = status
    peakBusy = Math.max(peakBusy, busyCount())
    if (status === null) {
      emit("session.status", { sessionID, status: { type: "idle" } })
      emit("session.idle", { sessionID })
    } else if (status.type === "retry") {
      emit("session.status", { sessionID, status: { type: "retry", ...status.retry } })
    } else {
      emit("session.status", { sessionID, status: { type: "busy" } })
    }
  }
  const reply = (sessionID: string, fields: Partial<AssistantReply>): AssistantReply => {
    const entry: AssistantReply = {
      id: `msg_${++counter}`,
      text: "",
      finish: null,
      error: null,
      completed: true,
      tokens: noTokens(),
      cost: 0,
      ...fields,
    }
    const session = sessions.get(sessionID)!
    session.replies.push(entry)
    session.unanswered = false
    return entry
  }

  return {
    prompts,
    created,
    aborted,
    get peakBusy() {
      return peakBusy
    },
    busy: () => [...sessions.entries()].filter(([, session]) => session.status !== null).map(([id]) => id),
    connect(next) {
      handle = next
    },
    async create({ parentID, title }) {
      const sessionID = `ses_${++counter}`
      sessions.set(sessionID, { replies: [], status: null, turns: 0, run: null, queued: [], unanswered: false })
      created.push({ sessionID, parentID, title })
      return sessionID
    },
    async prompt(sessionID, input) {
      const session = sessions.get(sessionID)
      if (!session) throw new Error(`no session ${sessionID}`)
      const prompt: FakePrompt = { sessionID, ...input, at: clock.now(), turn: session.turns++ }
      prompts.push(prompt)
      session.unanswered = true
      if (session.status !== null) {
        session.queued.push(prompt)
        return
      }
      const run = new AbortController()
      session.run = run
      setStatus(sessionID, { type: "busy", sessionID })
      const behaviour = behave(prompt)
      void (async () => {
        switch (behaviour.kind) {
          case "hang":
            return
          case "retry":
            setStatus(sessionID, {
              type: "retry",
              sessionID,
              retry: { attempt: 1, message: behaviour.message, next: clock.now() + behaviour.nextInMs },
            })
            return
          case "chatter":
            while (!run.signal.aborted) {
              await clock.sleep(behaviour.everyMs, run.signal)
              if (!run.signal.aborted)
                emit("message.part.delta", { sessionID, messageID: "m", partID: "p", field: "text", delta: "." })
            }
            return
          case "error":
            await clock.sleep(behaviour.afterMs ?? 1_000, run.signal)
            if (run.signal.aborted) return
            emit("session.error", { sessionID, error: behaviour.error })
            reply(sessionID, { error: behaviour.error })
            setStatus(sessionID, null)
            return
          case "answer": {
            await clock.sleep(behaviour.afterMs ?? 1_000, run.signal)
            if (run.signal.aborted) return
            const entry = reply(sessionID, {
              text: behaviour.text,
              finish: behaviour.finish ?? "stop",
              tokens: { ...noTokens(), ...behaviour.tokens },
              cost: behaviour.cost ?? 0,
            })
            emit("message.part.updated", { part: { sessionID, messageID: entry.id, type: "text", text: entry.text } })
            // The queued prompts were taken into this turn: it answers once more, with the last of them.
            const next = session.queued.splice(0).at(-1)
            if (next) {
              const after = behave(next)
              if (after.kind === "answer") {
                await clock.sleep(after.afterMs ?? 1_000, run.signal)
                if (run.signal.aborted) return
                reply(sessionID, {
                  text: after.text,
                  finish: after.finish ?? "stop",
                  tokens: { ...noTokens(), ...after.tokens },
                  cost: after.cost ?? 0,
                })
              }
            }
            setStatus(sessionID, null)
            return
          }
        }
      })()
    },
    async abort(sessionID) {
      aborted.push(sessionID)
      const session = sessions.get(sessionID)
      if (!session || session.status === null) return
      session.run?.abort()
      const error = { name: "MessageAbortedError", data: { message: "Aborted" } }
      emit("session.error", { sessionID, error })
      reply(sessionID, { error })
      setStatus(sessionID, null)
    },
    async statuses() {
      const map = new Map<string, SessionSignal>()
      for (const [sessionID, session] of sessions) if (session.status) map.set(sessionID, session.status)
      return map
    },
    async read(sessionID) {
      return [...(sessions.get(sessionID)?.replies ?? [])]
    },
    async pending(sessionID) {
      return sessions.get(sessionID)?.unanswered ?? false
    },
  }
}
