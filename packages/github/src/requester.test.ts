import type { Logger } from "@opencode-reviewer/core"
import { afterEach, describe, expect, test } from "vitest"
import { GithubCreateLandedError, GithubRateLimitError, GithubRequestError } from "./errors"
import {
  createGithubClients,
  createGithubFetch,
  type GithubFetch,
  type GithubFetchOptions,
  type GithubLandedRequest,
  graphqlOperation,
} from "./requester"

const token = "ghs_TESTTOKEN0123456789abcdefSECRET"
const now = Date.parse("2026-05-04T12:00:00Z")
const epoch = (ms: number) => String(Math.floor(ms / 1000))

/** Octokit's RequestError (its class is in @octokit/request-error, not a dependency of ours): name and status. */
type RequestError = Error & { status: number }
const isRequestError = (error: unknown): error is RequestError =>
  error instanceof Error && error.name === "HttpError" && typeof (error as RequestError).status === "number"

// --- a tiny real GitHub-shaped server, for the octokit end-to-end cases ---------------------

interface Scripted {
  url: string
  requests: { method: string; path: string; body: string; headers: Record<string, string> }[]
  comments: { id: number; body: string }[]
  /** Each entry answers one request, in order; when empty the default handler answers. */
  plan: Array<(request: Request, body: string) => Response | "store-then-502">
  close(): void
}

const servers: Scripted[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

function startScripted(): Scripted {
  const state: Scripted = { url: "", requests: [], comments: [], plan: [], close: () => {} }
  const store = (body: string) => {
    const comment = { id: 1000 + state.comments.length, body: (JSON.parse(body) as { body: string }).body }
    state.comments.push(comment)
    return comment
  }
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const url = new URL(request.url)
      const body = await request.text()
      state.requests.push({
        method: request.method,
        path: url.pathname,
        body,
        headers: Object.fromEntries(request.headers.entries()),
      })
      const step = state.plan.shift()
      if (step) {
        const answer = step(request, body)
        if (answer !== "store-then-502") return answer
        store(body)
        return new Response("<html><body>502 Bad Gateway</body></html>", {
          status: 502,
          headers: { "content-type": "text/html" },
        })
      }
      if (url.pathname.endsWith("/comments") && request.method === "POST") {
        return Response.json(store(body), { status: 201 })
      }
      if (url.pathname.endsWith("/comments")) return Response.json(state.comments)
      if (url.pathname.endsWith("/graphql")) return Response.json({ data: { viewer: { login: "reviewer[bot]" } } })
      return Response.json({ number: 42, path: url.pathname })
    },
  })
  state.url = `http://127.0.0.1:${server.port}`
  state.close = () => server.stop(true)
  servers.push(state)
  return state
}

// --- test seams -----------------------------------------------------------------------------

interface Logged {
  level: string
  data: object
  message: string | undefined
}

function recorder() {
  const delays: number[] = []
  const logged: Logged[] = []
  const log: Logger = {
    debug: (data, message) => void logged.push({ level: "debug", data, message }),
    info: (data, message) => void logged.push({ level: "info", data, message }),
    warn: (data, message) => void logged.push({ level: "warn", data, message }),
    error: (data, message) => void logged.push({ level: "error", data, message }),
    child: () => log,
  }
  return { delays, logged, log, sleep: async (ms: number) => void delays.push(ms) }
}

/** An injected fake fetch answering from a script; records what it was sent. */
function fakeFetch(steps: Array<Response | Error | (() => Response | Promise<Response>)>) {
  const calls: { url: string; method: string; headers: Headers; body: string | null }[] = []
  const fetch: GithubFetch = async (input, init) => {
    calls.push({
      url: String(input),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      body: typeof init?.body === "string" ? init.body : null,
    })
    const step = steps.shift()
    if (step === undefined) return Response.json({ ok: true })
    if (step instanceof Error) throw step
    return typeof step === "function" ? await step() : step
  }
  return { fetch, calls }
}

function layer(fetch: GithubFetch, extra: Partial<GithubFetchOptions> = {}) {
  const seams = recorder()
  const githubFetch = createGithubFetch({
    fetch,
    sleep: seams.sleep,
    now: () => now,
    random: () => 1,
    log: seams.log,
    ...extra,
  })
  return { ...seams, githubFetch }
}

const api = "https://api.github.com"
const commentsUrl = `${api}/repos/octo-org/billing-service/issues/42/comments`
const postComment = (githubFetch: GithubFetch, body = "hello <!-- opencode-reviewer:m1 -->") =>
  githubFetch(commentsUrl, {
    method: "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ body }),
  })
const get = (githubFetch: GithubFetch, url = `${api}/repos/octo-org/billing-service/pulls/42`) =>
  githubFetch(url, { method: "GET", headers: { authorization: `token ${token}` } })

const secondary403 = (headers: Record<string, string> = {}) =>
  Response.json(
    {
      message:
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:1111:2222.",
      documentation_url:
        "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    },
    { status: 403, headers: { "x-ratelimit-remaining": "4321", ...headers } },
  )
const primary = (status: number, resetMs: number) =>
  Response.json(
    {
      message: "API rate limit exceeded for installation ID 123.",
      documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
    },
    {
      status,
      headers: {
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-used": "5000",
        "x-ratelimit-reset": epoch(resetMs),
        "x-ratelimit-resource": "core",
      },
    },
  )

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection")
    },
    (error: unknown) => error,
  )
}

// --- through octokit, against a real server -------------------------------------------------

describe("through octokit against a local server", () => {
  function clients(server: Scripted, extra: Partial<GithubFetchOptions> = {}) {
    const seams = recorder()
    const fetch = createGithubFetch({ sleep: seams.sleep, random: () => 1, log: seams.log, ...extra })
    const github = createGithubClients({
      apiUrl: `${server.url}/api/v3`,
      graphqlUrl: `${server.url}/api/graphql`,
      token,
      fetch,
      log: seams.log,
    })
    return { ...seams, ...github }
  }
  const repo = { owner: "octo-org", repo: "billing-service" }

  test("a GET answered 502 then 200 is retried once, with the token", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("Bad Gateway", { status: 502 }))
    const { rest, delays } = clients(server)
    const { data } = await rest.pulls.get({ ...repo, pull_number: 42 })
    expect(data).toMatchObject({ number: 42 })
    expect(delays).toEqual([1000])
    expect(server.requests.map((request) => request.path)).toEqual([
      "/api/v3/repos/octo-org/billing-service/pulls/42",
      "/api/v3/repos/octo-org/billing-service/pulls/42",
    ])
    expect(server.requests[0]!.headers.authorization).toBe(`token ${token}`)
  })

  test("a comment stored behind a 502: the landed check finds it, nothing is posted again", async () => {
    const server = startScripted()
    server.plan.push(() => "store-then-502")
    const asked: GithubLandedRequest[] = []
    const { rest } = clients(server, {
      landed: async (request) => {
        asked.push(request)
        const marker = /<!-- opencode-reviewer:\w+ -->/.exec((request.json as { body: string }).body)![0]
        return server.comments.some((comment) => comment.body.includes(marker))
      },
    })
    const error = await rejection(
      rest.issues.createComment({ ...repo, issue_number: 42, body: "Summary <!-- opencode-reviewer:s1 -->" }),
    )
    // Our error, not octokit's RequestError wrapping it.
    expect(error).toBeInstanceOf(GithubCreateLandedError)
    expect(server.comments).toHaveLength(1)
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(1)
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({
      method: "POST",
      path: "/api/v3/repos/octo-org/billing-service/issues/42/comments",
      status: 502,
      attempt: 1,
    })
  })

  test("a 502 before anything was stored: landed says no, the comment is posted once more", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("Bad Gateway", { status: 502 }))
    const { rest } = clients(server, { landed: async () => false })
    const { status, data } = await rest.issues.createComment({ ...repo, issue_number: 42, body: "x <!-- m:2 -->" })
    expect(status).toBe(201)
    expect(data).toMatchObject({ body: "x <!-- m:2 -->" })
    expect(server.comments).toHaveLength(1)
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(2)
  })

  test("404 and 422 reach the caller as octokit's RequestError, sent once; octokit never retries a 500 either", async () => {
    const server = startScripted()
    server.plan.push(() => Response.json({ message: "Not Found" }, { status: 404 }))
    server.plan.push(() =>
      Response.json(
        { message: "Validation Failed", errors: [{ resource: "PullRequestReviewComment", code: "invalid" }] },
        { status: 422 },
      ),
    )
    server.plan.push(() => Response.json({ message: "Server Error" }, { status: 500 }))
    const { rest, delays } = clients(server, { landed: async () => false })
    const notFound = await rejection(rest.pulls.get({ ...repo, pull_number: 9 }))
    expect(isRequestError(notFound)).toBe(true)
    expect((notFound as RequestError).status).toBe(404)
    const invalid = await rejection(
      rest.pulls.createReviewComment({ ...repo, pull_number: 42, body: "x", commit_id: "abc", path: "a.ts", line: 1 }),
    )
    expect((invalid as RequestError).status).toBe(422)
    const failed = await rejection(rest.pulls.get({ ...repo, pull_number: 42 }))
    expect((failed as RequestError).status).toBe(500)
    expect(server.requests).toHaveLength(3)
    expect(delays).toEqual([])
  })

  test("GraphQL goes to graphqlUrl exactly; a query answered 502 is retried without a landed check", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("", { status: 502 }))
    let asked = 0
    const { graphql } = clients(server, {
      landed: async () => {
        asked += 1
        return null
      },
    })
    const data = await graphql<{ viewer: { login: string } }>("query Viewer { viewer { login } }")
    expect(data.viewer.login).toBe("reviewer[bot]")
    expect(asked).toBe(0)
    expect(server.requests.map((request) => request.path)).toEqual(["/api/graphql", "/api/graphql"])
    expect(server.requests[1]!.headers.authorization).toBe(`token ${token}`)
  })

  test("@octokit/rest 22 brings no retry or throttling plugin: only request-log, endpoint methods, paginate", () => {
    const { rest } = clients(startScripted())
    const plugins = (rest.constructor as unknown as { plugins: { name: string }[] }).plugins.map(
      (plugin) => plugin.name,
    )
    expect(plugins).toEqual(["requestLog", "legacyRestEndpointMethods", "paginateRest"])
  })

  test("a rate limit beyond the cap surfaces as GithubRateLimitError through octokit", async () => {
    const server = startScripted()
    server.plan.push(() => primary(403, Date.now() + 3_600_000))
    const { rest, delays } = clients(server)
    const error = await rejection(rest.pulls.get({ ...repo, pull_number: 42 }))
    expect(error).toBeInstanceOf(GithubRateLimitError)
    expect(delays).toEqual([])
  })
})

// --- the policy, with an injected fetch ----------------------------------------------------

describe("retries", () => {
  test("502, 503, 504 and network errors back off 1 s doubling; after 5 attempts the error names the last status", async () => {
    const { fetch, calls } = fakeFetch([
      new Response("", { status: 502 }),
      new TypeError("fetch failed", { cause: new Error("ECONNRESET") }),
      new Response("", { status: 504 }),
      Response.json({ message: "Service Unavailable" }, { status: 503 }),
      Response.json({ message: "Service Unavailable" }, { status: 503 }),
    ])
    const { githubFetch, delays } = layer(fetch)
    const error = (await rejection(get(githubFetch))) as GithubRequestError
    expect(error).toBeInstanceOf(GithubRequestError)
    expect(error.data).toEqual({
      method: "GET",
      path: "/repos/octo-org/billing-service/pulls/42",
      status: 503,
      description: "Service Unavailable",
      attempts: 5,
      ambiguous: false,
    })
    expect(error.retryable).toBe(true)
    expect(calls).toHaveLength(5)
    // random() = 1: the top of each [step/2, step] jitter window.
    expect(delays).toEqual([1000, 2000, 4000, 8000])
  })

  test("jitter lies in [step/2, step]", async () => {
    const { fetch } = fakeFetch([new Response("", { status: 502 }), new Response("", { status: 502 })])
    const { githubFetch, delays } = layer(fetch, { random: () => 0 })
    expect((await get(githubFetch)).status).toBe(200)
    expect(delays).toEqual([500, 1000])
  })

  test("PUT, PATCH and DELETE are repeated like reads", async () => {
    for (const method of ["PUT", "PATCH", "DELETE"]) {
      const { fetch, calls } = fakeFetch([new Response("", { status: 503 })])
      const { githubFetch } = layer(fetch)
      const response = await githubFetch(`${api}/repos/o/r/pulls/comments/5`, { method, body: '{"body":"x"}' })
      expect(response.status).toBe(200)
      expect(calls.map((call) => call.body)).toEqual(['{"body":"x"}', '{"body":"x"}'])
    }
  })

  test("404, 422, a permission 403 and 500 are answered as is, never retried", async () => {
    for (const answer of [
      Response.json({ message: "Not Found" }, { status: 404 }),
      Response.json({ message: "Validation Failed" }, { status: 422 }),
      Response.json(
        { message: "Resource not accessible by integration" },
        { status: 403, headers: { "x-ratelimit-remaining": "4999" } },
      ),
      Response.json({ message: "Server Error" }, { status: 500 }),
    ]) {
      const { fetch, calls } = fakeFetch([answer])
      const { githubFetch, delays } = layer(fetch)
      const response = await get(githubFetch)
      expect(response.status).toBe(answer.status)
      expect(((await response.json()) as { message: string }).message.length).toBeGreaterThan(0)
      expect(calls).toHaveLength(1)
      expect(delays).toEqual([])
    }
  })

  test("a timeout is retried like a dropped connection", async () => {
    let first = true
    const fetch: GithubFetch = (_input, init) => {
      if (!first) return Promise.resolve(Response.json({ ok: true }))
      first = false
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
      })
    }
    const { githubFetch, logged } = layer(fetch, { timeoutMs: 20 })
    expect((await get(githubFetch)).status).toBe(200)
    expect(logged.filter((entry) => entry.message === "github request retry")).toHaveLength(1)
  })

  test("the caller's abort is passed on at once, not retried", async () => {
    const controller = new AbortController()
    let sent = 0
    let started: () => void = () => {}
    const inFlight = new Promise<void>((resolve) => (started = resolve))
    const fetch: GithubFetch = (_input, init) => {
      sent += 1
      started()
      return new Promise((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))
      })
    }
    const { githubFetch, delays } = layer(fetch)
    const pending = githubFetch(`${api}/user`, { signal: controller.signal })
    await inFlight
    controller.abort()
    expect(((await rejection(pending)) as Error).name).toBe("AbortError")
    expect(sent).toBe(1)
    // Aborted before it was sent: never sent.
    const early = await rejection(githubFetch(`${api}/user`, { signal: AbortSignal.abort() }))
    expect((early as Error).name).toBe("AbortError")
    expect(sent).toBe(1)
    expect(delays).toEqual([])
  })

  test("no request sleeps more than maxWaitMs in all: the backoff is clipped, then it gives up", async () => {
    const { fetch, calls } = fakeFetch(Array.from({ length: 5 }, () => new Response("", { status: 503 })))
    const { githubFetch, delays } = layer(fetch, { maxWaitMs: 5_000 })
    const error = (await rejection(get(githubFetch))) as GithubRequestError
    expect(delays).toEqual([1000, 2000, 2000])
    expect(error.data.attempts).toBe(4)
    expect(calls).toHaveLength(4)
  })
})

describe("creates are never sent blindly twice", () => {
  test("landed = true: not re-sent; GithubCreateLandedError", async () => {
    const { fetch, calls } = fakeFetch([new Response("", { status: 502 })])
    const asked: GithubLandedRequest[] = []
    const { githubFetch, delays } = layer(fetch, { landed: async (request) => (asked.push(request), true) })
    const error = (await rejection(postComment(githubFetch))) as GithubCreateLandedError
    expect(error).toBeInstanceOf(GithubCreateLandedError)
    expect(error.data).toEqual({
      method: "POST",
      path: "/repos/octo-org/billing-service/issues/42/comments",
      status: 502,
      attempts: 1,
    })
    expect(calls).toHaveLength(1)
    // The check runs after the wait, so a create still in flight has had time to land.
    expect(delays).toEqual([1000])
    expect(asked[0]!.json).toEqual({ body: "hello <!-- opencode-reviewer:m1 -->" })
  })

  test("landed = false: re-sent once, the second answer is the caller's", async () => {
    const { fetch, calls } = fakeFetch([new Response("", { status: 503 }), Response.json({ id: 7 }, { status: 201 })])
    const { githubFetch } = layer(fetch, { landed: async () => false })
    const response = await postComment(githubFetch)
    expect(response.status).toBe(201)
    expect(calls.map((call) => call.method)).toEqual(["POST", "POST"])
    expect(calls[1]!.body).toBe(calls[0]!.body)
  })

  test("a dropped connection is checked the same way", async () => {
    const { fetch, calls } = fakeFetch([new TypeError("fetch failed"), Response.json({ id: 8 }, { status: 201 })])
    let asked = 0
    const { githubFetch } = layer(fetch, {
      landed: async () => {
        asked += 1
        return false
      },
    })
    expect((await postComment(githubFetch)).status).toBe(201)
    expect(asked).toBe(1)
    expect(calls).toHaveLength(2)
  })

  test("landed = null, a throwing check, or no check at all: not re-sent, the error says the outcome is unknown", async () => {
    for (const landed of [async () => null, async () => Promise.reject(new Error("list failed")), undefined]) {
      const { fetch, calls } = fakeFetch([new Response("", { status: 504 })])
      const { githubFetch } = layer(fetch, landed ? { landed } : {})
      const error = (await rejection(postComment(githubFetch))) as GithubRequestError
      expect(error).toBeInstanceOf(GithubRequestError)
      expect(error.data).toMatchObject({ method: "POST", status: 504, ambiguous: true })
      expect(error.message).toContain("it may have been stored, so it was not sent again")
      expect(calls).toHaveLength(1)
    }
  })

  test("a secondary limit on a POST is waited out and re-sent without asking (GitHub refused it)", async () => {
    const { fetch, calls } = fakeFetch([
      secondary403({ "retry-after": "7" }),
      Response.json({ id: 9 }, { status: 201 }),
    ])
    let asked = 0
    const { githubFetch, delays } = layer(fetch, { landed: async () => ((asked += 1), null) })
    expect((await postComment(githubFetch)).status).toBe(201)
    expect(delays).toEqual([7000])
    expect(asked).toBe(0)
    expect(calls).toHaveLength(2)
  })

  test("GraphQL: a mutation is a create, a query is a read", async () => {
    const mutation = JSON.stringify({
      query: "mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id } } }",
      variables: { id: "PRRT_1" },
    })
    const { fetch, calls } = fakeFetch([new Response("", { status: 502 })])
    let asked: GithubLandedRequest | undefined
    const { githubFetch } = layer(fetch, { landed: async (request) => ((asked = request), false) })
    await githubFetch(`${api}/graphql`, { method: "POST", body: mutation })
    expect(asked?.json).toMatchObject({ variables: { id: "PRRT_1" } })
    expect(calls).toHaveLength(2)

    const query = JSON.stringify({ query: "query { viewer { login } }" })
    const noCheck = fakeFetch([new Response("", { status: 502 })])
    const read = layer(noCheck.fetch)
    expect((await read.githubFetch(`${api}/graphql`, { method: "POST", body: query })).status).toBe(200)
    expect(noCheck.calls).toHaveLength(2)
  })

  test("graphqlOperation ignores keywords inside strings and comments", () => {
    const body = (query: string) => JSON.stringify({ query })
    expect(graphqlOperation(body("{ viewer { login } }"))).toBe("query")
    expect(graphqlOperation(body('query { search(query: "mutation") { issueCount } } # mutation'))).toBe("query")
    expect(graphqlOperation(body("# a comment\nmutation AddComment { addComment { clientMutationId } }"))).toBe(
      "mutation",
    )
    expect(graphqlOperation(body("fragment F on User { login }\nmutation M { x }"))).toBe("mutation")
    expect(graphqlOperation("not json")).toBe("unknown")
    expect(graphqlOperation(null)).toBe("unknown")
  })
})

describe("rate limits", () => {
  test("secondary 403 with retry-after: waited, then the request succeeds", async () => {
    const { fetch, calls } = fakeFetch([secondary403({ "retry-after": "30" })])
    const { githubFetch, delays, logged } = layer(fetch)
    expect((await get(githubFetch)).status).toBe(200)
    expect(delays).toEqual([30_000])
    expect(calls).toHaveLength(2)
    expect(logged).toContainEqual({
      level: "warn",
      message: "github rate limit: waiting",
      data: {
        method: "GET",
        path: "/repos/octo-org/billing-service/pulls/42",
        status: 403,
        attempt: 1,
        delayMs: 30_000,
        limit: "secondary",
      },
    })
  })

  test("secondary limit without retry-after: at least a minute, doubling; past the cap it fails", async () => {
    const { fetch, calls } = fakeFetch([secondary403(), secondary403()])
    const { githubFetch, delays } = layer(fetch)
    const error = (await rejection(get(githubFetch))) as GithubRateLimitError
    expect(delays).toEqual([60_000])
    expect(error).toBeInstanceOf(GithubRateLimitError)
    expect(error.data).toMatchObject({ kind: "secondary", waitMs: 120_000, budgetMs: 0, attempts: 2 })
    expect(calls).toHaveLength(2)
  })

  test("a 429 without headers counts as a secondary limit", async () => {
    const { fetch } = fakeFetch([new Response("", { status: 429 })])
    const { githubFetch, delays } = layer(fetch, { secondaryLimitWaitMs: 5_000 })
    expect((await get(githubFetch)).status).toBe(200)
    expect(delays).toEqual([5_000])
  })

  test("primary limit, reset already past: retried after the 1 s margin", async () => {
    const { fetch, calls } = fakeFetch([primary(403, now - 10_000)])
    const { githubFetch, delays } = layer(fetch)
    expect((await get(githubFetch)).status).toBe(200)
    expect(delays).toEqual([1_000])
    expect(calls).toHaveLength(2)
  })

  test("primary limit, reset within the cap: waits until reset + 1 s (429 too)", async () => {
    const { fetch } = fakeFetch([primary(429, now + 30_000)])
    const { githubFetch, delays } = layer(fetch)
    expect((await get(githubFetch)).status).toBe(200)
    expect(delays).toEqual([31_000])
  })

  test("primary limit, reset beyond the cap: fails at once, naming when the limit resets", async () => {
    const { fetch, calls } = fakeFetch([primary(403, now + 47 * 60_000)])
    const { githubFetch, delays } = layer(fetch)
    const error = (await rejection(get(githubFetch))) as GithubRateLimitError
    expect(error).toBeInstanceOf(GithubRateLimitError)
    expect(error.message).toBe(
      "GitHub primary rate limit (HTTP 403, resource core) on GET /repos/octo-org/billing-service/pulls/42: " +
        "it may be retried at 2026-05-04T12:47:00.000Z (in 2821 s), longer than the 60 s this request may still wait; " +
        "run the review again after that time, or use a token with a higher limit (a GitHub App installation token)",
    )
    expect(error.data).toMatchObject({ kind: "primary", resource: "core", retryAt: "2026-05-04T12:47:00.000Z" })
    expect(error.retryable).toBe(true)
    expect(delays).toEqual([])
    expect(calls).toHaveLength(1)
  })

  test("a GraphQL 200 with a RATE_LIMITED error is a primary limit", async () => {
    const limited = Response.json(
      { errors: [{ type: "RATE_LIMITED", message: "API rate limit exceeded for user ID 1." }] },
      {
        headers: {
          "x-ratelimit-remaining": "0",
          "x-ratelimit-reset": epoch(now + 5_000),
          "x-ratelimit-resource": "graphql",
        },
      },
    )
    const { fetch, calls } = fakeFetch([limited, Response.json({ data: { viewer: { login: "x" } } })])
    const { githubFetch, delays } = layer(fetch)
    const response = await githubFetch(`${api}/graphql`, {
      method: "POST",
      body: JSON.stringify({ query: "{ viewer { login } }" }),
    })
    expect(await response.json()).toEqual({ data: { viewer: { login: "x" } } })
    expect(delays).toEqual([6_000])
    expect(calls).toHaveLength(2)
  })

  test("a GraphQL 200 with ordinary errors is passed on untouched", async () => {
    const answer = { data: null, errors: [{ type: "NOT_FOUND", message: "Could not resolve to a PullRequest" }] }
    const { fetch, calls } = fakeFetch([Response.json(answer)])
    const { githubFetch } = layer(fetch)
    const response = await githubFetch(`${api}/graphql`, { method: "POST", body: JSON.stringify({ query: "{ a }" }) })
    expect(await response.json()).toEqual(answer)
    expect(calls).toHaveLength(1)
  })
})

describe("the log", () => {
  test("never holds the Authorization header, the token or a body", async () => {
    const { fetch } = fakeFetch([
      new Response("", { status: 502 }),
      secondary403({ "retry-after": "1" }),
      new TypeError("fetch failed"),
      Response.json({ id: 1 }, { status: 201 }),
    ])
    const { githubFetch, logged } = layer(fetch, { landed: async () => false })
    expect((await postComment(githubFetch, "secret body <!-- opencode-reviewer:m9 -->")).status).toBe(201)
    expect(logged.length).toBeGreaterThanOrEqual(4)
    const text = JSON.stringify(logged).toLowerCase()
    expect(text).not.toContain(token.toLowerCase())
    expect(text).not.toContain("authorization")
    expect(text).not.toContain("secret body")
    expect(text).not.toContain("opencode-reviewer:m9")
  })

  test("octokit's own log lines go to our logger without request options", async () => {
    const server = startScripted()
    const seams = recorder()
    const { rest } = createGithubClients({
      apiUrl: `${server.url}/api/v3`,
      graphqlUrl: `${server.url}/api/graphql`,
      token,
      fetch: createGithubFetch({ sleep: seams.sleep }),
      log: seams.log,
    })
    await rest.issues.createComment({ owner: "o", repo: "r", issue_number: 1, body: "secret body" })
    expect(seams.logged.map((entry) => entry.message)).toEqual([
      expect.stringMatching(/^POST \/repos\/o\/r\/issues\/1\/comments - 201 with id .* in \d+ms$/),
    ])
    expect(JSON.stringify(seams.logged)).not.toContain(token)
    expect(JSON.stringify(seams.logged)).not.toContain("secret body")
  })
})
