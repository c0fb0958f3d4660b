// The JSONL stream of `opencode run --format json`: one event per line, each with `type`,
// `timestamp`, `sessionID` and a `part` (docs/opencode.md, "The JSONL stream"). Only this module
// knows the event names; callers use the readers below.

/** One event of `opencode run --format json` (only the fields we read are typed). */
export interface RunEvent {
  type: string
  timestamp?: number
  sessionID?: string
  part?: Record<string, unknown> & { type?: string; reason?: string; tool?: string; text?: string }
  error?: { name?: string; data?: Record<string, unknown> }
  [key: string]: unknown
}

/** A parsed line: the event, or the raw text and why it was not one. One bad line never ends a stream. */
export type JsonlLine = { ok: true; event: RunEvent } | { ok: false; line: string; error: string }

/** When to hand buffered lines on: every `lines` lines or `ms` after the first buffered one. */
export interface FlushPolicy {
  lines: number
  ms: number
}

/** The seed system's flush policy: 100 lines or 50 ms, whichever comes first. */
export const defaultFlush: FlushPolicy = { lines: 100, ms: 50 }

/** Parses one line of JSONL into a result; blank lines are not events. */
export function parseJsonlLine(line: string): JsonlLine | null {
  const trimmed = line.trim()
  if (trimmed === "") return null
  try {
    const value: unknown = JSON.parse(trimmed)
    if (typeof value !== "object" || value === null || typeof (value as { type?: unknown }).type !== "string") {
      return { ok: false, line: trimmed.slice(0, 500), error: "not an event object with a type" }
    }
    return { ok: true, event: value as RunEvent }
  } catch (error) {
    return { ok: false, line: trimmed.slice(0, 500), error: (error as Error).message }
  }
}

/**
 * Reads a JSONL byte stream as it arrives, handing batches of parsed lines to `onBatch` every
 * `flush.lines` lines or `flush.ms` after the first unflushed line, and once more at the end.
 * Lines split across chunks and multi-byte characters split across chunks are reassembled.
 */
export async function readJsonl(
  stream: ReadableStream<Uint8Array>,
  onBatch: (batch: JsonlLine[]) => void,
  flush: FlushPolicy = defaultFlush,
): Promise<void> {
  const decoder = new TextDecoder()
  let pending = ""
  let batch: JsonlLine[] = []
  let timer: ReturnType<typeof setTimeout> | null = null
  const emit = () => {
    if (timer) clearTimeout(timer)
    timer = null
    if (batch.length === 0) return
    const out = batch
    batch = []
    onBatch(out)
  }
  const push = (line: string) => {
    const parsed = parseJsonlLine(line)
    if (!parsed) return
    batch.push(parsed)
    if (batch.length >= flush.lines) return emit()
    timer ??= setTimeout(emit, flush.ms)
  }
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      pending += decoder.decode(value, { stream: true })
      let start = 0
      for (let newline = pending.indexOf("\n"); newline >= 0; newline = pending.indexOf("\n", start)) {
        push(pending.slice(start, newline))
        start = newline + 1
      }
      pending = pending.slice(start)
    }
    pending += decoder.decode()
    if (pending !== "") push(pending)
  } finally {
    reader.releaseLock()
    emit()
  }
}

/** Token counts as OpenCode reports them (`tokens.cache.{read, write}` flattened), in our names. */
export interface TokenUsage {
  input: number
  output: number
  reasoning: number
  cacheRead: number
  cacheWrite: number
}

/** A model step's end (`step_finish`): why it ended, its tokens and its cost in USD. */
export interface StepFinish {
  /** `stop`, `tool-calls`, `length` (the answer was cut off), `content-filter`, `other`; null when absent. */
  reason: string | null
  tokens: TokenUsage
  costUsd: number
}

/** A tool call of the root session that completed or failed (`tool_use`; there is no event while it runs). */
export interface ToolUse {
  /** The tool's name as the model called it (an MCP tool is `<server>_<tool>`); "unknown" when absent. */
  tool: string
  /** `completed` or `error`; "unknown" when absent. */
  status: string
  input: unknown
  /** The tool's output text; "" when it has none. */
  output: string
  metadata: Record<string, unknown>
}

/** The finish reason of a step whose answer hit the output limit (not an error: exit code 0). */
export const cutOffReason = "length"

/** A `step_finish` event's reason, tokens and cost; null for any other event. */
export function stepFinishOf(event: RunEvent): StepFinish | null {
  if (event.type !== "step_finish") return null
  const part = event.part ?? {}
  const tokens = (part.tokens ?? {}) as {
    input?: number
    output?: number
    reasoning?: number
    cache?: { read?: number; write?: number }
  }
  return {
    reason: part.reason ?? null,
    tokens: {
      input: tokens.input ?? 0,
      output: tokens.output ?? 0,
      reasoning: tokens.reasoning ?? 0,
      cacheRead: tokens.cache?.read ?? 0,
      cacheWrite: tokens.cache?.write ?? 0,
    },
    costUsd: typeof part.cost === "number" ? part.cost : 0,
  }
}

/** A `tool_use` event's tool, status, input, output and metadata; null for any other event. */
export function toolUseOf(event: RunEvent): ToolUse | null {
  if (event.type !== "tool_use") return null
  const part = event.part ?? {}
  const state = (part.state ?? {}) as {
    status?: string
    input?: unknown
    output?: unknown
    metadata?: Record<string, unknown>
  }
  return {
    tool: typeof part.tool === "string" ? part.tool : "unknown",
    status: state.status ?? "unknown",
    input: state.input ?? null,
    output: typeof state.output === "string" ? state.output : "",
    metadata: state.metadata ?? {},
  }
}

/** A `text` event's text (a text part, printed once complete); null for any other event or no text. */
export function textOf(event: RunEvent): string | null {
  return event.type === "text" && typeof event.part?.text === "string" ? event.part.text : null
}

/**
 * An `error` event's error (`{ name, data }` when OpenCode keeps to its shape, but passed on as it
 * came), wrapped so that an error event without one is still told apart; null for any other event.
 */
export function errorEventOf(event: RunEvent): { error: unknown } | null {
  return event.type === "error" ? { error: event.error } : null
}
