import type { Gitlab } from "@gitbeaker/rest"
import { type Logger, type RetryTiming, resolveRetryTiming, silentLogger } from "@opencode-reviewer/core"
import { GitlabRequestError } from "./errors"

/** HTTP methods the GitLab API uses. */
export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** One request to GitLab through our requester. */
export interface GitlabRequest {
  method: Method
  /** Relative to the API URL (`projects/1/merge_requests/2/notes`), or an absolute URL (GraphQL). */
  path: string
  /** Already encoded (`a=1&b=2`) or an object encoded like gitbeaker does (snake_case keys, `x[]=` arrays). */
  query?: string | Record<string, unknown> | undefined
  /** A JSON body, sent as is (no key rewriting). */
  json?: unknown
  /** A multipart body (only gitbeaker sends these). */
  form?: FormData | undefined
  headers?: Record<string, string> | undefined
  signal?: AbortSignal | undefined
  /**
   * For a create (POST of a note, thread or reply): called after a 502/503/504, a timeout or a
   * dropped connection, when GitLab may have stored the first attempt anyway. It looks for the
   * object (by our hidden marker) and returns it, or undefined when it is not there. Found ⇒ the
   * request counts as done with that body; not found ⇒ the POST is sent again. A POST without it
   * is never re-sent after such a failure (only after a 429, which GitLab rejects before storing).
   */
  landed?: (() => Promise<unknown>) | undefined
}

/** A successful answer: JSON parsed, `text/*` as a string, anything else as a Blob (as gitbeaker does). */
export interface GitlabResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

/** Tuning and test seams of the requester. */
export interface RequesterOptions extends RetryTiming {
  /** REST base, e.g. `https://gitlab.example.com/api/v4`. */
  apiUrl: string
  token: string
  fetch?: typeof fetch
  /** Longest wait between attempts, whatever the server asks for; default 60 s. */
  maxDelayMs?: number
  log?: Logger
}

/** Our HTTP layer for GitLab: retries, rate limits, timeouts, and POSTs that are never duplicated. */
export interface GitlabRequester {
  readonly apiUrl: string
  request(request: GitlabRequest): Promise<GitlabResponse>
  /** The same requester in the shape gitbeaker's `requesterFn` option takes (docs/gitlab.md#gitbeakers-retry-and-our-requester). */
  readonly requesterFn: RequesterFn
}

/** gitbeaker's `requesterFn` constructor option. */
export type RequesterFn = NonNullable<ConstructorParameters<typeof Gitlab>[0]["requesterFn"]>

const retryStatuses = new Set([429, 502, 503, 504])
const ambiguousStatuses = new Set([502, 503, 504])

/** Builds the requester. Every GitLab call of this package goes through it, gitbeaker's included. */
export function createRequester(options: RequesterOptions): GitlabRequester {
  const apiUrl = options.apiUrl.replace(/\/+$/, "")
  const fetcher = options.fetch ?? fetch
  const { sleep, now, random, timeoutMs, maxAttempts, baseDelayMs } = resolveRetryTiming(options)
  const maxDelayMs = options.maxDelayMs ?? 60_000
  const log = options.log ?? silentLogger

  async function request(input: GitlabRequest): Promise<GitlabResponse> {
    const url = urlOf(apiUrl, input.path, input.query)
    const shown = displayPath(url)
    const idempotent = input.method === "GET" || input.method === "PUT" || input.method === "DELETE"
    let lastFailure: { status: number | null; description: string } = { status: null, description: "not sent" }

    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      const outcome = await send(url, input)
      if (outcome.kind === "response" && outcome.response.ok) return await parseResponse(outcome.response)
      if (outcome.kind === "aborted") {
        throw new GitlabRequestError(
          {
            method: input.method,
            path: shown,
            status: null,
            description: "aborted by the caller",
            attempts: attempt,
            ambiguous: false,
          },
          { cause: outcome.error },
        )
      }

      const status = outcome.kind === "response" ? outcome.response.status : null
      const description = outcome.kind === "response" ? await describeBody(outcome.response) : outcome.description
      lastFailure = { status, description }
      const headers = outcome.kind === "response" ? outcome.response.headers : null
      const retryable = status === null || retryStatuses.has(status)
      if (!retryable) {
        throw new GitlabRequestError({
          method: input.method,
          path: shown,
          status,
          description,
          attempts: attempt,
          ambiguous: false,
        })
      }

      // A 429 is refused before anything is stored, so any method may repeat it. A 5xx, a timeout or
      // a dropped connection may come after GitLab stored a POST: repeat only once we know it did not,
      // and look only after the wait, so a request still in flight has time to land.
      const mayHaveLanded = status === null || ambiguousStatuses.has(status)
      const check = !idempotent && mayHaveLanded
      if (check && !input.landed) {
        throw new GitlabRequestError(
          { method: input.method, path: shown, status, description, attempts: attempt, ambiguous: true },
          { retryable: true },
        )
      }
      if (attempt === maxAttempts && !check) break

      const delayMs = retryDelay(headers, attempt)
      log.warn({ method: input.method, path: shown, status, attempt, delayMs, description }, "gitlab request retry")
      await sleep(delayMs)
      if (check && input.landed) {
        const stored = await input.landed()
        if (stored !== undefined) {
          log.info({ method: input.method, path: shown, status, attempt }, "gitlab create had landed; not sent again")
          return { status: 201, headers: {}, body: stored }
        }
      }
    }
    throw new GitlabRequestError(
      {
        method: input.method,
        path: shown,
        status: lastFailure.status,
        description: lastFailure.description,
        attempts: maxAttempts,
        ambiguous: false,
      },
      { retryable: true },
    )
  }

  type Outcome =
    | { kind: "response"; response: Response }
    | { kind: "failed"; description: string; error: unknown }
    | { kind: "aborted"; error: unknown }

  async function send(url: string, input: GitlabRequest): Promise<Outcome> {
    const timeout = AbortSignal.timeout(timeoutMs)
    const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout
    const headers: Record<string, string> = { ...input.headers, "private-token": options.token }
    let body: RequestInit["body"]
    if (input.form !== undefined) body = input.form
    else if (input.json !== undefined) {
      body = JSON.stringify(input.json)
      headers["content-type"] = "application/json"
    }
    try {
      const response = await fetcher(url, { method: input.method, headers, body, signal })
      return { kind: "response", response }
    } catch (error) {
      if (input.signal?.aborted) return { kind: "aborted", error }
      if (timeout.aborted) return { kind: "failed", description: `no answer within ${timeoutMs} ms`, error }
      return {
        kind: "failed",
        description: `connection failed: ${error instanceof Error ? error.message : String(error)}`,
        error,
      }
    }
  }

  function retryDelay(headers: Headers | null, attempt: number): number {
    const asked = headers ? serverDelay(headers, now()) : null
    if (asked !== null) return clamp(asked, 0, maxDelayMs)
    const step = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1))
    return Math.round(step / 2 + (random() * step) / 2)
  }

  const requesterFn: RequesterFn = ((service: GitbeakerService) => {
    const call =
      (method: Method) =>
      async (endpoint: string, options: GitbeakerRequestOptions = {}): Promise<GitlabResponse> => {
        const base = service.url.endsWith("/") ? service.url : `${service.url}/`
        const headers: Record<string, string> = { ...service.headers }
        if (options.sudo !== undefined) headers.sudo = String(options.sudo)
        const form = options.body instanceof FormData ? options.body : undefined
        const json = form === undefined && options.body !== undefined ? decamelizeKeys(options.body) : undefined
        return request({
          method,
          path: `${base}${endpoint.replace(/^\/+/, "")}`,
          query: options.searchParams,
          json,
          form,
          headers,
          signal: options.signal,
        })
      }
    return { get: call("GET"), post: call("POST"), put: call("PUT"), patch: call("PATCH"), delete: call("DELETE") }
  }) as unknown as RequesterFn

  return { apiUrl, request, requesterFn }
}

/** The wait a response asks for in ms: `Retry-After` (seconds or HTTP date), else `RateLimit-Reset` (epoch seconds). */
export function serverDelay(headers: Headers, now: number): number | null {
  const retryAfter = headers.get("retry-after")?.trim()
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return Number(retryAfter) * 1000
    const date = Date.parse(retryAfter)
    if (!Number.isNaN(date)) return Math.max(0, date - now)
  }
  const reset = headers.get("ratelimit-reset")?.trim()
  if (reset && /^\d+$/.test(reset)) return Math.max(0, Number(reset) * 1000 - now)
  return null
}

/** Object keys in snake_case, deeply, the way gitbeaker's requester rewrites bodies and queries. */
export function decamelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decamelizeKeys)
  if (!isPlainObject(value)) return value
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [decamelize(key), decamelizeKeys(inner)]))
}

/** A query string as gitbeaker builds it: snake_case keys, arrays as `key[]=`, objects as `key[inner]=`. */
export function encodeQuery(params: Record<string, unknown> | undefined): string {
  if (!params) return ""
  const parts: string[] = []
  const add = (key: string, value: unknown) => {
    if (value === undefined) return
    if (Array.isArray(value)) {
      for (const item of value) add(`${key}[]`, item)
      return
    }
    if (value instanceof Date) {
      parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(value.toISOString())}`)
      return
    }
    if (isPlainObject(value)) {
      for (const [inner, item] of Object.entries(value)) add(`${key}[${inner}]`, item)
      return
    }
    parts.push(`${encodeURIComponent(key)}=${encodeURIComponent(value === null ? "" : String(value))}`)
  }
  for (const [key, value] of Object.entries(decamelizeKeys(params) as Record<string, unknown>)) add(key, value)
  return parts.join("&")
}

interface GitbeakerService {
  url: string
  headers: Record<string, string>
}

interface GitbeakerRequestOptions {
  body?: unknown
  searchParams?: Record<string, unknown>
  sudo?: string | number
  signal?: AbortSignal
  asStream?: boolean
}

function urlOf(apiUrl: string, path: string, query: GitlabRequest["query"]): string {
  const url = /^https?:\/\//.test(path) ? new URL(path) : new URL(`${apiUrl}/${path.replace(/^\/+/, "")}`)
  const extra = typeof query === "string" ? query.replace(/^\?/, "") : encodeQuery(query)
  if (extra) url.search = url.search ? `${url.search}&${extra}` : `?${extra}`
  return url.toString()
}

// Paths in messages and logs: never the host's query string secrets (there are none today, but a
// `private_token=` query would otherwise end up in a log line).
function displayPath(url: string): string {
  const parsed = new URL(url)
  return parsed.pathname.replace(/^.*?\/api\/v4\//, "")
}

async function parseResponse(response: Response): Promise<GitlabResponse> {
  const headers = Object.fromEntries(response.headers.entries())
  if (response.status === 204) return { status: response.status, headers, body: null }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim()
  if (type === "application/json") {
    const text = await response.text()
    return { status: response.status, headers, body: text.trim() === "" ? {} : JSON.parse(text) }
  }
  if (type.startsWith("text/")) return { status: response.status, headers, body: await response.text() }
  return { status: response.status, headers, body: await response.blob() }
}

async function describeBody(response: Response): Promise<string> {
  const text = await response.text().catch(() => "")
  const type = response.headers.get("content-type") ?? ""
  if (type.includes("application/json")) {
    try {
      const parsed = JSON.parse(text) as { error?: unknown; message?: unknown } | null
      const content = parsed?.error ?? parsed?.message ?? ""
      const description = typeof content === "string" ? content : JSON.stringify(content)
      if (description) return cut(description)
    } catch {
      // not JSON after all: the raw text below
    }
  }
  return cut(text.trim() || response.statusText || `HTTP ${response.status}`)
}

function cut(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}

function decamelize(key: string): string {
  return key
    .replace(/([a-z\d])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z\d]+)/g, "$1_$2")
    .toLowerCase()
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value))
}
