import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ReviewRecord } from "@opencode-reviewer/core"
import {
  hangReply,
  lengthReply,
  type ModelServer,
  rateLimitReply,
  statusReply,
  type TempRepo,
} from "@opencode-reviewer/testkit"
import { main } from "opencode-reviewer"
import { afterEach, describe, expect, test } from "vitest"
import {
  cleanUp,
  cleanups,
  createScenario,
  judge,
  type ScenarioOptions,
  type Run as ScenarioRun,
  specialists,
} from "./harness"

// `opencode-reviewer review` end to end: the CLI plans, runs the real opencode binary with the
// runtime plugin and the comment server, and the scripted model plays coordinator and specialists.

afterEach(cleanUp)

type Run = ScenarioRun & { server: ModelServer; repo: TempRepo; outputDir: string }

async function review(options: ScenarioOptions & { args?: string[]; env?: Record<string, string> } = {}): Promise<Run> {
  const scenario = await createScenario(options)
  const run = await scenario.run({
    ...(options.args ? { args: options.args } : {}),
    ...(options.env ? { env: options.env } : {}),
  })
  return { ...run, server: scenario.server, repo: scenario.repo, outputDir: scenario.outputDir }
}

describe("opencode-reviewer review", () => {
  // One review with a tracker and an OTLP receiver configured: review.json as expected, the tracker's
  // events and Prometheus metrics, and the spans, without slowing the review.
  test("reviews a temp repo end to end into the expected review.json, reports to the tracker, writes Prometheus metrics and exports spans for the review, each model step and each reviewer", async () => {
    const events: Record<string, unknown>[] = []
    const tracker = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => (
        events.push((await request.json()) as Record<string, unknown>), new Response(null, { status: 204 })
      ),
    })
    cleanups.push(async () => void tracker.stop(true))
    const spans: { name: string; attributes: { key: string; value: Record<string, unknown> }[] }[] = []
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        const body = (await request.json()) as {
          resourceSpans: { scopeSpans: { spans: (typeof spans)[number][] }[] }[]
        }
        for (const resource of body.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans)
        return Response.json({})
      },
    })
    cleanups.push(async () => void receiver.stop(true))
    const run = await review({
      config: {
        telemetryUrl: `http://127.0.0.1:${tracker.port}/events`,
        tracing: { endpoint: `http://127.0.0.1:${receiver.port}/v1/traces` },
        limits: { heartbeatSeconds: 30 },
      },
    })
    expect(run.stderr).toContain("review: full tier")
    expect(run.stderr).toMatch(/security\s+done, 1 finding/)
    expect(run.code).toBe(2)
    const record = run.record!
    expect(record).toMatchObject({
      decision: "significant_concerns",
      tier: "full",
      breakGlass: false,
      injectionSuspected: false,
      findings: [
        { id: "f1", reviewer: "security", severity: "critical", file: "src/auth/login.ts", line: 2, status: "new" },
      ],
      coverage: { reviewedFiles: 1, filtered: [], failedReviewers: [], complete: true, unjudgedFindings: 0 },
    })
    // Per-agent tokens are what the model server sent (input excludes the cached part).
    for (const name of ["security", "code-quality", "performance", "compliance", "documentation", "agents-md"]) {
      expect(record.usage.byAgent[name], name).toMatchObject({ input: 1000, output: 50, cacheRead: 200 })
    }
    expect(record.usage.byAgent.review_coordinator!.input).toBeGreaterThan(0)
    expect(record.usage.costUsd).toBeCloseTo(
      Object.values(record.usage.byAgent).reduce((sum, entry) => sum + entry.costUsd, 0),
      5,
    )
    expect(run.stdout).toContain("SQL built from the request")
    // The run ends at submit_review: no closing coordinator turn that re-sends the conversation.
    expect(run.server.requests.filter((request) => request.model === "coordinator" && !request.isTitle)).toHaveLength(2)

    // The tracker: start and end, counts only (never the findings' text), and the metrics file.
    expect(events.map((event) => event.type)).toEqual(["job-start", "job-end"])
    expect(events[1]).toMatchObject({
      decision: "significant_concerns",
      findings: { total: 1, bySeverity: { critical: 1 } },
    })
    expect(JSON.stringify(events)).not.toContain("concatenated into the query")
    const metrics = await readFile(join(run.outputDir, "metrics.prom"), "utf8")
    expect(metrics).toMatch(/^opencode_reviewer_reviews_total\{[^}]*decision="significant_concerns"[^}]*\} 1$/m)

    // The spans: the review, each reviewer with its tokens, the model steps.
    const names = spans.map((span) => span.name)
    expect(names).toContain("review")
    expect(names.filter((name) => name.startsWith("reviewer "))).toHaveLength(6)
    const security = spans.find((span) => span.name === "reviewer security")!
    const input = security.attributes.find((attribute) => attribute.key === "gen_ai.usage.input_tokens")!.value
    expect(Number(input.intValue ?? input.doubleValue)).toBe(1000)
    expect(names.some((name) => name.startsWith("chat "))).toBe(true)
  })

  test("fails the coordinator back to the next model of its chain on 503", async () => {
    const run = await review({
      coordinator: ["fake/top", "fake/coordinator"],
      replies: { "fake/top": statusReply(503, { message: "overloaded", headers: { "retry-after-ms": "0" } }) },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/failing back to fake\/coordinator/)
    expect(run.server.requests.filter((request) => request.model === "top").length).toBeGreaterThan(1)
    expect(run.record!.usage.byModel["fake/coordinator"]).toBeDefined()
  })

  test("fails a reviewer back on 429 and keeps its findings", async () => {
    const run = await review({
      config: {
        reviewers: {
          ...Object.fromEntries(specialists.map((name) => [name, { model: `fake/${name}` }])),
          security: { model: ["fake/sec-busy", "fake/security"] },
        },
      },
      replies: { "fake/sec-busy": rateLimitReply({ retryAfterMs: 0 }) },
    })
    expect(run.stderr).toMatch(/security\s+failing back to fake\/security/)
    expect(run.record!.findings.map((finding) => finding.title)).toEqual(["SQL built from the request"])
  })

  test("stops on 401 without failing back and names the provider", async () => {
    const run = await review({
      coordinator: ["fake/top", "fake/coordinator"],
      replies: { "fake/top": statusReply(401, { message: "invalid api key" }) },
    })
    expect(run.code).toBe(1)
    const port = new URL(run.server.url).host
    expect(run.stderr).toContain(`APIError 401 from ${port}`)
    expect(run.stderr).toMatch(
      /error: an authentication problem stopped the review: provider fake at \S+ refused the credentials \(HTTP 401\) for fake\/top/,
    )
    expect(run.stderr).toContain(
      "hint: provider.fake.options.apiKey in the config holds a key the provider refuses: replace it",
    )
    expect(run.server.requests.filter((request) => request.model === "top")).toHaveLength(1)
    expect(run.server.requests.filter((request) => request.model === "coordinator")).toHaveLength(0)
    expect(run.record).toBeNull()
  })

  test("aborts a hung specialist, lists it as failed and keeps everyone else's findings", async () => {
    const run = await review({
      replies: { "fake/performance": hangReply() },
      config: { limits: { idleSeconds: 2, heartbeatSeconds: 30 } },
    })
    expect(run.code).toBe(2)
    expect(run.record!.coverage.failedReviewers).toEqual([
      { name: "performance", error: expect.stringContaining("no output for 2 s") },
    ])
    expect(run.record!.findings.map((finding) => finding.reviewer)).toEqual(["security"])
    expect(run.stderr).toMatch(/performance\s+FAILED/)
  })

  test("retries the coordinator when its answer is cut off by length", async () => {
    let first = true
    const run = await review({
      replies: {
        "fake/coordinator": (request) => {
          if (first && request.toolResults.length === 0) {
            first = false
            return lengthReply("I will start by")
          }
          return judge(request)
        },
      },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain("coordinator answer was cut off (length)")
    expect(run.record!.findings).toHaveLength(1)
  })

  test("retries a coordinator that crashes at start with the next model, then says why it gave up", async () => {
    // A stand-in binary that dies on start the way a broken install does, logging each attempt.
    const scratch = await mkdtemp(join(tmpdir(), "ocr-crash-"))
    cleanups.push(() => rm(scratch, { recursive: true, force: true }))
    const binary = join(scratch, "opencode")
    await writeFile(
      binary,
      `#!/bin/sh\necho "$OPENCODE_CONFIG_CONTENT" | grep -o '"model":"[^"]*"' | head -1 >> ${join(scratch, "attempts")}\necho "error: failed to start: out of file handles" >&2\nexit 3\n`,
      { mode: 0o755 },
    )
    const run = await review({ coordinator: ["fake/coordinator", "fake/second"], env: { OPENCODE_BIN: binary } })
    expect(run.code).toBe(1)
    expect((await readFile(join(scratch, "attempts"), "utf8")).trim().split("\n")).toEqual([
      '"model":"fake/coordinator"',
      '"model":"fake/second"',
    ])
    expect(run.stderr).toMatch(
      /the coordinator could not finish the review:\n\s+fake\/coordinator: opencode exited with code 3 before printing anything: error: failed to start: out of file handles\n\s+fake\/second: opencode exited with code 3/,
    )
  })
  // A description far past an argument's limit (128 KiB) reaching the coordinator over stdin:
  // huge-inputs.test.ts ("limits.descriptionBytes raises the cap").
})

describe("opencode-reviewer demo", () => {
  test("reviews the bundled sample offline and finds the seeded bug", async () => {
    const scratch = await mkdtemp(join(tmpdir(), "ocr-demo-"))
    cleanups.push(() => rm(scratch, { recursive: true, force: true }))
    let stdout = ""
    let stderr = ""
    const code = await main({
      argv: ["demo", "--output-dir", scratch],
      env: { PATH: process.env.PATH!, HOME: scratch },
      cwd: scratch,
      stdout: (chunk) => void (stdout += chunk),
      stderr: (chunk) => void (stderr += chunk),
      stdin: async () => new Uint8Array(),
      execPath: process.execPath,
    })
    expect(code, stderr).toBe(0)
    expect(stderr).toContain("review: lite tier, 4 reviewers")
    expect(stderr).toMatch(/security\s+done, 1 finding/)
    expect(stdout).toContain("Decision: significant_concerns")
    expect(stdout).toContain("SQL injection through the admin search text (src/users.ts:17)")
    expect(stdout).toMatch(/Cost \$\d+\.\d+/)
    const record = JSON.parse(await readFile(join(scratch, "review.json"), "utf8")) as ReviewRecord
    expect(record.findings[0]).toMatchObject({ file: "src/users.ts", line: 17, severity: "critical" })
  })
})
