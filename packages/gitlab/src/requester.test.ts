import { Gitlab } from "@gitbeaker/rest"
import { afterEach, describe, expect, test } from "vitest"
import { GitlabRequestError } from "./errors"
import { createRequester, encodeQuery, serverDelay } from "./requester"

// A tiny real HTTP server whose answers the test scripts: a stored-notes list, plus a queue of
// failures to serve before (or after) storing.
interface Scripted {
  url: string
  requests: { method: string; path: string; search: string; body: string; headers: Record<string, string> }[]
  notes: { id: number; body: string }[]
  /** Each entry handles one request, in order; when empty the default handler answers. */
  plan: Array<(request: Request, body: string) => Response | Promise<Response> | "store-then-502" | "hang">
  close(): void
}

const servers: Scripted[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

function startScripted(): Scripted {
  const state: Scripted = { url: "", requests: [], notes: [], plan: [], close: () => {} }
  const store = (body: string) => {
    const note = { id: state.notes.length + 1, body: (JSON.parse(body) as { body: string }).body }
    state.notes.push(note)
    return note
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
        search: url.search,
        body,
        headers: Object.fromEntries(request.headers.entries()),
      })
      const step = state.plan.shift()
      if (step) {
        const answer = await step(request, body)
        if (answer === "store-then-502") {
          store(body)
          return new Response("Bad Gateway", { status: 502, headers: { "content-type": "text/plain" } })
        }
        if (answer === "hang") {
          await new Promise((resolve) => setTimeout(resolve, 400))
          if (request.method === "POST") store(body)
          return Response.json({ late: true })
        }
        return answer
      }
      if (request.method === "POST" && url.pathname.endsWith("/notes"))
        return Response.json(store(body), { status: 201 })
      if (request.method === "GET" && url.pathname.endsWith("/notes")) return Response.json(state.notes)
      return Response.json({ ok: true, path: url.pathname, search: url.search })
    },
  })
  state.url = `http://127.0.0.1:${server.port}/api/v4`
  state.close = () => server.stop(true)
  servers.push(state)
  return state
}

function recorder() {
  const delays: number[] = []
  return { delays, sleep: async (ms: number) => void delays.push(ms) }
}

const notesPath = "projects/1/merge_requests/2/notes"

describe("retry timing", () => {
  test("honours Retry-After in seconds on a 429", async () => {
    const server = startScripted()
    server.plan.push(
      () => new Response("Retry later", { status: 429, headers: { "retry-after": "7", "content-type": "text/plain" } }),
    )
    const { delays, sleep } = recorder()
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep })
    const response = await requester.request({ method: "GET", path: "user" })
    expect(response.status).toBe(200)
    expect(delays).toEqual([7000])
    expect(server.requests).toHaveLength(2)
    expect(server.requests[0]!.headers["private-token"]).toBe("t")
  })

  test("honours Retry-After as an HTTP date, and caps a long wait", async () => {
    const server = startScripted()
    const now = Date.parse("2026-01-01T00:00:00Z")
    server.plan.push(
      () => new Response("", { status: 429, headers: { "retry-after": "Thu, 01 Jan 2026 00:00:12 GMT" } }),
    )
    server.plan.push(() => new Response("", { status: 429, headers: { "retry-after": "3600" } }))
    const { delays, sleep } = recorder()
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep, now: () => now, maxDelayMs: 60_000 })
    await requester.request({ method: "GET", path: "user" })
    expect(delays).toEqual([12_000, 60_000])
  })

  test("falls back to RateLimit-Reset, then to exponential backoff with jitter", async () => {
    const server = startScripted()
    const now = 1_767_225_600_000
    server.plan.push(() => new Response("", { status: 429, headers: { "ratelimit-reset": String(now / 1000 + 5) } }))
    server.plan.push(() => new Response("", { status: 503 }))
    server.plan.push(() => new Response("", { status: 504 }))
    const { delays, sleep } = recorder()
    const requester = createRequester({
      apiUrl: server.url,
      token: "t",
      sleep,
      now: () => now,
      random: () => 1,
      baseDelayMs: 1000,
    })
    await requester.request({ method: "GET", path: "user" })
    // attempt 2 and 3 back off 2 s and 4 s at most (jitter is in [step/2, step]).
    expect(delays).toEqual([5000, 2000, 4000])
    const low = recorder()
    server.plan.push(() => new Response("", { status: 502 }))
    await createRequester({
      apiUrl: server.url,
      token: "t",
      sleep: low.sleep,
      random: () => 0,
      baseDelayMs: 1000,
    }).request({ method: "PUT", path: "x" })
    expect(low.delays).toEqual([500])
  })

  test("gives up after maxAttempts with a retryable error carrying the last status", async () => {
    const server = startScripted()
    for (let index = 0; index < 3; index += 1) server.plan.push(() => new Response("down", { status: 503 }))
    const { sleep } = recorder()
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep, maxAttempts: 3 })
    const error = await requester.request({ method: "GET", path: "user" }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(GitlabRequestError)
    expect((error as GitlabRequestError).data).toMatchObject({ status: 503, attempts: 3 })
    expect((error as GitlabRequestError).retryable).toBe(true)
    expect(server.requests).toHaveLength(3)
  })

  test("does not retry a 400 and reports GitLab's message", async () => {
    const server = startScripted()
    server.plan.push(() =>
      Response.json({ message: '400 Bad request - Note {:line_code=>["can\'t be blank"]}' }, { status: 400 }),
    )
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep: recorder().sleep })
    const error = (await requester
      .request({ method: "POST", path: notesPath, json: { body: "x" } })
      .catch((caught: unknown) => caught)) as GitlabRequestError
    expect(error.data.status).toBe(400)
    expect(error.message).toContain("line_code")
    expect(error.retryable).toBe(false)
    expect(server.requests).toHaveLength(1)
  })
})

describe("creates are never duplicated", () => {
  const landedCheck = (requester: ReturnType<typeof createRequester>, marker: string) => async () => {
    const notes = (await requester.request({ method: "GET", path: notesPath })).body as { id: number; body: string }[]
    return notes.find((note) => note.body.includes(marker))
  }

  test("a 502 after GitLab stored the note: the landed check finds it and nothing is re-posted", async () => {
    const server = startScripted()
    server.plan.push(() => "store-then-502")
    const { sleep } = recorder()
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep })
    const response = await requester.request({
      method: "POST",
      path: notesPath,
      json: { body: "hello <!-- m:1 -->" },
      landed: landedCheck(requester, "m:1"),
    })
    expect(response.body).toEqual({ id: 1, body: "hello <!-- m:1 -->" })
    expect(server.notes).toHaveLength(1)
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(1)
  })

  test("a 502 before anything was stored: the landed check finds nothing and the POST is sent again", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("Bad Gateway", { status: 502 }))
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep: recorder().sleep })
    const response = await requester.request({
      method: "POST",
      path: notesPath,
      json: { body: "hello <!-- m:2 -->" },
      landed: landedCheck(requester, "m:2"),
    })
    expect(response.status).toBe(201)
    expect(server.notes).toHaveLength(1)
    expect(server.requests.map((request) => request.method)).toEqual(["POST", "GET", "POST"])
  })

  test("a timeout after the note was stored is checked the same way", async () => {
    const server = startScripted()
    server.plan.push(() => "hang")
    const requester = createRequester({
      apiUrl: server.url,
      token: "t",
      sleep: () => new Promise((resolve) => setTimeout(resolve, 500)),
      timeoutMs: 100,
    })
    const response = await requester.request({
      method: "POST",
      path: notesPath,
      json: { body: "slow <!-- m:3 -->" },
      landed: landedCheck(requester, "m:3"),
    })
    expect(response.body).toMatchObject({ body: "slow <!-- m:3 -->" })
    expect(server.notes).toHaveLength(1)
    expect(server.requests.filter((request) => request.method === "POST")).toHaveLength(1)
  })

  test("a 429 on a POST is retried without asking (GitLab refused it before storing)", async () => {
    const server = startScripted()
    server.plan.push(
      () => new Response("Retry later", { status: 429, headers: { "retry-after": "1", "content-type": "text/plain" } }),
    )
    const { delays, sleep } = recorder()
    let asked = 0
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep })
    await requester.request({
      method: "POST",
      path: notesPath,
      json: { body: "x" },
      landed: async () => void (asked += 1),
    })
    expect(asked).toBe(0)
    expect(delays).toEqual([1000])
    expect(server.notes).toHaveLength(1)
  })

  test("a POST without a landed check is not re-sent after a 503: the error says its outcome is unknown", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("unavailable", { status: 503 }))
    const requester = createRequester({ apiUrl: server.url, token: "t", sleep: recorder().sleep })
    const error = (await requester
      .request({ method: "POST", path: "projects/1/merge_requests/2/approve", json: {} })
      .catch((caught: unknown) => caught)) as GitlabRequestError
    expect(error.data).toMatchObject({ status: 503, ambiguous: true })
    expect(server.requests).toHaveLength(1)
  })
})

describe("as gitbeaker's requesterFn", () => {
  test("gitbeaker calls go through it: snake_case bodies, array queries, Link pagination, retries", async () => {
    const server = startScripted()
    server.plan.push(() => new Response("", { status: 429, headers: { "retry-after": "2" } }))
    server.plan.push((request) => {
      const next = new URL(request.url)
      next.searchParams.set("page", "2")
      return Response.json([{ id: 1 }], { headers: { link: `<${next}>; rel="next"` } })
    })
    server.plan.push(() => Response.json([{ id: 2 }]))
    const { delays, sleep } = recorder()
    const requester = createRequester({ apiUrl: server.url, token: "secret", sleep })
    const api = new Gitlab({
      host: server.url.replace(/\/api\/v4$/, ""),
      requesterFn: requester.requesterFn,
      queryTimeout: null,
    })
    const notes = await api.MergeRequestNotes.all(1, 2, { perPage: 100 })
    expect(notes).toEqual([{ id: 1 }, { id: 2 }])
    expect(delays).toEqual([2000])
    expect(server.requests[1]!.search).toBe("?per_page=100")
    expect(server.requests[2]!.search).toContain("page=2")

    await api.MergeRequests.edit("group/sub", 7, { reviewerIds: [3, 4] })
    const edit = server.requests.at(-1)!
    expect(edit.path).toBe("/api/v4/projects/group%2Fsub/merge_requests/7")
    expect(JSON.parse(edit.body)).toEqual({ reviewer_ids: [3, 4] })
    expect(edit.headers["private-token"]).toBe("secret")

    await api.MergeRequestDiscussions.resolve(1, 2, "abc", true)
    expect(server.requests.at(-1)).toMatchObject({
      method: "PUT",
      path: "/api/v4/projects/1/merge_requests/2/discussions/abc",
      search: "?resolved=true",
    })
  })

  test("a request error surfaces as our GitlabRequestError with the status", async () => {
    const server = startScripted()
    server.plan.push(() => Response.json({ message: "404 Not found" }, { status: 404 }))
    const requester = createRequester({ apiUrl: server.url, token: "t" })
    const api = new Gitlab({
      host: server.url.replace(/\/api\/v4$/, ""),
      requesterFn: requester.requesterFn,
      queryTimeout: null,
    })
    const error = (await api.MergeRequests.show(1, 2).catch((caught: unknown) => caught)) as GitlabRequestError
    expect(error).toBeInstanceOf(GitlabRequestError)
    expect(error.status).toBe(404)
  })
})

describe("helpers", () => {
  test("serverDelay reads seconds, dates and reset times", () => {
    const now = Date.parse("2026-01-01T00:00:00Z")
    expect(serverDelay(new Headers({ "retry-after": "1.5" }), now)).toBe(1500)
    expect(serverDelay(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(3000)
    expect(serverDelay(new Headers({ "ratelimit-reset": String(now / 1000 + 9) }), now)).toBe(9000)
    expect(serverDelay(new Headers({}), now)).toBeNull()
  })

  test("encodeQuery matches gitbeaker's qs format", () => {
    expect(encodeQuery({ perPage: 100, reviewerIds: [1, 2], position: { oldLine: 3 } })).toBe(
      "per_page=100&reviewer_ids%5B%5D=1&reviewer_ids%5B%5D=2&position%5Bold_line%5D=3",
    )
  })
})
