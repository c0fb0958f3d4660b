import { graphql as octokitGraphql } from "@octokit/graphql"
import { Octokit } from "@octokit/rest"
import { type Logger, type RetryTiming, resolveRetryTiming, silentLogger } from "@opencode-reviewer/core"
import { GithubCreateLandedError, GithubRateLimitError, GithubRequestError } from "./errors"

// Our request layer for octokit. Octokit takes a `fetch` (`request: { fetch }`) and sends every call
// through it, REST and GraphQL; this module builds that fetch. Facts it relies on, by source:
// [octokit] @octokit/rest 22.0.1 is @octokit/core 7.0.8 plus request-log, rest-endpoint-methods and
//   paginate-rest only: no retry or throttling plugin, so octokit itself never repeats a request
//   (@octokit/plugin-retry, which would, retries every status but 400/401/403/404/410/422/451,
//   POSTs included). Its fetch-wrapper (@octokit/request 10.0.16) wraps an error thrown by `fetch`
//   (other than an AbortError) in a RequestError with status 500 and the original as `cause`.
// [docs] GitHub's "Rate limits for the REST API" and "Rate limits and query limits for the GraphQL
//   API" (github/docs content/rest/using-the-rest-api/rate-limits-for-the-rest-api.md,
//   content/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api.md):
//   - primary limit: 403 or 429 with `x-ratelimit-remaining: 0`; do not retry before
//     `x-ratelimit-reset` (UTC epoch seconds). GraphQL answers 200 with an error instead.
//   - secondary limit: 403 or 429 (GraphQL: 200 or 403) with a message saying so; wait
//     `retry-after` seconds when present, else until `x-ratelimit-reset` when remaining is 0,
//     else at least one minute, growing exponentially while it persists.
//   - GraphQL requests taking over 10 s are cut off with 502 or 504.
//   - rate limits are off by default on GitHub Enterprise Server.
// [throttling] octokit/plugin-throttling.js 11.0.3 src/index.ts, wrap-request.ts: detects a
//   secondary limit by /\bsecondary rate\b/i in the message, falls back to 60 s without
//   `retry-after`, waits until reset + 1 s on a primary limit, treats GraphQL errors of type
//   RATE_LIMITED as a primary limit, and repeats any method, writes included, after a limit
//   (the request was refused, not performed).
// [reports] probot/probot#921: a createComment answered 500 and was stored anyway, and a client
//   retry posted it four times; a 5xx after a create does not mean it was not created.

export type GithubFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** What the `landed` check is asked about: a create that failed in a way that may have stored it. */
export interface GithubLandedRequest {
  method: string
  url: string
  /** The URL's path. */
  path: string
  /** The body as sent (octokit sends JSON text), or null. */
  body: string | null
  /** The body parsed as JSON (a REST create's fields, or GraphQL's `{ query, variables }`), or undefined. */
  json: unknown
  /** What the attempt answered: 502, 503, 504, or null for a timeout or a dropped connection. */
  status: number | null
  attempt: number
}

/** Tuning and test seams of the request layer; every number has a default (docs/github.md). */
export interface GithubFetchOptions extends RetryTiming {
  /** The real fetch; default `globalThis.fetch`. */
  fetch?: GithubFetch
  /** The most one request may spend waiting, all its waits together; default 60 s. A longer rate-limit wait fails at once. */
  maxWaitMs?: number
  /** The wait after a secondary limit without `retry-after`; default 60 s ("at least one minute" [docs]), doubling while it persists. */
  secondaryLimitWaitMs?: number
  /**
   * For creates (POST, GraphQL mutations): called after a 502/503/504, a timeout or a dropped
   * connection, once the backoff wait is over (a request still in flight has had time to land). It
   * looks for what the request would have created (the provider searches for our hidden marker):
   * true ⇒ stored, not sent again (the fetch throws GithubCreateLandedError); false ⇒ not stored,
   * sent again; null (or a throw) ⇒ cannot tell, not sent again (GithubRequestError, ambiguous).
   * Without it, a create is never re-sent after such a failure.
   */
  landed?: (request: GithubLandedRequest) => Promise<boolean | null>
  /** One line per retry and wait: method, path, status, attempt, delay. Never headers or bodies. */
  log?: Logger
}

/** Statuses repeated with backoff: a proxy or GitHub gave up, the request may or may not have run. */
const retryStatuses = new Set([502, 503, 504])
/** Methods whose repetition cannot create a second object. PATCH included: GitHub's PATCH endpoints set fields to the values sent. */
const idempotentMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"])
/** Added to a primary limit's reset, so the repeat comes after it [throttling]. */
const resetMarginMs = 1_000

/**
 * Builds the fetch every octokit call of this package goes through: retries, rate limits, timeouts,
 * and creates that are never duplicated. It answers with GitHub's response whenever it does not
 * retry (octokit then throws its RequestError for a 4xx or 500), and throws our errors when it gives
 * up (GithubRequestError, GithubRateLimitError) or a create had landed (GithubCreateLandedError).
 */
export function createGithubFetch(options: GithubFetchOptions = {}): GithubFetch {
  const fetcher: GithubFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const { sleep, now, random, timeoutMs, maxAttempts, baseDelayMs } = resolveRetryTiming(options)
  const maxWaitMs = options.maxWaitMs ?? 60_000
  const secondaryLimitWaitMs = options.secondaryLimitWaitMs ?? 60_000
  const log = options.log ?? silentLogger

  return async function githubFetch(input, init) {
    const request = await normalize(input, init)
    const { method, path } = request
    const graphql = isGraphqlPath(path)
    const create = graphql ? graphqlOperation(request.bodyText) !== "query" : !idempotentMethods.has(method)
    let waited = 0
    let secondaryHits = 0
    let last: { status: number | null; description: string } = { status: null, description: "not sent" }

    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      const outcome = await send(request)
      if (outcome.kind === "aborted") throw outcome.error

      if (outcome.kind === "response") {
        const response = outcome.response
        const limit = await rateLimitOf(response, graphql, now(), secondaryHits, secondaryLimitWaitMs)
        if (limit) {
          await discard(response)
          if (limit.kind === "secondary") secondaryHits += 1
          last = { status: response.status, description: limit.description }
          const budgetMs = maxWaitMs - waited
          if (limit.waitMs > budgetMs) {
            throw new GithubRateLimitError({
              method,
              path,
              status: response.status,
              kind: limit.kind,
              resource: limit.resource,
              retryAt: new Date(limit.retryAtMs).toISOString(),
              waitMs: limit.waitMs,
              budgetMs,
              attempts: attempt,
            })
          }
          if (attempt === maxAttempts || !request.replayable) break
          // A rate-limited request was refused, not performed [docs, throttling]: any method may repeat it.
          log.warn(
            { method, path, status: response.status, attempt, delayMs: limit.waitMs, limit: limit.kind },
            "github rate limit: waiting",
          )
          await sleep(limit.waitMs)
          waited += limit.waitMs
          continue
        }
        if (!retryStatuses.has(response.status) || !request.replayable) return response
        last = { status: response.status, description: await describeBody(response) }
      } else {
        last = { status: null, description: outcome.description }
        if (!request.replayable) {
          throw new GithubRequestError(
            { method, path, ...last, attempts: request.sent, ambiguous: create },
            { retryable: !create },
          )
        }
      }

      // A 502/503/504, a timeout or a dropped connection: the request may have run. Repeat a read or
      // an idempotent write; repeat a create only once the landed check says it was not stored.
      if (create && !options.landed) {
        throw new GithubRequestError({ method, path, ...last, attempts: attempt, ambiguous: true }, { retryable: true })
      }
      const delayMs = Math.max(0, Math.min(backoff(attempt), maxWaitMs - waited))
      const lastChance = attempt === maxAttempts || delayMs === 0
      if (lastChance && !create) break
      if (delayMs > 0) {
        log.warn({ method, path, status: last.status, attempt, delayMs }, "github request retry")
        await sleep(delayMs)
        waited += delayMs
      }
      if (create && options.landed) {
        // Asked even on the last attempt: the error must say whether the create was stored.
        let verdict: boolean | null
        let cause: unknown
        try {
          verdict = await options.landed({
            method,
            url: request.url,
            path,
            body: request.bodyText,
            json: parseJson(request.bodyText),
            status: last.status,
            attempt,
          })
        } catch (error) {
          verdict = null
          cause = error
        }
        if (verdict === true) {
          log.info({ method, path, status: last.status, attempt }, "github create had landed; not sent again")
          throw new GithubCreateLandedError({ method, path, status: last.status, attempts: attempt })
        }
        if (verdict !== false) {
          throw new GithubRequestError(
            { method, path, ...last, attempts: attempt, ambiguous: true },
            { cause, retryable: true },
          )
        }
        if (lastChance) break
        log.info({ method, path, status: last.status, attempt }, "github create had not landed; sending it again")
      }
    }
    throw new GithubRequestError(
      { method, path, ...last, attempts: request.sent, ambiguous: false },
      { retryable: true },
    )
  }

  type Outcome =
    | { kind: "response"; response: Response }
    | { kind: "failed"; description: string }
    | { kind: "aborted"; error: unknown }

  async function send(request: NormalizedRequest): Promise<Outcome> {
    if (request.signal?.aborted) return { kind: "aborted", error: request.signal.reason }
    request.sent += 1
    const timer = new AbortController()
    const timeout = setTimeout(() => timer.abort(), timeoutMs)
    const signal = request.signal ? AbortSignal.any([request.signal, timer.signal]) : timer.signal
    try {
      const response = await fetcher(request.url, {
        ...request.init,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal,
      })
      return { kind: "response", response }
    } catch (error) {
      if (request.signal?.aborted) return { kind: "aborted", error }
      if (timer.signal.aborted) return { kind: "failed", description: `no answer within ${timeoutMs} ms` }
      return { kind: "failed", description: `connection failed: ${errorText(error)}` }
    } finally {
      // Only the wait for the response headers is bounded here: a large body may take longer to read.
      clearTimeout(timeout)
    }
  }

  function backoff(attempt: number): number {
    const step = baseDelayMs * 2 ** (attempt - 1)
    return Math.round(step / 2 + (random() * step) / 2)
  }
}

/** The clients of this package: octokit's REST client and GraphQL function, both on our fetch. */
export interface GithubClients {
  rest: Octokit
  graphql: typeof octokitGraphql
}

/**
 * Octokit's REST client and a GraphQL function wired to `fetch` (from `createGithubFetch`). An error
 * our fetch throws reaches the caller as itself, not inside octokit's RequestError; octokit's own
 * log goes to `log` as plain lines (its debug output, which holds request options, is dropped).
 */
export function createGithubClients(options: {
  apiUrl: string
  graphqlUrl: string
  token: string
  fetch: GithubFetch
  log?: Logger
}): GithubClients {
  const log = options.log ?? silentLogger
  const line = (level: "debug" | "warn") => (message: unknown) => {
    if (typeof message === "string") log[level]({}, message)
  }
  const rest = new Octokit({
    baseUrl: options.apiUrl.replace(/\/+$/, ""),
    auth: options.token,
    userAgent: "opencode-reviewer",
    // `retries: 0` is read only by @octokit/plugin-retry, which @octokit/rest 22 does not include [octokit]:
    // set anyway, so that adding the plugin later cannot start repeating our creates.
    request: { fetch: options.fetch, retries: 0 },
    log: { debug: () => {}, info: line("debug"), warn: line("warn"), error: line("debug") },
  })
  rest.hook.error("request", (error) => {
    throw unwrapRequestError(error)
  })
  const graphqlUrl = options.graphqlUrl.replace(/\/+$/, "")
  const graphql = octokitGraphql.defaults({
    // An absolute `url` is used as is; `baseUrl` is set to it too, so @octokit/graphql's rewrite of a
    // `/api/v3` base [octokit] never applies and GITHUB_GRAPHQL_URL is honoured exactly.
    baseUrl: graphqlUrl,
    url: graphqlUrl,
    headers: { authorization: `token ${options.token}`, "user-agent": "opencode-reviewer" },
    request: {
      fetch: options.fetch,
      retries: 0,
      hook: async (request: (options: object) => Promise<unknown>, requestOptions: object) => {
        try {
          return await request(requestOptions)
        } catch (error) {
          throw unwrapRequestError(error)
        }
      },
    },
  })
  return { rest, graphql }
}

/** Our request layer's own error when octokit wrapped it (status 500, `cause`), else the error itself. */
export function unwrapRequestError(error: unknown): unknown {
  const cause = (error as { cause?: unknown } | null)?.cause
  if (
    cause instanceof GithubRequestError ||
    cause instanceof GithubRateLimitError ||
    cause instanceof GithubCreateLandedError
  ) {
    return cause
  }
  return error
}

// --- rate limits ----------------------------------------------------------------------------

interface RateLimit {
  kind: "primary" | "secondary"
  waitMs: number
  retryAtMs: number
  resource: string | null
  description: string
}

/**
 * The wait a response asks for, or null when it is no rate limit. A 403 without the signs of a
 * limit (no `retry-after`, remaining not 0, no rate-limit message) is a permission error and is
 * passed on. Reads a clone of the body only for 403/429 and for GraphQL's 200.
 */
export async function rateLimitOf(
  response: Response,
  graphql: boolean,
  now: number,
  secondaryHits = 0,
  secondaryLimitWaitMs = 60_000,
): Promise<RateLimit | null> {
  const status = response.status
  const rejected = status === 403 || status === 429
  if (!rejected && !(graphql && status === 200)) return null
  const headers = response.headers
  const body = await response
    .clone()
    .text()
    .catch(() => "")
  const { message, secondaryText, graphqlLimited } = readLimitBody(body)
  const remainingZero = headers.get("x-ratelimit-remaining")?.trim() === "0"
  const retryAfterMs = retryAfter(headers, now)

  let kind: RateLimit["kind"] | null
  if (status === 200) kind = secondaryText ? "secondary" : graphqlLimited ? "primary" : null
  else if (secondaryText) kind = "secondary"
  else if (remainingZero) kind = "primary"
  else if (status === 429 || retryAfterMs !== null) kind = "secondary"
  else kind = null
  if (kind === null) return null

  const resetSeconds = headers.get("x-ratelimit-reset")?.trim()
  const resetMs = resetSeconds && /^\d+$/.test(resetSeconds) ? Number(resetSeconds) * 1000 : null
  let retryAtMs: number
  let waitMs: number
  if (retryAfterMs !== null) {
    waitMs = retryAfterMs
    retryAtMs = now + retryAfterMs
  } else if (resetMs !== null && (remainingZero || kind === "primary")) {
    waitMs = Math.max(0, resetMs - now) + resetMarginMs
    retryAtMs = Math.max(resetMs, now)
  } else {
    waitMs = secondaryLimitWaitMs * 2 ** secondaryHits
    retryAtMs = now + waitMs
  }
  return {
    kind,
    waitMs,
    retryAtMs,
    resource: headers.get("x-ratelimit-resource"),
    description: message || `HTTP ${status}`,
  }
}

function readLimitBody(body: string): { message: string; secondaryText: boolean; graphqlLimited: boolean } {
  const parsed = parseJson(body) as {
    message?: unknown
    documentation_url?: unknown
    errors?: unknown
  } | null
  const texts: string[] = []
  let graphqlLimited = false
  if (parsed && typeof parsed === "object") {
    if (typeof parsed.message === "string") texts.push(parsed.message)
    if (typeof parsed.documentation_url === "string") texts.push(parsed.documentation_url)
    if (Array.isArray(parsed.errors)) {
      for (const error of parsed.errors as { type?: unknown; message?: unknown }[]) {
        if (error?.type === "RATE_LIMITED") graphqlLimited = true
        if (typeof error?.message === "string") texts.push(error.message)
      }
    }
  } else if (body.trim()) texts.push(body.trim())
  const joined = texts.join(" ")
  // "You have exceeded a secondary rate limit…" and its documentation_url `#about-secondary-rate-limits`;
  // older answers said "abuse detection mechanism" [throttling matched /\babuse\b/ before 4.0].
  const secondaryText = /secondary[ -]rate[ -]limit|abuse detection|abuse-rate-limits/i.test(joined)
  return { message: cut(texts[0] ?? ""), secondaryText, graphqlLimited }
}

/** `retry-after` in ms: seconds (what GitHub sends [docs]) or an HTTP date; null when absent or unreadable. */
function retryAfter(headers: Headers, now: number): number | null {
  const value = headers.get("retry-after")?.trim()
  if (!value) return null
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

// --- requests -------------------------------------------------------------------------------

interface NormalizedRequest {
  url: string
  method: string
  path: string
  headers: Headers
  body: RequestInit["body"]
  bodyText: string | null
  /** The body can be sent again (not a one-shot stream). */
  replayable: boolean
  signal: AbortSignal | null
  init: RequestInit
  sent: number
}

async function normalize(input: string | URL | Request, init: RequestInit = {}): Promise<NormalizedRequest> {
  let url: string
  let method = init.method
  let headers = new Headers(init.headers)
  let body = init.body
  let signal = init.signal ?? null
  if (input instanceof Request) {
    url = input.url
    method ??= input.method
    if (init.headers === undefined) headers = new Headers(input.headers)
    if (body === undefined && input.body !== null) body = await input.arrayBuffer()
    signal ??= input.signal
  } else {
    url = String(input)
  }
  const upper = (method ?? "GET").toUpperCase()
  return {
    url,
    method: upper,
    path: new URL(url).pathname,
    headers,
    body: body ?? null,
    bodyText: typeof body === "string" ? body : null,
    replayable: !(body instanceof ReadableStream),
    signal,
    init,
    sent: 0,
  }
}

function isGraphqlPath(path: string): boolean {
  return /\/graphql\/?$/.test(path)
}

/**
 * `query` for a GraphQL document without a mutation or subscription (safe to repeat), `mutation`
 * otherwise, `unknown` when the body is not a GraphQL request we can read (treated as a create).
 */
export function graphqlOperation(body: string | null): "query" | "mutation" | "unknown" {
  const parsed = parseJson(body) as { query?: unknown } | undefined
  if (!parsed || typeof parsed.query !== "string") return "unknown"
  // Strings and comments cannot hold an operation keyword; what is left is names and punctuation.
  const document = parsed.query
    .replace(/"""[\s\S]*?"""/g, '""')
    .replace(/"(?:[^"\\\n]|\\.)*"/g, '""')
    .replace(/#[^\n\r]*/g, "")
  if (/(^|[^\w$])(mutation|subscription)(?![\w$])/.test(document)) return "mutation"
  return "query"
}

async function describeBody(response: Response): Promise<string> {
  const text = await response.text().catch(() => "")
  const parsed = parseJson(text) as { message?: unknown } | undefined
  if (parsed && typeof parsed === "object" && typeof parsed.message === "string" && parsed.message) {
    return cut(parsed.message)
  }
  return cut(text.trim() || response.statusText || `HTTP ${response.status}`)
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {})
}

function parseJson(text: string | null): unknown {
  if (text === null || text.trim() === "") return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
  return `${error.message}${cause}`
}

function cut(text: string): string {
  return text.length > 500 ? `${text.slice(0, 500)}…` : text
}
