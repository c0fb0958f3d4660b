import { isSessionError, type SessionError } from "./errors"
import type { TokenUsage } from "./events"
import { splitModelId } from "./model-id"

// Child sessions through the plugin's in-process v1 client, and the bus events that tell how they
// are doing (docs/opencode.md, "Child sessions"). Only this module knows the SDK's call shapes,
// its `{data, error}` results, the message and status shapes and the event names.

/** OpenCode's retry status: attempt number, the provider's message and when the next try starts (epoch ms). */
export interface RetryStatus {
  attempt: number
  message: string
  next: number
}

/** A bus event reduced to what the scheduler needs about one session. */
export type SessionSignal =
  | { type: "busy"; sessionID: string }
  | { type: "retry"; sessionID: string; retry: RetryStatus }
  | { type: "idle"; sessionID: string }
  | { type: "error"; sessionID: string; error: SessionError }
  /** Output: a message or part was created or grew. */
  | { type: "activity"; sessionID: string }

/** One assistant message of a child session, reduced to what the scheduler reads. */
export interface AssistantReply {
  id: string
  /** The message's text parts joined by newlines. */
  text: string
  finish: string | null
  error: SessionError | null
  completed: boolean
  tokens: TokenUsage
  cost: number
}

/** The child-session operations the runtime needs, over OpenCode's client; nothing about time. */
export interface ChildSessions {
  /** Creates a child session of `parentID`; returns its id. */
  create(input: { parentID: string; title: string }): Promise<string>
  /** Starts a turn without waiting for it (OpenCode's promptAsync). `model` is `provider/model`. */
  prompt(sessionID: string, input: { agent: string; model: string; text: string }): Promise<void>
  abort(sessionID: string): Promise<void>
  /** Statuses of busy or retrying sessions; idle sessions are absent (OpenCode's `session.status()`). */
  statuses(): Promise<Map<string, SessionSignal>>
  /** The session's assistant messages, oldest first. */
  read(sessionID: string): Promise<AssistantReply[]>
  /** True when the session's last message is a user message no answer follows yet (a turn still to run). */
  pending(sessionID: string): Promise<boolean>
}

/** The subset of OpenCode's v1 client (`PluginInput.client`) the child sessions call. */
export interface SessionClient {
  session: {
    create(options: { body: { parentID: string; title: string } }): Promise<ClientResult<unknown>>
    promptAsync(options: {
      path: { id: string }
      body: { agent: string; model: { providerID: string; modelID: string }; parts: { type: "text"; text: string }[] }
    }): Promise<ClientResult<unknown>>
    abort(options: { path: { id: string } }): Promise<ClientResult<unknown>>
    status(options?: object): Promise<ClientResult<unknown>>
    messages(options: { path: { id: string } }): Promise<ClientResult<unknown>>
  }
}

/** What every v1 client call resolves to: the data, or an error (it does not throw for HTTP errors). */
export interface ClientResult<T> {
  data?: T
  error?: unknown
}

/** A call to OpenCode's in-process API for a child session failed (create, prompt, abort, read). */
export class ChildSessionRequestError extends Error {
  readonly data: { operation: string; sessionID: string | null }

  constructor(operation: string, sessionID: string | null, detail: string, cause?: unknown) {
    super(
      `${operation}${sessionID ? ` ${sessionID}` : ""} failed: ${detail}`,
      cause === undefined ? undefined : { cause },
    )
    this.name = "ChildSessionRequestError"
    this.data = { operation, sessionID }
  }
}

/** Child sessions over OpenCode's v1 client, as a plugin receives it; failed calls throw ChildSessionRequestError. */
export function childSessions(client: SessionClient): ChildSessions {
  return {
    async create({ parentID, title }) {
      const result = await call("session.create", null, () => client.session.create({ body: { parentID, title } }))
      const id = isRecord(result) ? result.id : undefined
      if (typeof id !== "string")
        throw new ChildSessionRequestError("session.create", null, "no session id in the response")
      return id
    },
    async prompt(sessionID, { agent, model, text }) {
      await call("session.promptAsync", sessionID, () =>
        client.session.promptAsync({
          path: { id: sessionID },
          body: { agent, model: splitModel(model), parts: [{ type: "text", text }] },
        }),
      )
    },
    async abort(sessionID) {
      await call("session.abort", sessionID, () => client.session.abort({ path: { id: sessionID } }))
    },
    async statuses() {
      const result = await call("session.status", null, () => client.session.status())
      const map = new Map<string, SessionSignal>()
      if (!isRecord(result)) return map
      for (const [sessionID, status] of Object.entries(result)) {
        const signal = isRecord(status) ? readStatus(sessionID, status) : null
        if (signal) map.set(sessionID, signal)
      }
      return map
    },
    async read(sessionID) {
      const result = await call("session.messages", sessionID, () =>
        client.session.messages({ path: { id: sessionID } }),
      )
      return Array.isArray(result) ? result.flatMap(readReply) : []
    },
    async pending(sessionID) {
      const result = await call("session.messages", sessionID, () =>
        client.session.messages({ path: { id: sessionID } }),
      )
      const last = Array.isArray(result) ? result.at(-1) : undefined
      return isRecord(last) && isRecord(last.info) && last.info.role === "user"
    },
  }
}

/** Splits `provider/model` at the first slash (model ids may contain more, e.g. openrouter's). */
export function splitModel(model: string): { providerID: string; modelID: string } {
  const { provider, model: modelID } = splitModelId(model)
  return { providerID: provider ?? model, modelID }
}

/** Reads one `{info, parts}` entry of `session.messages`; [] for user messages and odd shapes. */
export function readReply(entry: unknown): AssistantReply[] {
  if (!isRecord(entry) || !isRecord(entry.info) || entry.info.role !== "assistant") return []
  const info = entry.info
  const parts = Array.isArray(entry.parts) ? entry.parts : []
  const text = parts
    .filter(
      (part): part is Record<string, unknown> =>
        isRecord(part) && part.type === "text" && typeof part.text === "string",
    )
    .map((part) => part.text as string)
    .join("\n")
  const tokens = isRecord(info.tokens) ? info.tokens : {}
  const cache = isRecord(tokens.cache) ? tokens.cache : {}
  const time = isRecord(info.time) ? info.time : {}
  return [
    {
      id: typeof info.id === "string" ? info.id : "",
      text,
      finish: typeof info.finish === "string" ? info.finish : null,
      error: isSessionError(info.error) ? info.error : null,
      completed: typeof time.completed === "number",
      tokens: {
        input: number(tokens.input),
        output: number(tokens.output),
        reasoning: number(tokens.reasoning),
        cacheRead: number(cache.read),
        cacheWrite: number(cache.write),
      },
      cost: number(info.cost),
    },
  ]
}

/**
 * Reads one event from the plugin `event` hook (`{type, properties}`); null for events that concern
 * no session or that the scheduler ignores. Tolerant of shape drift: unknown fields are ignored.
 */
export function readEvent(event: unknown): SessionSignal | null {
  if (!isRecord(event) || typeof event.type !== "string" || !isRecord(event.properties)) return null
  const properties = event.properties
  switch (event.type) {
    case "session.status": {
      const sessionID = stringField(properties, "sessionID")
      const status = properties.status
      if (!sessionID || !isRecord(status)) return null
      return readStatus(sessionID, status)
    }
    case "session.idle": {
      const sessionID = stringField(properties, "sessionID")
      return sessionID ? { type: "idle", sessionID } : null
    }
    case "session.error": {
      const sessionID = stringField(properties, "sessionID")
      if (!sessionID || !isSessionError(properties.error)) return null
      return { type: "error", sessionID, error: properties.error }
    }
    case "message.updated": {
      const info = properties.info
      const sessionID = isRecord(info) && info.role === "assistant" ? stringField(info, "sessionID") : null
      return sessionID ? { type: "activity", sessionID } : null
    }
    case "message.part.updated": {
      const part = properties.part
      const sessionID = isRecord(part) ? stringField(part, "sessionID") : null
      return sessionID ? { type: "activity", sessionID } : null
    }
    case "message.part.delta": {
      const sessionID = stringField(properties, "sessionID")
      return sessionID ? { type: "activity", sessionID } : null
    }
    default:
      return null
  }
}

/** Reads a `SessionStatus` (`{type: "idle" | "busy" | "retry", …}`) into a signal. */
export function readStatus(sessionID: string, status: Record<string, unknown>): SessionSignal | null {
  if (status.type === "busy") return { type: "busy", sessionID }
  if (status.type === "idle") return { type: "idle", sessionID }
  if (status.type === "retry") {
    return {
      type: "retry",
      sessionID,
      retry: {
        attempt: typeof status.attempt === "number" ? status.attempt : 0,
        message: typeof status.message === "string" ? status.message : "",
        next: typeof status.next === "number" ? status.next : 0,
      },
    }
  }
  return null
}

async function call(
  operation: string,
  sessionID: string | null,
  run: () => Promise<ClientResult<unknown>>,
): Promise<unknown> {
  let result: ClientResult<unknown>
  try {
    result = await run()
  } catch (cause) {
    throw new ChildSessionRequestError(
      operation,
      sessionID,
      cause instanceof Error ? cause.message : String(cause),
      cause,
    )
  }
  if (result.error !== undefined && result.error !== null) {
    throw new ChildSessionRequestError(operation, sessionID, describe(result.error), result.error)
  }
  return result.data
}

function describe(error: unknown): string {
  if (isRecord(error)) {
    const data = isRecord(error.data) ? error.data : {}
    const message =
      typeof data.message === "string" ? data.message : typeof error.message === "string" ? error.message : null
    const name = typeof error.name === "string" ? error.name : "error"
    if (message) return `${name}: ${message}`
  }
  try {
    return JSON.stringify(error).slice(0, 300)
  } catch {
    return String(error)
  }
}

function stringField(record: Record<string, unknown>, key: string): string | null {
  const value = record[key]
  return typeof value === "string" && value !== "" ? value : null
}

function number(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
