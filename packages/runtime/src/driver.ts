import { splitModelId } from "@opencode-reviewer/core/model/model-id"
import { addTokens, noTokens, type TokenCounts } from "@opencode-reviewer/core/model/usage"
import { isSessionError, type SessionError } from "@opencode-reviewer/core/run/provider-errors"
import { ChildSessionRequestError } from "./errors"
import { readStatus, type SessionSignal } from "./events"

/** Token counts of one reply or a sum of them, in the names the CLI's usage records use. */
export type Tokens = TokenCounts

/** One assistant message of a child session, reduced to what the scheduler reads. */
export interface AssistantReply {
  id: string
  /** The message's text parts joined by newlines. */
  text: string
  finish: string | null
  error: SessionError | null
  completed: boolean
  tokens: Tokens
  cost: number
}

/**
 * The child-session operations the scheduler needs, and nothing about time. The plugin implements
 * it over OpenCode's in-process client; tests implement it with a scripted fake.
 */
export interface SessionDriver {
  /** Creates a child session of `parentID`; returns its id. */
  create(input: { parentID: string; title: string }): Promise<string>
  /** Starts a turn without waiting for it (OpenCode's promptAsync). `model` is `provider/model`. */
  prompt(sessionID: string, input: { agent: string; model: string; text: string }): Promise<void>
  abort(sessionID: string): Promise<void>
  /** Statuses of busy or retrying sessions; idle sessions are absent (OpenCode's `session.status()`). */
  statuses(): Promise<Map<string, SessionSignal>>
  /** The session's assistant messages, oldest first. */
  read(sessionID: string): Promise<AssistantReply[]>
}

/** The subset of OpenCode's v1 client (`PluginInput.client`) the driver calls. */
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

interface ClientResult<T> {
  data?: T
  error?: unknown
}

/** A driver over OpenCode's v1 client, as a plugin receives it. */
export function createClientDriver(client: SessionClient): SessionDriver {
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

/** Zero tokens. */
export { addTokens, noTokens }

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

function number(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
