import { isSessionError, type SessionError } from "@opencode-reviewer/core/run/provider-errors"

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

function stringField(record: Record<string, unknown>, key: string): string | null {
  const value = record[key]
  return typeof value === "string" && value !== "" ? value : null
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
