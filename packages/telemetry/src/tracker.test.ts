import type { Logger } from "@opencode-reviewer/core/model/logger"
import { afterEach, describe, expect, test } from "vitest"
import { sampleRecord } from "./__fixtures__/review-record"
import { jobEndEvent, type TrackerEvent } from "./events"
import { createTracker } from "./tracker"

// Every endpoint here is a real HTTP server on 127.0.0.1:0; the tracker uses the real fetch.

interface Received {
  body: Record<string, unknown>
  headers: Headers
}

interface Endpoint {
  url: string
  received: Received[]
  /** Resolves once the server has received `count` requests in total. */
  receivedCount(count: number): Promise<void>
  /** Answers every request held so far (and every later one) with `status`. */
  release(status?: number): void
  stop(): Promise<void>
}

type Mode = "fast" | "hang" | "fail"

const endpoints: Endpoint[] = []
afterEach(async () => {
  await Promise.all(endpoints.splice(0).map((endpoint) => endpoint.stop()))
})

function startEndpoint(mode: Mode): Endpoint {
  const received: Received[] = []
  const held: Array<(response: Response) => void> = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  let releasedWith: number | null = null
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      received.push({ body: (await request.json()) as Record<string, unknown>, headers: request.headers })
      for (const waiter of waiters.filter((candidate) => received.length >= candidate.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      if (mode === "fast") return new Response(null, { status: 204 })
      if (mode === "fail") return new Response("tracker exploded", { status: 500 })
      if (releasedWith !== null) return new Response(null, { status: releasedWith })
      return new Promise<Response>((resolve) => held.push(resolve))
    },
  })
  const endpoint: Endpoint = {
    url: `http://127.0.0.1:${server.port}/events`,
    received,
    receivedCount: (count) =>
      received.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    release(status = 200) {
      releasedWith = status
      for (const answer of held.splice(0)) answer(new Response(null, { status }))
    },
    async stop() {
      endpoint.release()
      await server.stop(true)
    },
  }
  endpoints.push(endpoint)
  return endpoint
}

/** A port nothing listens on: bound by a server that is then closed. */
async function closedPortUrl(): Promise<string> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() })
  const url = `http://127.0.0.1:${server.port}/events`
  await server.stop(true)
  return url
}

const jobStart: TrackerEvent = {
  type: "job-start",
  repo: { id: 42, url: "https://group/project" },
  mergeRequestIid: 7,
  tier: "full",
  agents: ["review_coordinator", "security", "code-quality"],
}

function startN(count: number, from = 1): TrackerEvent[] {
  return Array.from({ length: count }, (_, index) => ({ ...jobStart, mergeRequestIid: from + index }) as TrackerEvent)
}

/** A logger that hands every warn/debug record to `onRecord` and keeps the warning messages. */
function recordingLog(onRecord: (data: Record<string, unknown>) => void, warnings: string[] = []): Logger {
  const log: Logger = {
    debug: (data) => onRecord(data as Record<string, unknown>),
    info() {},
    warn(data, message) {
      warnings.push(String(message))
      onRecord(data as Record<string, unknown>)
    },
    error() {},
    child: () => log,
  }
  return log
}

function countsOnly(table: typeof sampleRecord.usage.byAgent) {
  return Object.fromEntries(Object.entries(table).map(([name, { cacheHitRate: _, ...counts }]) => [name, counts]))
}

function timed<T>(action: () => T): { value: T; ms: number } {
  const started = performance.now()
  const value = action()
  return { value, ms: performance.now() - started }
}

async function timedAsync<T>(action: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await action()
  return { value, ms: performance.now() - started }
}

describe("tracker against a fast endpoint", () => {
  test("posts every event as JSON with type, at and jobId, and counts them sent", async () => {
    const endpoint = startEndpoint("fast")
    const tracker = createTracker({
      url: endpoint.url,
      jobId: "job-1",
      now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
      headers: { authorization: "Bearer tracker-key" },
    })

    tracker.track(jobStart)
    tracker.track({ type: "break-glass", by: "alice" })
    tracker.track({ type: "error", stage: "publish", message: "gitlab answered 502" })
    tracker.track(jobEndEvent(sampleRecord))
    const totals = await tracker.flush()

    expect(totals).toEqual({ sent: 4, failed: 0, dropped: 0, timedOut: 0 })
    expect(tracker.stats()).toMatchObject({ tracked: 4, invalid: 0, pending: 0 })
    const bodies = endpoint.received.map((entry) => entry.body).sort((a, b) => Number(a.seq) - Number(b.seq))
    expect(bodies).toEqual([
      {
        type: "job-start",
        at: "2026-01-02T03:04:05.000Z",
        jobId: "job-1",
        seq: 1,
        repo: { id: 42, url: "https://group/project" },
        mergeRequestIid: 7,
        tier: "full",
        agents: ["review_coordinator", "security", "code-quality"],
      },
      { type: "break-glass", by: "alice", at: "2026-01-02T03:04:05.000Z", jobId: "job-1", seq: 2 },
      {
        type: "error",
        stage: "publish",
        message: "gitlab answered 502",
        at: "2026-01-02T03:04:05.000Z",
        jobId: "job-1",
        seq: 3,
      },
      {
        type: "job-end",
        at: "2026-01-02T03:04:05.000Z",
        jobId: "job-1",
        seq: 4,
        decision: "minor_issues",
        tier: "full",
        durationMs: 219_000,
        breakGlass: true,
        injectionSuspected: false,
        findings: {
          total: 4,
          bySeverity: { critical: 1, warning: 2, suggestion: 1 },
          byReviewer: {
            security: { critical: 0, warning: 2, suggestion: 0 },
            "code-quality": { critical: 0, warning: 0, suggestion: 1 },
            performance: { critical: 1, warning: 0, suggestion: 0 },
          },
        },
        failedReviewers: ["documentation"],
        // Token counts and cost only: review.json's cache hit rates are not part of the event.
        usage: {
          byAgent: countsOnly(sampleRecord.usage.byAgent),
          byModel: countsOnly(sampleRecord.usage.byModel),
          costUsd: 1,
        },
      },
    ])
    for (const { headers } of endpoint.received) {
      expect(headers.get("content-type")).toBe("application/json")
      expect(headers.get("authorization")).toBe("Bearer tracker-key")
    }
  })

  test("never sends prompt text, code, finding bodies, credentials or tokens", async () => {
    const endpoint = startEndpoint("fast")
    const tracker = createTracker({ url: endpoint.url })
    tracker.track({
      ...jobStart,
      repo: {
        id: "group/project",
        url: "https://gitlab-ci-token:glcbt-64_SECRETJOBTOKEN@gitlab.example.com/group/project.git",
      },
      prompt: "SECRET-PROMPT you are a reviewer",
      diff: "+const key = 'SECRET-CODE'",
      apiKey: "sk-SECRETSECRETSECRETSECRET",
    } as TrackerEvent)
    tracker.track({
      ...jobEndEvent(sampleRecord),
      summary: sampleRecord.summary,
      findings: { ...jobEndEvent(sampleRecord).findings, list: sampleRecord.findings },
    } as TrackerEvent)
    tracker.track({
      type: "error",
      stage: "coordinator",
      message:
        "401 from https://user:SECRETPASS@host/api with Authorization: Bearer SECRETBEARER token=SECRETQUERY and glpat-SECRETGLPAT12345678",
    })
    tracker.track({ type: "error", stage: "x", message: "y".repeat(5000) })
    await tracker.flush()

    expect(tracker.stats()).toMatchObject({ sent: 4, invalid: 0 })
    const sent = JSON.stringify(endpoint.received.map((entry) => entry.body))
    for (const secret of [
      "SECRET",
      "hunter2",
      "glpat-abcdefghijklmnop1234",
      "SELECT *",
      "prompt",
      "diff",
      "summary",
      "apiKey",
      '"list"',
    ]) {
      expect(sent).not.toContain(secret)
    }
    const start = endpoint.received.find((entry) => entry.body.type === "job-start")?.body
    expect(start?.repo).toEqual({ id: "group/project", url: "https://gitlab.example.com/group/project.git" })
    const long = endpoint.received.find((entry) => entry.body.stage === "x")?.body
    expect(String(long?.message).length).toBeLessThanOrEqual(501)
  })

  test("flush waits for the requests in flight before it resolves", async () => {
    const endpoint = startEndpoint("hang")
    const tracker = createTracker({ url: endpoint.url })
    for (const event of startN(3)) tracker.track(event)
    expect(tracker.stats()).toMatchObject({ pending: 3, sent: 0 })

    void endpoint.receivedCount(3).then(() => endpoint.release(202))
    const totals = await tracker.flush()

    expect(totals).toEqual({ sent: 3, failed: 0, dropped: 0, timedOut: 0 })
    expect(tracker.stats().pending).toBe(0)
  })

  test("flush on an idle tracker resolves at once", async () => {
    const tracker = createTracker({ url: "http://127.0.0.1:9/never-called" })
    const { value, ms } = await timedAsync(() => tracker.flush())
    expect(value).toEqual({ sent: 0, failed: 0, dropped: 0, timedOut: 0 })
    expect(ms).toBeLessThan(20)
  })
})

describe("tracker against an endpoint that hangs", () => {
  test("a review is never delayed by more than the 2 s default timeout", async () => {
    const endpoint = startEndpoint("hang")
    const tracker = createTracker({ url: endpoint.url })
    const reviewStarted = performance.now()

    const tracked = timed(() => {
      tracker.track(jobStart)
      tracker.track({ type: "break-glass", by: "alice" })
      tracker.track(jobEndEvent(sampleRecord))
    })
    expect(tracked.ms).toBeLessThan(50)
    await endpoint.receivedCount(3)
    const flushed = await timedAsync(() => tracker.flush())
    const total = performance.now() - reviewStarted

    expect(flushed.value).toEqual({ sent: 0, failed: 0, dropped: 0, timedOut: 3 })
    expect(total).toBeGreaterThanOrEqual(1900)
    expect(total).toBeLessThan(2000 + 400)
    expect(tracker.stats().pending).toBe(0)
  })

  test("flush gives up at its deadline and counts what is left as timed out", async () => {
    const endpoint = startEndpoint("hang")
    const tracker = createTracker({ url: endpoint.url, timeoutMs: 5000 })
    for (const event of startN(2)) tracker.track(event)
    await endpoint.receivedCount(2)

    const { value, ms } = await timedAsync(() => tracker.flush(150))

    expect(value).toEqual({ sent: 0, failed: 0, dropped: 0, timedOut: 2 })
    expect(ms).toBeGreaterThanOrEqual(140)
    expect(ms).toBeLessThan(150 + 200)
  })

  test("beyond 50 in flight the oldest are aborted and counted dropped; the newest 50 are delivered", async () => {
    const endpoint = startEndpoint("hang")
    const outcomes = new Map<number, string>()
    const log = recordingLog((data) => outcomes.set(data.seq as number, data.outcome as string))
    const tracker = createTracker({ url: endpoint.url, timeoutMs: 5000, log })

    const tracked = timed(() => {
      for (const event of startN(60)) tracker.track(event)
    })
    expect(tracked.ms).toBeLessThan(100)
    expect(tracker.stats()).toMatchObject({ tracked: 60, pending: 50, dropped: 10 })
    expect([...outcomes].sort(([a], [b]) => a - b)).toEqual(
      Array.from({ length: 10 }, (_, index) => [index + 1, "dropped"]),
    )

    // Bun's fetch may already have written a request it is then told to abort, so the server can
    // see up to 60; only the 50 newest are still waiting for an answer.
    await endpoint.receivedCount(50)
    endpoint.release(200)
    const totals = await tracker.flush()

    expect(totals).toEqual({ sent: 50, failed: 0, dropped: 10, timedOut: 0 })
    expect(outcomes.size).toBe(10)
  })

  test("maxPending is configurable", async () => {
    const endpoint = startEndpoint("hang")
    const tracker = createTracker({ url: endpoint.url, maxPending: 2, timeoutMs: 5000 })
    for (const event of startN(5)) tracker.track(event)
    expect(tracker.stats()).toMatchObject({ pending: 2, dropped: 3 })
    await endpoint.receivedCount(2)
    endpoint.release()
    expect(await tracker.flush()).toEqual({ sent: 2, failed: 0, dropped: 3, timedOut: 0 })
  })
})

describe("tracker against an endpoint that fails or is down", () => {
  test("a 500 is counted failed and nothing is thrown", async () => {
    const endpoint = startEndpoint("fail")
    const warnings: string[] = []
    const log = recordingLog(() => {}, warnings)
    const tracker = createTracker({ url: endpoint.url, log })
    for (const event of startN(3)) tracker.track(event)
    const { value, ms } = await timedAsync(() => tracker.flush())
    expect(value).toEqual({ sent: 0, failed: 3, dropped: 0, timedOut: 0 })
    expect(ms).toBeLessThan(1000)
    expect(endpoint.received).toHaveLength(3)
    expect(warnings).toEqual(["telemetry request not delivered"])
  })

  test("a closed port is counted failed quickly", async () => {
    const url = await closedPortUrl()
    const tracker = createTracker({ url })
    const tracked = timed(() => {
      for (const event of startN(3)) tracker.track(event)
    })
    expect(tracked.ms).toBeLessThan(50)
    const { value, ms } = await timedAsync(() => tracker.flush())
    expect(value).toEqual({ sent: 0, failed: 3, dropped: 0, timedOut: 0 })
    expect(ms).toBeLessThan(1000)
  })

  test("an invalid event or a throwing fetch never escapes track", async () => {
    const tracker = createTracker({
      url: "http://127.0.0.1:9/unused",
      fetch: () => {
        throw new Error("fetch broke")
      },
    })
    expect(() => tracker.track({ type: "job-start" } as TrackerEvent)).not.toThrow()
    expect(() => tracker.track(null as unknown as TrackerEvent)).not.toThrow()
    expect(() => tracker.track({ type: "break-glass", by: "bob" })).not.toThrow()
    expect(await tracker.flush()).toEqual({ sent: 0, failed: 1, dropped: 0, timedOut: 0 })
    expect(tracker.stats()).toMatchObject({ tracked: 3, invalid: 2 })
  })
})

describe("tracker in a job that ends", () => {
  const script = new URL("./__fixtures__/track-and-exit.ts", import.meta.url).pathname

  async function runJob(url: string, timeoutMs: number): Promise<{ totals: unknown; ms: number; code: number }> {
    const started = performance.now()
    const child = Bun.spawn([process.execPath, script, url, String(timeoutMs)], { stdout: "pipe", stderr: "inherit" })
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited])
    return { totals: JSON.parse(stdout), ms: performance.now() - started, code }
  }

  test("a job that flushes before it exits has delivered every event", async () => {
    const endpoint = startEndpoint("fast")
    const job = await runJob(endpoint.url, 2000)
    expect(job.code).toBe(0)
    expect(job.totals).toEqual({ sent: 3, failed: 0, dropped: 0, timedOut: 0 })
    expect(endpoint.received.map((entry) => entry.body.type).sort()).toEqual(["break-glass", "error", "job-start"])
  })

  test("a job whose endpoint hangs still exits within the timeout", async () => {
    const endpoint = startEndpoint("hang")
    const job = await runJob(endpoint.url, 300)
    expect(job.code).toBe(0)
    expect(job.totals).toEqual({ sent: 0, failed: 0, dropped: 0, timedOut: 3 })
    // Process start-up (~100 ms) plus the 300 ms timeout; nothing left open keeps the process alive.
    expect(job.ms).toBeLessThan(300 + 1000)
  })
})
