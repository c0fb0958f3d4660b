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
