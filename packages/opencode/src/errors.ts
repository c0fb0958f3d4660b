// OpenCode's error shape, shared by `session.error`, `AssistantMessage.error` and the `error` event
// of `opencode run --format json` (docs/opencode.md, "Errors and retries").

/** An error as OpenCode reports it on `session.error` and `AssistantMessage.error`: `{name, data}`. */
export interface SessionError {
  name: string
  data?: Record<string, unknown>
}

/** Whether a value has the `{name, data?}` shape of an OpenCode error. */
export function isSessionError(value: unknown): value is SessionError {
  return isRecord(value) && typeof value.name === "string" && (value.data === undefined || isRecord(value.data))
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
