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
