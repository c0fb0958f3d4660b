// What both service fakes (GitLab, GitHub) share about answering HTTP: the reply a route handler
// returns and how a path segment is decoded. Their error bodies and headers stay in their own modules.

/** What a route handler answers. */
export interface Reply {
  status: number
  /** JSON body (serialised unless `text` is set); omitted for 204. */
  body?: unknown
  /** A non-JSON body, sent as-is with `contentType`. */
  text?: string
  contentType?: string
  headers?: Record<string, string>
}

/** A JSON reply. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, body, headers }
}

/** A URL path segment decoded; a malformed escape is kept as written, as Rails and GitHub do. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}
