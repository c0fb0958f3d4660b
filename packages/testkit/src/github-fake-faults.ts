import { docs, githubError, type Reply, serverErrorText } from "./github-fake-http"
import type { FakeGithubActor, FakeGithubFailure, FakeGithubMatch } from "./github-fake-types"

// Rate limits and injected faults. The primary limit is counted per actor and resource ("core" for
// REST, "graphql") and reported on every API response in GitHub's `x-ratelimit-*` headers; a test
// can use it up. Injected failures (failNext, the secondary limit) are test tools answering with
// GitHub's bodies (docs/github.md, "Rate limits" and "Failures").

export type RateResource = "core" | "graphql"

interface Bucket {
  used: number
  reset: number
  /** Set by exhaustRateLimit: the status a request then gets. */
  exhaustedWith?: 403 | 429
}

type Rule =
  | { kind: "failure"; match: FakeGithubMatch; failure: FakeGithubFailure; remaining: number }
  | { kind: "secondary"; match: FakeGithubMatch; status: 403 | 429; retryAfter: number; remaining: number }

export type FakeFaults = ReturnType<typeof createFaults>

export const matches = (match: FakeGithubMatch, method: string, path: string): boolean =>
  (!match.method || match.method.toUpperCase() === method) &&
  (!match.path || (typeof match.path === "string" ? match.path === path : match.path.test(path)))

export function createFaults(actors: FakeGithubActor[]) {
  const buckets = new Map<string, Bucket>()
  const rules: Rule[] = []
  const hourFromNow = () => Math.floor(Date.now() / 1000) + 3600

  const bucket = (actor: FakeGithubActor | null, resource: RateResource): Bucket => {
    const key = `${actor?.user.login ?? "anonymous"}\0${resource}`
    let found = buckets.get(key)
    if (!found || found.reset * 1000 <= Date.now()) {
      found = { used: 0, reset: hourFromNow() }
      buckets.set(key, found)
    }
    return found
  }
  const limitOf = (actor: FakeGithubActor | null) => actor?.rateLimit ?? 60

  /** Counts one request; answers the primary-limit error when the bucket is used up. */
  const consume = (
    actor: FakeGithubActor | null,
    resource: RateResource,
    clientIp: string,
  ): { headers: Record<string, string>; limited: Reply | null } => {
    const current = bucket(actor, resource)
    const limit = limitOf(actor)
    let limited: Reply | null = null
    if (current.used >= limit) {
      const status = current.exhaustedWith ?? 403
      limited = primaryLimitReply(actor, resource, status, clientIp)
    } else {
      current.used += 1
    }
    return { headers: rateHeaders(limit, current.used, current.reset, resource), limited }
  }

  const exhaust = (login: string, resource: RateResource, status: 403 | 429) => {
    const actor = actors.find((candidate) => candidate.user.login === login)
    if (!actor) throw new Error(`github-fake: no actor ${login}`)
    const current = bucket(actor, resource)
    current.used = limitOf(actor)
    current.exhaustedWith = status
  }

  const reset = (login?: string) => {
    for (const key of [...buckets.keys()]) if (!login || key.startsWith(`${login}\0`)) buckets.delete(key)
  }

  const take = (method: string, path: string): Rule | null => {
    for (const rule of rules) {
      if (rule.remaining <= 0 || !matches(rule.match, method, path)) continue
      rule.remaining -= 1
      return rule
    }
    return null
  }

  return {
    consume,
    exhaust,
    reset,
    take,
    failNext(match: FakeGithubMatch, failure: FakeGithubFailure, times = 1) {
      rules.push({ kind: "failure", match, failure, remaining: times })
    },
    secondary(match: FakeGithubMatch, options: { status?: 403 | 429; retryAfter?: number; times?: number } = {}) {
      rules.push({
        kind: "secondary",
        match,
        status: options.status ?? 403,
        retryAfter: options.retryAfter ?? 60,
        remaining: options.times ?? 1,
      })
    },
  }
}

export function rateHeaders(
  limit: number,
  used: number,
  reset: number,
  resource: RateResource,
): Record<string, string> {
  return {
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(Math.max(0, limit - used)),
    "x-ratelimit-used": String(used),
    "x-ratelimit-reset": String(reset),
    "x-ratelimit-resource": resource,
  }
}

/** The primary-limit answer: REST 403/429 with GitHub's message; GraphQL HTTP 200 with a RATE_LIMITED error. */
function primaryLimitReply(
  actor: FakeGithubActor | null,
  resource: RateResource,
  status: 403 | 429,
  clientIp: string,
): Reply {
  const who = actor
    ? actor.user.type === "Bot"
      ? `installation ID ${actor.user.id}`
      : `user ID ${actor.user.id}`
    : null
  if (resource === "graphql") {
    return {
      status: 200,
      body: {
        errors: [{ type: "RATE_LIMITED", message: `API rate limit already exceeded for ${who ?? clientIp}.` }],
      },
    }
  }
  if (!who) {
    return githubError(
      status,
      `API rate limit exceeded for ${clientIp}. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)`,
      docs.anonymousRateLimit,
    )
  }
  return githubError(status, `API rate limit exceeded for ${who}.`, docs.rateLimit)
}

export function secondaryReply(status: 403 | 429, retryAfter: number, requestId: string): Reply {
  return {
    ...githubError(
      status,
      `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${requestId}.`,
      docs.secondaryRateLimit,
    ),
    headers: { "retry-after": String(retryAfter) },
  }
}

/** An injected failure's answer: GitHub's 502 text for 5xx without a body, else the given body. */
export function failureReply(failure: FakeGithubFailure): Reply {
  const headers = failure.headers ?? {}
  if (failure.body !== undefined) return { status: failure.status, body: failure.body, headers }
  if (failure.status >= 500)
    return { status: failure.status, text: serverErrorText, contentType: "application/json", headers }
  return {
    status: failure.status,
    body: { message: `Injected ${failure.status}`, status: String(failure.status) },
    headers,
  }
}
