import { isSessionError, type SessionError } from "@opencode-reviewer/opencode/errors"

/**
 * What a child session's error means for the reviewer:
 * - `retryable`: the model (or its provider) is unavailable; counts for its circuit breaker and
 *   fails back to the next model of the reviewer's chain;
 * - `fatal`: another model would fail the same way (auth, context overflow, output format);
 * - `aborted`: the session was aborted (by us or the user).
 */
export type ErrorKind = "retryable" | "fatal" | "aborted"

/** The classification of one error, with a short message fit for the tool output. */
export interface ErrorVerdict {
  kind: ErrorKind
  message: string
}

// Statuses a different model (or the same one later) can cure: rate limits, overload, gateway and
// upstream failures. 529 is Anthropic's "overloaded".
const retryableStatuses = new Set([408, 409, 425, 429, 500, 502, 503, 504, 529])
// Statuses no other model cures: bad credentials, forbidden, a request the provider will never take.
const fatalStatuses = new Set([400, 401, 402, 403, 404, 405, 413, 415, 422])
// OpenCode's own provider timeout codes (APIError.data.metadata.code), both retryable by nature.
const timeoutCodes = new Set(["ProviderHeaderTimeoutError", "ProviderResponseStreamError", "ProviderTimeoutError"])
// Error names no failback can fix.
const fatalNames = new Set([
  "ProviderAuthError",
  "ContextOverflowError",
  "StructuredOutputError",
  "MessageOutputLengthError",
  "ContentFilterError",
  "UnknownError",
])

/**
 * Classifies a `session.error` / `info.error` value by its fields (name, statusCode, isRetryable,
 * metadata.code), never by its message text. Anything unrecognised is fatal: failing back on an
 * error we do not understand would only repeat it on another model.
 */
export function classifyError(error: unknown): ErrorVerdict {
  if (!isSessionError(error)) return { kind: "fatal", message: `unrecognised error: ${preview(error)}` }
  const data = error.data ?? {}
  const message = describeError(error)
  if (error.name === "MessageAbortedError") return { kind: "aborted", message }
  if (fatalNames.has(error.name)) return { kind: "fatal", message }
  const status = typeof data.statusCode === "number" ? data.statusCode : null
  if (status !== null && fatalStatuses.has(status)) return { kind: "fatal", message }
  if (status !== null && (retryableStatuses.has(status) || status >= 500)) return { kind: "retryable", message }
  if (data.isRetryable === true) return { kind: "retryable", message }
  const code = isRecord(data.metadata) ? data.metadata.code : undefined
  if (typeof code === "string" && timeoutCodes.has(code)) return { kind: "retryable", message }
  return { kind: "fatal", message }
}

/** A one-line description: name, status and message, e.g. `APIError 503: Service unavailable`. */
export function describeError(error: SessionError): string {
  const data = error.data ?? {}
  const status = typeof data.statusCode === "number" ? ` ${data.statusCode}` : ""
  const text = typeof data.message === "string" && data.message.trim() !== "" ? data.message.trim() : null
  const line = `${error.name}${status}${text ? `: ${text}` : ""}`.replace(/\s+/g, " ")
  return line.length > 300 ? `${line.slice(0, 297)}...` : line
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

function preview(value: unknown): string {
  const text = (() => {
    try {
      return JSON.stringify(value) ?? String(value)
    } catch {
      return String(value)
    }
  })()
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}

/** The coordinator's view of a failure: whether another model may succeed, and who said no. */
export interface ClassifiedError {
  verdict: "failback" | "retry" | "fatal"
  name: string
  message: string
  statusCode: number | null
  /** Provider host or id when the error names one (for "401 from <provider>" messages). */
  provider: string | null
}

/**
 * Classifies an error for the coordinator process: the same field rules as `classifyError`, plus
 * a cut-off answer (retry on the same model) and the provider's host for messages.
 */
export function classifyProviderError(error: unknown): ClassifiedError {
  const record = isSessionError(error) ? error : { name: "UnknownError", data: { message: preview(error) } }
  const data = record.data ?? {}
  const verdict =
    record.name === "MessageOutputLengthError"
      ? "retry"
      : classifyError(record).kind === "retryable"
        ? "failback"
        : "fatal"
  return {
    verdict,
    name: record.name,
    message: typeof data.message === "string" ? data.message : record.name,
    statusCode: typeof data.statusCode === "number" ? data.statusCode : null,
    provider: providerOf(data),
  }
}

/**
 * The seed system's stderr table, the one place text decides: OpenCode's stderr carries no fields,
 * so these words are all there is to tell "this provider is struggling" from a real failure.
 */
export function retryableText(text: string): boolean {
  return /overloaded|\b(429|500|502|503|504|529)\b|rate.?limit|too many requests|service unavailable|bad gateway|timed? ?out|ECONNRESET|ECONNREFUSED|socket hang up|fetch failed/i.test(
    text,
  )
}

function providerOf(data: Record<string, unknown>): string | null {
  if (typeof data.providerID === "string") return data.providerID
  const metadata = isRecord(data.metadata) ? data.metadata : undefined
  const url = typeof metadata?.url === "string" ? metadata.url : null
  if (!url) return null
  try {
    return new URL(url).host
  } catch {
    return null
  }
}
