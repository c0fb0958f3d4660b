import { type Reply, reason } from "./gitlab-fake-http"
import type { FakeFailure, GitlabFake } from "./gitlab-fake-types"

// Injected faults, a test tool rather than GitLab behaviour: failNext's rules (a status answered
// instead of, or after, processing the request) and holdTogether's barrier.

interface HoldRule {
  method?: string
  path?: RegExp
  remaining: number
  waiting: (() => void)[]
  arrived: () => void
}

interface FailureRule {
  method?: string
  path?: RegExp
  failure: FakeFailure
  remaining: number
}

export type FakeFaults = ReturnType<typeof createFaults>

export function createFaults() {
  const failures: FailureRule[] = []
  const holds: HoldRule[] = []
  const hold = async (method: string, path: string) => {
    const rule = holds.find(
      (candidate) =>
        candidate.remaining > 0 &&
        (!candidate.method || candidate.method === method) &&
        (!candidate.path || candidate.path.test(path)),
    )
    if (!rule) return
    rule.remaining -= 1
    const released = new Promise<void>((resolve) => rule.waiting.push(resolve))
    if (rule.remaining === 0) {
      rule.arrived()
      for (const release of rule.waiting.splice(0)) release()
    }
    await released
  }

  const takeFailure = (method: string, path: string): FakeFailure | null => {
    for (const rule of failures) {
      if (rule.remaining <= 0) continue
      if (rule.method && rule.method.toUpperCase() !== method) continue
      if (rule.path && !rule.path.test(path)) continue
      rule.remaining -= 1
      return rule.failure
    }
    return null
  }

  const failNext: GitlabFake["failNext"] = (match, failure, times = 1) => {
    failures.push({ method: match.method, path: match.path, failure, remaining: times })
  }

  const holdTogether: GitlabFake["holdTogether"] = (match, count) => {
    let arrived = () => {}
    const promise = new Promise<void>((resolve) => (arrived = resolve))
    holds.push({ method: match.method, path: match.path, remaining: count, waiting: [], arrived })
    return { arrived: promise }
  }

  return { hold, takeFailure, failNext, holdTogether }
}

export const injectedReply = (failure: FakeFailure): Reply => {
  if (failure.status === 429 && !("body" in failure) && !("afterStore" in failure)) {
    const retryAfter = "retryAfter" in failure && failure.retryAfter !== undefined ? failure.retryAfter : 60
    if ("rateLimitHeaders" in failure && failure.rateLimitHeaders === false) {
      // Gitlab::ApplicationRateLimiter (e.g. notes_create): JSON, no RateLimit-* headers.
      const headers: Record<string, string> =
        "retryAfter" in failure && failure.retryAfter !== undefined ? { "Retry-After": String(retryAfter) } : {}
      return {
        status: 429,
        body: { message: { error: "This endpoint has been requested too many times. Try again later." } },
        headers,
      }
    }
    const reset = Math.floor(Date.now() / 1000) + retryAfter
    return {
      status: 429,
      text: "Retry later\n",
      contentType: "text/plain",
      headers: {
        "Retry-After": String(retryAfter),
        "RateLimit-Name": "throttle_authenticated_api",
        "RateLimit-Limit": "2000",
        "RateLimit-Observed": "2001",
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": String(reset),
        "RateLimit-ResetTime": new Date(reset * 1000).toUTCString(),
      },
    }
  }
  if (failure.status === 502 && !("body" in failure)) return badGateway()
  const body =
    "body" in failure && failure.body !== undefined
      ? failure.body
      : { message: `${failure.status} ${reason(failure.status)}` }
  return { status: failure.status, body }
}

export const badGateway = (): Reply => ({
  status: 502,
  text: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
  contentType: "text/html",
})
