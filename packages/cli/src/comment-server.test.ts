import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { parseSubmission } from "@opencode-reviewer/core"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { handleSubmitReview } from "./comment-server"

const serverPath = fileURLToPath(new URL("./comment-server.ts", import.meta.url))

const goodReview = `Here is my review.
\`\`\`xml
<review>
  <summary>Adds a user lookup endpoint; the query is built from request input.</summary>
  <findings>
    <finding severity="critical" file="src/db.ts" line="12" category="security">
      <title>SQL built from request input</title>
      <body>Use a parameterised query & validate the id.</body>
    </finding>
    <finding severity="suggestion" file="src/db.ts" line="12" category="security">
      <title>SQL built from request input.</title>
      <body>Short.</body>
    </finding>
    <finding severity="suggestion" file="README.md" category="documentation">
      <title>Document the endpoint</title>
      <body>Add it to the API list.</body>
    </finding>
  </findings>
</review>
\`\`\``

let workDir: string

beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), "comment-server-"))
  await writeFile(
    join(workDir, "plan.json"),
    JSON.stringify({
      tier: "lite",
      files: [
        { path: "src/db.ts", noise: null },
        { path: "README.md", noise: null },
      ],
      agents: [],
    }),
  )
})

afterEach(async () => {
  await rm(workDir, { recursive: true, force: true })
})

async function submission() {
  const parsed = parseSubmission(await readFile(join(workDir, "submission.json"), "utf8"))
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.value
}

describe("handleSubmitReview", () => {
  test("records a valid review with duplicates merged, atomically", async () => {
    const now = () => new Date("2026-03-01T10:00:00.000Z")
    const result = await handleSubmitReview(workDir, { review: goodReview }, { now })
    expect(result).toMatchObject({ ok: true, replaced: false })
    expect(result.text).toBe(
      "review recorded: 2 findings (1 critical, 1 suggestion). Note: 1 exact duplicate(s) merged. You are done; stop here.",
    )
    const stored = await submission()
    expect(stored.submittedAt).toBe("2026-03-01T10:00:00.000Z")
    expect(stored.rawXml).toBe(goodReview)
    expect(stored.review.answer).toBeNull()
    expect(stored.review.findings).toEqual([
      {
        severity: "critical",
        file: "src/db.ts",
        line: 12,
        category: "security",
        title: "SQL built from request input",
        body: "Use a parameterised query & validate the id.",
      },
      {
        severity: "suggestion",
        file: "README.md",
        line: null,
        category: "documentation",
        title: "Document the endpoint",
        body: "Add it to the API list.",
      },
    ])
    expect((await readdir(workDir)).sort()).toEqual(["plan.json", "submission.json"])
  })

  test("rejects bad XML with an actionable message and writes nothing", async () => {
    const result = await handleSubmitReview(workDir, {
      review: `<review><summary>s</summary><findings><finding severity="high" file="a.ts" category="x"><title>t</title></finding></findings></review>`,
    })
    expect(result).toEqual({
      ok: false,
      text: 'The review was not recorded: finding 1: severity "high" is not one of critical, warning, suggestion. Fix this and call submit_review again with the whole <review> block.',
    })
    expect(await readdir(workDir)).toEqual(["plan.json"])
  })

  test("rejects a missing or non-string argument", async () => {
    for (const input of [{}, { review: 3 }, null]) {
      const result = await handleSubmitReview(workDir, input)
      expect(result.ok).toBe(false)
      expect(result.text).toContain('one string argument "review"')
    }
  })

  test("a second valid submission replaces the first and says so", async () => {
    await handleSubmitReview(workDir, { review: goodReview })
    const second = await handleSubmitReview(workDir, {
      review: "<review><summary>Second thoughts: fine.</summary><findings/></review>",
    })
    expect(second.ok).toBe(true)
    expect(second.text).toContain("this replaces your earlier submission")
    expect((await submission()).review).toEqual({ summary: "Second thoughts: fine.", findings: [], answer: null })
  })

  test("an invalid second submission leaves the first in place", async () => {
    await handleSubmitReview(workDir, { review: goodReview })
    await handleSubmitReview(workDir, { review: "<review><findings/></review>" })
    expect((await submission()).review.findings).toHaveLength(2)
  })

  test("notes findings on files outside the change, and keeps them", async () => {
    const result = await handleSubmitReview(workDir, {
      review: `<review><summary>s</summary><findings><finding severity="warning" file="src/other.ts" line="3" category="code-quality"><title>t</title></finding></findings></review>`,
    })
    expect(result.text).toContain("src/other.ts is not part of the change (kept as cited)")
    expect((await submission()).review.findings[0]!.file).toBe("src/other.ts")
  })

  test("tells the model not to retry when the work dir cannot be written", async () => {
    const result = await handleSubmitReview(join(workDir, "missing"), { review: goodReview })
    expect(result.ok).toBe(false)
    expect(result.text).toContain("Do not retry: end your answer with the same <review> block instead.")
  })
})

describe("the stdio server", () => {
  test("lists submit_review and records submissions over MCP, speaking only protocol on stdout", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [serverPath],
      // Only what any process needs, plus the work dir: the server must not need a secret.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workDir, OPENCODE_REVIEWER_WORK_DIR: workDir },
      stderr: "pipe",
    })
    let stderr = ""
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const protocolErrors: Error[] = []
    const client = new Client({ name: "test", version: "0.0.0" })
    client.onerror = (error) => protocolErrors.push(error)
    await client.connect(transport)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(["submit_review"])
      expect(tools[0]!.inputSchema).toMatchObject({
        type: "object",
        properties: { review: { type: "string" } },
        required: ["review"],
      })

      const bad = await client.callTool({
        name: "submit_review",
        arguments: { review: "<review><summary></summary></review>" },
      })
      expect(bad.isError).toBe(true)
      expect(bad.content).toEqual([{ type: "text", text: expect.stringContaining("<summary> is missing or empty") }])

      const good = await client.callTool({ name: "submit_review", arguments: { review: goodReview } })
      expect(good.isError).toBeFalsy()
      expect(good.content).toEqual([{ type: "text", text: expect.stringMatching(/^review recorded: 2 findings/) }])
      expect((await submission()).review.summary).toBe(
        "Adds a user lookup endpoint; the query is built from request input.",
      )

      const again = await client.callTool({ name: "submit_review", arguments: { review: goodReview } })
      expect(again.content).toEqual([
        { type: "text", text: expect.stringContaining("replaces your earlier submission") },
      ])
    } finally {
      await client.close()
    }
    expect(protocolErrors).toEqual([])
    expect(stderr).toContain("comment-server: ready")
    expect(stderr).toContain("comment-server: submit_review rejected")
  })

  test("exits with a message on stderr when the work dir is not set", () => {
    const result = Bun.spawnSync([process.execPath, serverPath], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      stdin: "ignore",
    })
    expect(result.exitCode).toBe(1)
    expect(result.stdout.toString()).toBe("")
    expect(result.stderr.toString()).toContain("OPENCODE_REVIEWER_WORK_DIR must be set")
  })
})
