import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { fetchTemplate, TemplateFetchError } from "./template"

// A real HTTP server on a free port: one route per way a template fetch can go.
let server: ReturnType<typeof Bun.serve>
let base = ""
const hanging: (() => void)[] = []
const template = "# AGENTS.md — <project>\n\n## Commands\n\n```sh\nmake test\n```\n"

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const path = new URL(request.url).pathname
      if (path === "/ok.md")
        return new Response(template, { headers: { "content-type": "text/markdown; charset=utf-8" } })
      if (path === "/plain") return new Response(template, { headers: { "content-type": "text/plain" } })
      if (path === "/missing") return new Response("not here", { status: 404 })
      if (path === "/html") return new Response("<html>login</html>", { headers: { "content-type": "text/html" } })
      if (path === "/big-html")
        return new Response(`<html>${"x".repeat(5000)}</html>`, {
          headers: { "content-type": "text/html; charset=utf-8" },
        })
      if (path === "/empty") return new Response(" \n\n", { headers: { "content-type": "text/markdown" } })
      if (path === "/big") return new Response("x".repeat(5000), { headers: { "content-type": "text/markdown" } })
      if (path === "/big-stream") {
        // No content-length: the size is only known while reading (8 KiB in 1 KiB chunks).
        let sent = 0
        const body = new ReadableStream({
          pull(controller) {
            if (sent++ === 8) return controller.close()
            controller.enqueue(new TextEncoder().encode("y".repeat(1024)))
          },
        })
        return new Response(body, { headers: { "content-type": "text/markdown" } })
      }
      if (path === "/hang-body") {
        const body = new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode("# started\n"))
            hanging.push(() => controller.close())
          },
        })
        return new Response(body, { headers: { "content-type": "text/markdown" } })
      }
      return new Response("?", { status: 500 })
    },
  })
  base = `http://127.0.0.1:${server.port}`
})

afterAll(async () => {
  for (const release of hanging) {
    try {
      release()
    } catch {
      // The client went away first; nothing left to close.
    }
  }
  await server.stop(true)
})

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error("expected the fetch to fail")
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(TemplateFetchError)
      return (error as Error).message
    },
  )

describe("fetchTemplate", () => {
  test("returns a Markdown or plain-text template", async () => {
    expect(await fetchTemplate(`${base}/ok.md`)).toBe(template)
    expect(await fetchTemplate(`${base}/plain`)).toBe(template)
  })

  test("fails on 404 with the status", async () => {
    expect(await failure(fetchTemplate(`${base}/missing`))).toBe("HTTP 404")
  })

  test("fails on a content type that is not Markdown or text, even when the page is also over the cap", async () => {
    expect(await failure(fetchTemplate(`${base}/html`))).toBe("content type text/html is not Markdown or plain text")
    expect(await failure(fetchTemplate(`${base}/big-html`, { maxBytes: 4096 }))).toBe(
      "content type text/html is not Markdown or plain text",
    )
  })

  test("fails on an empty template", async () => {
    expect(await failure(fetchTemplate(`${base}/empty`))).toBe("the template is empty")
  })

  test("fails on a body over the size cap, declared or streamed", async () => {
    expect(await failure(fetchTemplate(`${base}/big`, { maxBytes: 4096 }))).toBe(
      "the template is 5000 bytes, over the 4096-byte limit",
    )
    expect(await failure(fetchTemplate(`${base}/big-stream`, { maxBytes: 4096 }))).toBe(
      "the template is over the 4096-byte limit",
    )
  })

  test("gives up on a body that stalls at the timeout, and stops when the review is cancelled", async () => {
    // The message comes only from the fetch's own deadline timer (the server never finishes).
    // (Hangs, stalls and aborts in general are core's fetch-text tests; these are the template's words.)
    expect(await failure(fetchTemplate(`${base}/hang-body`, { timeoutMs: 150 }))).toBe(
      "no complete answer within 150 ms",
    )
    expect(await failure(fetchTemplate(`${base}/ok.md`, { signal: AbortSignal.abort() }))).toBe(
      "the fetch was cancelled",
    )
  })

  test("refuses URLs that are not http(s)", async () => {
    expect(await failure(fetchTemplate("file:///etc/passwd"))).toBe("file: URLs are not fetched; use http(s)")
  })
})
