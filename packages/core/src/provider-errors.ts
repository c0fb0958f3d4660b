/** What to do about a failed model call: another model may succeed, the same may, or nothing will. */
export type ErrorVerdict = "failback" | "retry" | "fatal"

/** A classified provider error with the facts a person needs. */
export interface ClassifiedError {
  verdict: ErrorVerdict
  name: string
  message: string
  statusCode: number | null
  /** Provider host or id when the error names one (for "401 from <provider>" messages). */
  provider: string | null
}

const retryableStatus = new Set([408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529])

/**
 * Classifies an OpenCode error object (`{name, data}` from a JSONL `error` event, `session.error`
 * or `AssistantMessage.error`). Only retryable API errors fail back to another model: auth errors,
 * context overflow, aborts and output-format errors would fail the same way on any model.
 */
export function classifyProviderError(error: unknown): ClassifiedError {
  const record = (typeof error === "object" && error !== null ? error : {}) as { name?: unknown; data?: unknown; message?: unknown }
  const data = (typeof record.data === "object" && record.data !== null ? record.data : {}) as Record<string, unknown>
  const name = typeof record.name === "string" ? record.name : "UnknownError"
  const message = String(data.message ?? record.message ?? name)
  const statusCode = typeof data.statusCode === "number" ? data.statusCode : null
  const provider = providerOf(data)
  const verdict = verdictFor(name, statusCode, data, message)
  return { verdict, name, message, statusCode, provider }
}

function verdictFor(name: string, status: number | null, data: Record<string, unknown>, message: string): ErrorVerdict {
  if (name === "ProviderAuthError" || status === 401 || status === 403) return "fatal"
  if (name === "ContextOverflowError" || name === "MessageAbortedError" || name === "StructuredOutputError" || name === "ContentFilterError") return "fatal"
  if (name === "MessageOutputLengthError") return "retry"
  if (name === "APIError") {
    if (status !== null && retryableStatus.has(status)) return "failback"
    if (data.isRetryable === true) return "failback"
    return "fatal"
  }
  // OpenCode's stderr and unknown errors carry only text: the seed system's table, kept here alone.
  return retryableText(message) ? "failback" : "fatal"
}

/** The seed system's stderr table: text that means "this provider is struggling, try another". */
export function retryableText(text: string): boolean {
  return /overloaded|\b(429|500|502|503|504|529)\b|rate.?limit|too many requests|service unavailable|bad gateway|timed? ?out|ECONNRESET|ECONNREFUSED|socket hang up|fetch failed/i.test(text)
}

function providerOf(data: Record<string, unknown>): string | null {
  if (typeof data.providerID === "string") return data.providerID
  const metadata = data.metadata as Record<string, unknown> | undefined
  const url = typeof metadata?.url === "string" ? metadata.url : null
  if (!url) return null
  try {
    return new URL(url).host
  } catch {
    return null
  }
}

export * as ProviderErrors from "./provider-errors"
