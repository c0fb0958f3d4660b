import { afterEach, describe, expect, test } from "vitest"
import { fetchText, redactUrl } from "./fetch-text"

// Real HTTP servers on 127.0.0.1: every way a document fetch can go wrong, answered for real.

const cleanups: (() => Promise<void> | void)[] = []
const releases: (() => void)[] = []
afterEach(async () => {
  // Held requests are released first, or stopping their server would wait for them.
  for (const release of releases.splice(0)) release()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Handler = (request: Request) => Response | Promise<Response>

function serve(routes: Record<string, Handler>) {
  // What each request asked for, read while it is being handled.
  const requests: { path: string; accept: string | null }[] = []
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      requests.push({ path, accept: request.headers.get("accept") })
      const route = routes[path]
      return route ? route(request) : new Response("not found", { status: 404, statusText: "Not Found" })
    },
  })
  cleanups.push(() => server.stop(true))
  return { url: `http://127.0.0.1:${server.port}`, requests }
}

// A request the server holds until the test ends: `route` answers only then, `until` resolves then,
// `arrived` resolves once a request reached `route`.
function held() {
  let release = () => {}
  const until = new Promise<void>((resolve) => (release = resolve))
  let arrive = () => {}
  const arrived = new Promise<void>((resolve) => (arrive = resolve))
  releases.push(() => release())
  const route = async () => {
    arrive()
    await until
    return new Response("late")
  }
  return { until, arrived, route }
}

const encode = (text: string) => new TextEncoder().encode(text)

describe("fetchText", () => {
  test("returns the body, its content type and the final URL after redirects, asking for the given types", async () => {
    const server = serve({
      "/old.md": () => Response.redirect("/doc.md", 302),
      "/doc.md": () =>
        new Response("# Doc — ünïcode\n", { headers: { "content-type": "text/markdown; charset=utf-8" } }),
    })
    const result = await fetchText(`${server.url}/old.md`, { accept: "text/markdown" })
    expect(result).toEqual({
      ok: true,
      text: "# Doc — ünïcode\n",
      contentType: "text/markdown; charset=utf-8",
      url: `${server.url}/doc.md`,
    })
    expect(server.requests).toEqual([
      { path: "/old.md", accept: "text/markdown" },
      { path: "/doc.md", accept: "text/markdown" },
    ])
  })

  test("a non-2xx status is a failure with the status, and the URL shown without query or credentials", async () => {
    const server = serve({ "/down.md": () => new Response("down", { status: 503, statusText: "Service Unavailable" }) })
    const withSecrets = server.url.replace("http://", "http://user:hunter2@") + "/down.md?private_token=s3cret#frag"
    const result = await fetchText(withSecrets)
    expect(result).toEqual({
      ok: false,
      reason: `${server.url}/down.md: HTTP 503 Service Unavailable`,
      detail: "HTTP 503 Service Unavailable",
      problem: { kind: "status", status: 503, statusText: "Service Unavailable" },
    })
    expect(JSON.stringify(result)).not.toMatch(/s3cret|hunter2|user/)
  })

  test("a server that never answers is given up on at the budget", async () => {
    const request = held()
    const server = serve({ "/hang.md": request.route })
    const started = performance.now()
    const result = await fetchText(`${server.url}/hang.md?token=s3cret`, { timeoutMs: 200 })
    const elapsed = performance.now() - started
    await request.arrived
    expect(result).toEqual({
      ok: false,
      reason: `${server.url}/hang.md: no answer within 200 ms`,
      detail: "no answer within 200 ms",
      problem: { kind: "timeout", timeoutMs: 200 },
    })
    expect(elapsed).toBeGreaterThanOrEqual(190)
    expect(elapsed).toBeLessThan(2_000)
  })

  test("the budget covers the body: headers then a stalled stream is given up on too", async () => {
    const request = held()
    const server = serve({
      "/slow.md": () =>
        new Response(
          new ReadableStream({
            async start(controller) {
              controller.enqueue(encode("# partial\n"))
              await request.until
              controller.close()
            },
          }),
          { headers: { "content-type": "text/markdown" } },
        ),
    })
    const result = await fetchText(`${server.url}/slow.md`, { timeoutMs: 200 })
    expect(result).toMatchObject({
      ok: false,
      reason: `${server.url}/slow.md: no answer within 200 ms`,
      problem: { kind: "timeout" },
    })
  })

  test("the budget holds even for an injected fetch that ignores its signal", async () => {
    const result = await fetchText("https://example.invalid/doc.md", {
      timeoutMs: 100,
      fetch: () => new Promise<Response>(() => {}),
    })
    expect(result).toMatchObject({ ok: false, problem: { kind: "timeout", timeoutMs: 100 } })
  })

  test("an oversized body is refused, whether it declares its length or streams without one", async () => {
    const server = serve({
      "/declared.md": () => new Response("x".repeat(5_000), { headers: { "content-type": "text/markdown" } }),
      "/streamed.md": () => {
        // No content-length: 10 chunks of 1000 bytes, the size only known while reading.
        let sent = 0
        const body = new ReadableStream({
          pull(controller) {
            if (sent++ === 10) return controller.close()
            controller.enqueue(encode("y".repeat(1_000)))
          },
        })
        return new Response(body, { headers: { "content-type": "text/plain" } })
      },
      "/fits.md": () => new Response("z".repeat(4_096)),
    })
    expect(await fetchText(`${server.url}/declared.md`, { maxBytes: 4_096 })).toEqual({
      ok: false,
      reason: `${server.url}/declared.md: larger than 4096 bytes`,
      detail: "larger than 4096 bytes",
      problem: { kind: "too-large", maxBytes: 4_096, declaredBytes: 5_000, contentType: "text/markdown" },
    })
    expect(await fetchText(`${server.url}/streamed.md`, { maxBytes: 4_096 })).toEqual({
      ok: false,
      reason: `${server.url}/streamed.md: larger than 4096 bytes`,
      detail: "larger than 4096 bytes",
      problem: { kind: "too-large", maxBytes: 4_096, contentType: "text/plain" },
    })
    expect(await fetchText(`${server.url}/fits.md`, { maxBytes: 4_096 })).toMatchObject({
      ok: true,
      text: "z".repeat(4_096),
    })
  })

  test("the caller's abort stops a pending request, and an already aborted signal sends none", async () => {
    const request = held()
    const server = serve({ "/hang.md": request.route })
    const controller = new AbortController()
    const pending = fetchText(`${server.url}/hang.md`, { signal: controller.signal, timeoutMs: 20_000 })
    await request.arrived
    controller.abort(new Error("review cancelled"))
    expect(await pending).toEqual({
      ok: false,
      reason: `${server.url}/hang.md: review cancelled`,
      detail: "review cancelled",
      problem: { kind: "aborted" },
    })

    const before = server.requests.length
    const again = await fetchText(`${server.url}/hang.md`, { signal: controller.signal })
    expect(again).toMatchObject({ ok: false, problem: { kind: "aborted" } })
    expect(server.requests.length).toBe(before)
  })

  test("a refused connection is a failure naming the error", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
    const url = `http://127.0.0.1:${closed.port}/doc.md?token=s3cret`
    await closed.stop(true)
    const result = await fetchText(url)
    expect(result).toMatchObject({ ok: false, problem: { kind: "network" } })
    expect(result.ok ? "" : result.reason).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/doc\.md: request failed: \S/)
    expect(JSON.stringify(result)).not.toContain("s3cret")
  })

  test("a URL that is not http(s) is refused without a request", async () => {
    let called = false
    const fetch = async () => ((called = true), new Response(""))
    expect(await fetchText("file:///etc/passwd", { fetch })).toEqual({
      ok: false,
      reason: '"file:///etc/passwd" is not an http(s) URL',
      detail: '"file:///etc/passwd" is not an http(s) URL',
      problem: { kind: "url" },
    })
    expect(await fetchText("not a url", { fetch })).toMatchObject({ ok: false, problem: { kind: "url" } })
    expect(called).toBe(false)
  })
})

describe("redactUrl", () => {
  test("keeps origin and path only, and refuses what is not http(s)", () => {
    expect(redactUrl("https://bot:glpat-secret@gitlab.example.com:8443/api/v4/doc.md?private_token=x#top")).toBe(
      "https://gitlab.example.com:8443/api/v4/doc.md",
    )
    expect(redactUrl("http://example.com")).toBe("http://example.com/")
    expect(redactUrl("ftp://example.com/x.md")).toBeNull()
    expect(redactUrl("/relative/path")).toBeNull()
  })
})
