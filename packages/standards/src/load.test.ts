import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { type LoadOptions, loadDocuments } from "./load"

// Real HTTP servers on 127.0.0.1 and real folders; nothing about the network is faked.

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Handler = (request: Request) => Response | Promise<Response>

function serve(routes: Record<string, Handler>) {
  const requests: string[] = []
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url)
      requests.push(`${url.pathname}${url.search}`)
      const route = routes[url.pathname]
      return route ? route(request) : new Response("not found", { status: 404 })
    },
  })
  cleanups.push(() => server.stop(true))
  return { url: `http://127.0.0.1:${server.port}`, requests }
}

const markdown = (text: string) => () =>
  new Response(text, { headers: { "content-type": "text/markdown; charset=utf-8" } })
const noTrust: Pick<LoadOptions, "repoDir" | "readTrustedFile"> = {
  repoDir: "/nonexistent-repo",
  readTrustedFile: async () => {
    throw new Error("the trusted side must not be read for this source")
  },
}

describe("standards from a URL", () => {
  test("a markdown document is one source of (possibly several) standards", async () => {
    const server = serve({ "/eng.md": markdown("# ENG-1: One\nA.\n# ENG-2: Two\nB.\n") })
    const result = await loadDocuments(`${server.url}/eng.md?token=s3cret`, noTrust)
    expect(result).toMatchObject({ loaded: true, where: `${server.url}/eng.md`, failures: [], warnings: [] })
    expect(result.documents).toEqual([
      { text: "# ENG-1: One\nA.\n# ENG-2: Two\nB.\n", source: `${server.url}/eng.md`, name: "eng.md" },
    ])
  })

  test("a JSON index lists documents, relative entries resolved against the index; one failing document is reported, not fatal", async () => {
    const server = serve({
      "/std/index.json": () =>
        Response.json({
          version: 1,
          standards: ["eng/ENG-001.md", { url: "../common/SEC-1.md" }, "broken.md", "ftp://elsewhere/x.md"],
        }),
      "/std/eng/ENG-001.md": markdown("# ENG-001: Timeouts\nMUST.\n"),
      "/common/SEC-1.md": markdown("# SEC-1: Secrets\nMUST NOT.\n"),
      "/std/broken.md": () => new Response("boom", { status: 500, statusText: "Internal Server Error" }),
    })
    const result = await loadDocuments(`${server.url}/std/index.json`, noTrust)
    expect(result.loaded).toBe(true)
    expect(result.documents.map(({ source, name }) => ({ source, name }))).toEqual([
      { source: `${server.url}/std/eng/ENG-001.md`, name: "ENG-001.md" },
      { source: `${server.url}/common/SEC-1.md`, name: "SEC-1.md" },
    ])
    expect(result.failures).toEqual([`${server.url}/std/broken.md: HTTP 500 Internal Server Error`])
    expect(result.warnings).toEqual([expect.stringContaining('"ftp://elsewhere/x.md" is not an http(s) URL; ignored')])
  })

  test("a bare array is an index too, recognised by the .json name when the server says text/plain", async () => {
    const server = serve({
      "/list.json": () => new Response(JSON.stringify(["a.md"]), { headers: { "content-type": "text/plain" } }),
      "/a.md": markdown("# A-1: a\n"),
    })
    const result = await loadDocuments(`${server.url}/list.json`, noTrust)
    expect(result.documents.map(({ name }) => name)).toEqual(["a.md"])
  })

  test("HTTP 500 on the configured URL means nothing loaded, with the status in the reason and no query string", async () => {
    const server = serve({ "/eng.md": () => new Response("down", { status: 500 }) })
    const result = await loadDocuments(`${server.url}/eng.md?private_token=s3cret`, noTrust)
    expect(result).toMatchObject({ loaded: false, documents: [] })
    expect(result.failures).toEqual([`${server.url}/eng.md: HTTP 500 Internal Server Error`])
    expect(JSON.stringify(result)).not.toContain("s3cret")
  })

  test("a server that never answers is given up on at the timeout", async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let arrived = () => {}
    const seen = new Promise<void>((resolve) => (arrived = resolve))
    const server = serve({
      "/eng.md": async () => {
        arrived()
        await held
        return new Response("# ENG-1: late\n")
      },
    })
    // Cleanups run last-in first-out: the held request is released before the server stops.
    cleanups.push(() => release())
    const started = performance.now()
    const result = await loadDocuments(`${server.url}/eng.md`, { ...noTrust, timeoutMs: 200 })
    const elapsed = performance.now() - started
    await seen
    expect(result).toMatchObject({ loaded: false, failures: [`${server.url}/eng.md: no answer within 200 ms`] })
    expect(elapsed).toBeGreaterThanOrEqual(190)
    expect(elapsed).toBeLessThan(2_000)
  })

  test("a long index of hanging documents is bounded by the budget for the whole source", async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    const server = serve({
      "/index.json": () => Response.json(["a.md", "b.md", "c.md", "d.md", "e.md", "f.md", "g.md", "h.md"]),
      "/a.md": markdown("# A-1: quick\n"),
      ...Object.fromEntries(
        ["b", "c", "d", "e", "f", "g", "h"].map((name) => [
          `/${name}.md`,
          async () => (await held, new Response("late")),
        ]),
      ),
    })
    cleanups.push(() => release())
    const started = performance.now()
    const result = await loadDocuments(`${server.url}/index.json`, {
      ...noTrust,
      timeoutMs: 5_000,
      totalTimeoutMs: 300,
    })
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(result.documents.map(({ name }) => name)).toEqual(["a.md"])
    expect(result.failures).toHaveLength(7)
    expect(result.failures[0]).toMatch(/\/b\.md: over the 300 ms budget for the whole source$/)
  })

  test("maxDocumentBytes caps a fetched document (the streamed case is core's fetch-text test)", async () => {
    const server = serve({ "/big.md": markdown("# ENG-1: big\n" + "x".repeat(5_000)) })
    const result = await loadDocuments(`${server.url}/big.md`, { ...noTrust, maxDocumentBytes: 4_096 })
    expect(result).toMatchObject({ loaded: false, failures: [`${server.url}/big.md: larger than 4096 bytes`] })
  })

  test("an index that is not one is a load failure naming the problem", async () => {
    const server = serve({ "/index.json": () => Response.json({ documents: ["a.md"] }) })
    const result = await loadDocuments(`${server.url}/index.json`, noTrust)
    expect(result.loaded).toBe(false)
    expect(result.failures[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/index\.json: not a standards index: /)
  })
})

describe("standards on disk and in the repository", () => {
  test("an absolute folder on the runner: markdown files at any depth, symlinks and other files left out", async () => {
    const dir = await mkdtemp(join(tmpdir(), "standards-disk-"))
    cleanups.push(() => rm(dir, { recursive: true, force: true }))
    await mkdir(join(dir, "http"))
    await writeFile(join(dir, "ENG-1.md"), "# ENG-1: one\n")
    await writeFile(join(dir, "http", "ENG-2.markdown"), "# ENG-2: two\n")
    await writeFile(join(dir, "notes.txt"), "not a standard\n")
    await writeFile(join(dir, "secret.txt"), "TOKEN=abc\n")
    await symlink(join(dir, "secret.txt"), join(dir, "ENG-3.md"))
    const result = await loadDocuments(dir, noTrust)
    expect(result.loaded).toBe(true)
    expect(result.documents.map(({ source, text }) => ({ source, text }))).toEqual([
      { source: join(dir, "ENG-1.md"), text: "# ENG-1: one\n" },
      { source: join(dir, "http", "ENG-2.markdown"), text: "# ENG-2: two\n" },
    ])
    expect((await loadDocuments(join(dir, "missing"), noTrust)).failures).toEqual([
      `${join(dir, "missing")}: no such file or folder on this runner`,
    ])
  })

  test("a relative folder is listed and read through the trusted side only", async () => {
    const trusted: Record<string, string> = {
      "docs/standards/ENG-1.md": "# ENG-1: base\n",
      "docs/standards/README.md": "# About\n",
      "docs/standards/logo.svg": "<svg/>",
    }
    const read: string[] = []
    const options: LoadOptions = {
      repoDir: "/repo",
      readTrustedFile: async (path) => (read.push(path), trusted[path] ?? null),
      listTrustedFiles: async (dir) => (dir === "docs/standards" ? Object.keys(trusted) : null),
    }
    const result = await loadDocuments("./docs/standards/", options)
    expect(result).toMatchObject({ loaded: true, where: "docs/standards on the target branch" })
    expect(result.documents.map(({ source }) => source)).toEqual([
      "docs/standards/ENG-1.md",
      "docs/standards/README.md",
    ])
    expect(read.sort()).toEqual(["docs/standards/ENG-1.md", "docs/standards/README.md"])

    // An absolute path into the checkout is the change's copy: it is read from the target branch instead.
    read.length = 0
    expect((await loadDocuments("/repo/docs/standards", options)).documents).toHaveLength(2)
    expect(read).toHaveLength(2)

    expect((await loadDocuments("docs/nope", options)).failures).toEqual([
      "docs/nope on the target branch: no such folder",
    ])
    expect((await loadDocuments("../outside", options)).failures).toEqual([
      "../outside on the target branch: the path leaves the repository",
    ])
    expect((await loadDocuments("file:///etc/standards", options)).failures[0]).toMatch(
      /neither an http\(s\) URL nor a path/,
    )
  })

  test("a single markdown file works without folder listing; a folder then needs it", async () => {
    const options: LoadOptions = {
      repoDir: "/repo",
      readTrustedFile: async (path) => (path === "STANDARDS.md" ? "# ENG-1: x\n" : null),
    }
    expect((await loadDocuments("STANDARDS.md", options)).documents).toHaveLength(1)
    expect((await loadDocuments("docs/standards", options)).failures).toEqual([
      "docs/standards on the target branch: this VCS provider cannot list folders; name a markdown file instead",
    ])
  })
})
