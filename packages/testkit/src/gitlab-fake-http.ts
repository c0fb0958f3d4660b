// Request parsing and response shaping for the GitLab fake, following what Rack, Grape and GitLab's
// pagination helpers do (lib/gitlab/pagination/offset_header_builder.rb).

import { json, type Reply } from "./fake-http"

export { json, type Reply }

/** The request body as parsed for the handlers and the request log. */
export interface ParsedBody {
  kind: "none" | "json" | "multipart" | "urlencoded" | "text"
  /** Nested params (Rack's bracket notation expanded) or the JSON value. */
  value: unknown
  /** For form bodies: the flat key → value pairs exactly as sent (e.g. `position[new_path]`). */
  form?: Record<string, string>
  /** For non-multipart bodies: the raw text. */
  raw?: string
  /** Set when the body could not be parsed. */
  error?: string
}

/** GitLab's `render_api_error!` shape: `{"message": ...}`. */
export function message(status: number, text: unknown): Reply {
  return { status, body: { message: text } }
}

/** Grape's `error!` shape (parameter validation, unknown routes): `{"error": ...}`. */
export function grapeError(status: number, text: string): Reply {
  return { status, body: { error: text } }
}

export const unauthorized = (): Reply => message(401, "401 Unauthorized")
export const forbidden = (): Reply => message(403, "403 Forbidden")
/** `not_found!(resource)` → "404 <Resource> Not Found"; ActiveRecord::RecordNotFound → "404 Not found". */
export const notFound = (resource?: string): Reply =>
  message(404, resource ? `404 ${resource} Not Found` : "404 Not Found")
export const recordNotFound = (): Reply => message(404, "404 Not found")
export const badRequest = (reason: string): Reply => message(400, `400 Bad request - ${reason}`)

/** Thrown by the coercion helpers; becomes Grape's 400 `{"error": "..."}` (all errors joined by ", "). */
export class ParamsError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join(", "))
  }
}

export async function parseBody(request: Request): Promise<ParsedBody> {
  const contentType = (request.headers.get("content-type") ?? "").toLowerCase()
  if (request.method === "GET" || request.method === "HEAD") return { kind: "none", value: {} }
  const buffer = await request.arrayBuffer()
  if (buffer.byteLength === 0) return { kind: "none", value: {} }
  if (contentType.startsWith("multipart/form-data")) {
    try {
      const form = await new Response(buffer, {
        headers: { "content-type": request.headers.get("content-type") ?? "" },
      }).formData()
      const flat: Record<string, string> = {}
      const pairs: [string, string][] = []
      for (const [key, value] of form.entries()) {
        const text = typeof value === "string" ? value : `[file ${(value as File).name}]`
        flat[key] = text
        pairs.push([key, text])
      }
      return { kind: "multipart", value: nestParams(pairs), form: flat }
    } catch (error) {
      return { kind: "multipart", value: {}, error: String(error) }
    }
  }
  const raw = new TextDecoder().decode(buffer)
  if (contentType.startsWith("application/x-www-form-urlencoded")) {
    const pairs = [...new URLSearchParams(raw).entries()]
    return { kind: "urlencoded", value: nestParams(pairs), form: Object.fromEntries(pairs), raw }
  }
  if (contentType.startsWith("application/json") || contentType === "") {
    try {
      return { kind: "json", value: JSON.parse(raw), raw }
    } catch (error) {
      if (contentType === "") return { kind: "text", value: {}, raw }
      return { kind: "json", value: {}, raw, error: String(error) }
    }
  }
  return { kind: "text", value: {}, raw }
}

/** Rack::Utils.parse_nested_query semantics for `a[b][c]=v` and `a[]=v` keys. */
export function nestParams(pairs: Iterable<[string, string]>): Record<string, unknown> {
  const root: Record<string, unknown> = {}
  for (const [key, value] of pairs) {
    const parts = splitKey(key)
    if (parts.length === 0) continue
    let node: Record<string, unknown> = root
    for (let i = 0; i < parts.length; i += 1) {
      const part = parts[i]!
      const isLast = i === parts.length - 1
      const next = parts[i + 1]
      if (isLast) {
        if (part === "") continue
        node[part] = value
        break
      }
      if (next === "") {
        const list = Array.isArray(node[part]) ? (node[part] as unknown[]) : []
        list.push(value)
        node[part] = list
        break
      }
      const child = node[part]
      if (typeof child !== "object" || child === null || Array.isArray(child)) node[part] = {}
      node = node[part] as Record<string, unknown>
    }
  }
  return root
}

function splitKey(key: string): string[] {
  const head = /^[^[\]]+/.exec(key)
  if (!head) return []
  const parts = [head[0]]
  for (const match of key.slice(head[0].length).matchAll(/\[([^\]]*)\]/g)) parts.push(match[1] ?? "")
  return parts
}

/** Grape Integer coercion: numbers and numeric strings; "" and null become null (absent). */
export function coerceInteger(value: unknown, name: string, errors: string[]): number | null {
  if (value === undefined || value === null || value === "") return null
  if (typeof value === "number" && Number.isInteger(value)) return value
  if (typeof value === "string" && /^\s*[+-]?\d+\s*$/.test(value)) return Number.parseInt(value, 10)
  errors.push(`${name} is invalid`)
  return null
}

/** Grape Boolean coercion (dry-types Params::Bool). */
export function coerceBoolean(value: unknown, name: string, errors: string[]): boolean | null {
  if (value === undefined || value === null || value === "") return null
  if (typeof value === "boolean") return value
  const text = String(value).toLowerCase()
  if (["1", "on", "t", "true", "y", "yes"].includes(text)) return true
  if (["0", "off", "f", "false", "n", "no"].includes(text)) return false
  errors.push(`${name} is invalid`)
  return null
}

/** Grape String coercion: strings and numbers; a hash or array is invalid. */
export function coerceString(value: unknown, name: string, errors: string[]): string | null {
  if (value === undefined || value === null) return null
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  errors.push(`${name} is invalid`)
  return null
}

/** One page of a list, with GitLab's offset pagination headers. */
export function paginate<T>(
  items: T[],
  query: URLSearchParams,
  requestUrl: URL,
  linkParams: Record<string, string>,
): { page: T[]; headers: Record<string, string> } {
  const errors: string[] = []
  const pageParam = coerceInteger(query.get("page") ?? undefined, "page", errors)
  const perPageParam = coerceInteger(query.get("per_page") ?? undefined, "per_page", errors)
  if (perPageParam === 0) errors.push("per_page has a value not allowed")
  if (errors.length > 0) throw new ParamsError(errors)
  // Kaminari: default 20, max 100; a page below 1 is page 1.
  const perPage = Math.min(perPageParam !== null && perPageParam > 0 ? perPageParam : 20, 100)
  const page = pageParam !== null && pageParam > 0 ? pageParam : 1
  const total = items.length
  const totalPages = Math.max(1, Math.ceil(total / perPage))
  const next = page < totalPages ? page + 1 : null
  const prev = page > 1 && page <= totalPages ? page - 1 : null
  // OffsetHeaderBuilder#page_href: the request's params (route params and defaults included),
  // with page/per_page replaced, serialised by Rails' to_query (keys sorted, CGI-escaped).
  const href = (target: number) => {
    const params: Record<string, string> = { ...linkParams, page: String(target), per_page: String(perPage) }
    const queryText = Object.keys(params)
      .sort()
      .map((key) => `${cgiEscape(key)}=${cgiEscape(params[key]!)}`)
      .join("&")
    return `${requestUrl.origin}${requestUrl.pathname}?${queryText}`
  }
  const links: string[] = []
  if (prev) links.push(`<${href(prev)}>; rel="prev"`)
  if (next) links.push(`<${href(next)}>; rel="next"`)
  links.push(`<${href(1)}>; rel="first"`)
  links.push(`<${href(totalPages)}>; rel="last"`)
  return {
    page: items.slice((page - 1) * perPage, page * perPage),
    headers: {
      "X-Per-Page": String(perPage),
      "X-Page": String(page),
      "X-Next-Page": next ? String(next) : "",
      "X-Prev-Page": prev ? String(prev) : "",
      Link: links.join(", "),
      "X-Total": String(total),
      "X-Total-Pages": String(totalPages),
    },
  }
}

/** Ruby's CGI.escape (used by Rails' to_query): space → "+", everything but [A-Za-z0-9_.-~] escaped. */
function cgiEscape(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, "+")
}

/** The HTTP reason phrase for a status, for generic injected failures. */
export function reason(status: number): string {
  const reasons: Record<number, string> = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
  }
  return reasons[status] ?? "Error"
}
