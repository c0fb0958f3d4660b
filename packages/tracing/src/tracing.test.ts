import type { CoordinatorResult, ReviewRecord } from "@opencode-reviewer/core"
import { afterEach, describe, expect, test } from "vitest"
import { Attr } from "./attributes"
import { otelPassThrough } from "./pass-through"
import { createTracing } from "./tracing"

/** One span as the OTLP/HTTP JSON body carries it, attributes flattened. */
interface ExportedSpan {
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
  status: { code?: number; message?: string }
  attributes: Record<string, unknown>
  events: { name: string }[]
  startMs: number
  endMs: number
}

/** A real OTLP/HTTP receiver on 127.0.0.1: records every POST /v1/traces. */
function startReceiver(mode: "ok" | "hang" = "ok") {
  const requests: { path: string; contentType: string | null; body: unknown }[] = []
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname
      const contentType = request.headers.get("content-type")
      const raw = await request.text()
      requests.push({ path, contentType, body: contentType?.includes("json") ? JSON.parse(raw) : raw })
      if (mode === "hang") return new Promise<Response>(() => {})
      return Response.json({})
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1/traces`,
    requests,
    spans: () => requests.flatMap((request) => spansOf(request.body)),
    stop: () => server.stop(true),
  }
}

function spansOf(body: unknown): ExportedSpan[] {
  const resourceSpans =
    (body as { resourceSpans?: { scopeSpans?: { spans?: Record<string, any>[] }[] }[] }).resourceSpans ?? []
  return resourceSpans.flatMap((resource) =>
    (resource.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? "",
        name: span.name,
        status: span.status ?? {},
        events: span.events ?? [],
        startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
        endMs: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
        attributes: Object.fromEntries(
          (span.attributes ?? []).map((entry: { key: string; value: Record<string, unknown> }) => [
            entry.key,
            attributeValue(entry.value),
          ]),
        ),
      })),
    ),
  )
}

function attributeValue(value: Record<string, any>): unknown {
  if ("stringValue" in value) return value.stringValue
  if ("boolValue" in value) return value.boolValue
  if ("intValue" in value) return Number(value.intValue)
  if ("doubleValue" in value) return Number(value.doubleValue)
  if ("arrayValue" in value) return (value.arrayValue.values ?? []).map(attributeValue)
  return undefined
}

const receivers: { stop: () => void }[] = []
afterEach(() => {
  for (const receiver of receivers.splice(0)) receiver.stop()
})

function receiver(mode: "ok" | "hang" = "ok") {
  const started = startReceiver(mode)
  receivers.push(started)
  return started
}

const result: CoordinatorResult = {
  ok: true,
  attempts: [],
  steps: [
    {
      agent: "review_coordinator",
      model: "anthropic/claude-sonnet-4",
      input: 1200,
      output: 340,
      reasoning: 12,
      cacheRead: 800,
      cacheWrite: 64,
      costUsd: 0.0123,
    },
    {
      agent: "review_coordinator",
      model: "anthropic/claude-sonnet-4",
      input: 2100,
      output: 510,
      reasoning: 0,
      cacheRead: 1900,
      cacheWrite: 0,
      costUsd: 0.0211,
    },
  ],
  toolUses: [
    { tool: "read", status: "completed", input: {}, output: "", metadata: {} },
    {
      tool: "spawn_reviewers",
      status: "completed",
      input: {},
      output: "<reviewer_results/>",
      // The runtime's SpawnMetadata, as the protocol defines it.
      metadata: {
        plan: "/work/plan.json",
        error: null,
        cut: 0,
        durationMs: 4300,
        reviewers: [
          {
            name: "security",
            status: "done",
            error: null,
            model: "openai/gpt-5",
            modelsTried: ["openai/gpt-5"],
            attempts: 1,
            followUps: 0,
            sessionIDs: ["ses_1"],
            durationMs: 4200,
            tokens: { input: 5000, output: 700, reasoning: 90, cacheRead: 3000, cacheWrite: 100 },
            costUsd: 0.05,
            findings: [
              { severity: "warning", file: "src/a.ts", line: 3, category: "security", title: "a", body: "b" },
              { severity: "suggestion", file: "src/a.ts", line: 9, category: "security", title: "b", body: "c" },
            ],
          },
          {
            name: "performance",
            status: "failed",
            error: "provider overloaded",
            model: null,
            modelsTried: [],
            attempts: 0,
            followUps: 0,
            sessionIDs: [],
            durationMs: 900,
            tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
            costUsd: 0,
            findings: [],
          },
        ],
      },
    },
  ],
  finalText: "",
  badLines: 0,
}

const record: ReviewRecord = {
  decision: "minor_issues",
  tier: "full",
  breakGlass: false,
  injectionSuspected: false,
  findings: [
    {
      id: "f1",
      reviewer: "security",
      severity: "warning",
      category: "security",
      file: "src/a.ts",
      line: 3,
      title: "a",
      body: "b",
      status: "new",
      thread: null,
    },
  ],
  resolved: [],
  dismissed: [],
  stillOpen: [],
  coverage: {
    reviewedFiles: 3,
    filtered: [],
    failedReviewers: [{ name: "performance", error: "provider overloaded" }],
    unreviewed: [],
    complete: true,
    unjudgedFindings: 0,
  },
  usage: { byAgent: {}, byModel: {}, costUsd: 0.0834, cacheHitRate: 0 },
  durationMs: 10_000,
  reasons: [],
  summary: "",
  answer: null,
  notes: [],
  breakGlassIgnored: [],
}

describe("createTracing", () => {
  test("nested spans arrive over OTLP/HTTP JSON with the right parents", async () => {
    const otlp = receiver()
    const tracing = createTracing({ endpoint: otlp.url, serviceName: "reviewer-test" })
    expect(tracing.enabled).toBe(true)

    const value = await tracing.span("review", { "vcs.change.id": "42", empty: null }, async () => {
      await tracing.span("configure", {}, async () => {
        await Promise.all([
          tracing.span("plugin reviewer-config", { plugin: "reviewer-config" }, async () => 1),
          tracing.span("plugin other", {}, async () => 2),
        ])
      })
      return "done"
    })
    await tracing.shutdown()

    expect(value).toBe("done")
    expect(otlp.requests.length).toBeGreaterThan(0)
    expect(
      otlp.requests.every(
        (request) => request.path === "/v1/traces" && request.contentType?.includes("application/json"),
      ),
    ).toBe(true)
    const body = otlp.requests[0]!.body as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue: string } }[] } }[]
    }
    expect(body.resourceSpans[0]!.resource.attributes).toContainEqual({
      key: "service.name",
      value: { stringValue: "reviewer-test" },
    })

    const spans = otlp.spans()
    const named = (name: string) => spans.find((span) => span.name === name)!
    expect(spans.map((span) => span.name).sort()).toEqual([
      "configure",
      "plugin other",
      "plugin reviewer-config",
      "review",
    ])
    expect(named("review").parentSpanId).toBe("")
    expect(named("review").attributes).toEqual({ "vcs.change.id": "42" })
    expect(named("configure").parentSpanId).toBe(named("review").spanId)
    expect(named("plugin reviewer-config").parentSpanId).toBe(named("configure").spanId)
    expect(named("plugin other").parentSpanId).toBe(named("configure").spanId)
    expect(named("plugin reviewer-config").attributes).toEqual({ plugin: "reviewer-config" })
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1)
  })

  test("recordReview: one span per coordinator step and per reviewer, under the review span", async () => {
    const otlp = receiver()
    const tracing = createTracing({ endpoint: otlp.url })
    const startedAt = Date.now() - 10_000
    const endedAt = Date.now()
    await tracing.span("review", {}, async () => {
      tracing.recordReview({ result, record, startedAt, endedAt })
    })
    await tracing.shutdown()

    const spans = otlp.spans()
    const review = spans.find((span) => span.name === "review")!
    expect(review.attributes).toMatchObject({
      [Attr.decision]: "minor_issues",
      [Attr.tier]: "full",
      [Attr.findings]: 1,
      [Attr.failedReviewers]: ["performance"],
      [Attr.reviewCostUsd]: 0.0834,
      [Attr.steps]: 2,
    })

    const steps = spans.filter((span) => span.name === "chat anthropic/claude-sonnet-4")
    expect(steps).toHaveLength(2)
    steps.sort((a, b) => Number(a.attributes[Attr.step]) - Number(b.attributes[Attr.step]))
    steps.forEach((span, index) => {
      const step = result.steps[index]!
      expect(span.parentSpanId).toBe(review.spanId)
      expect(span.attributes).toMatchObject({
        [Attr.requestModel]: step.model,
        [Attr.provider]: "anthropic",
        [Attr.agent]: step.agent,
        [Attr.inputTokens]: step.input,
        [Attr.outputTokens]: step.output,
        [Attr.reasoningTokens]: step.reasoning,
        [Attr.cacheReadTokens]: step.cacheRead,
        [Attr.cacheWriteTokens]: step.cacheWrite,
        [Attr.costUsd]: step.costUsd,
      })
      expect(span.startMs).toBeGreaterThanOrEqual(startedAt - 1)
      expect(span.endMs).toBeLessThanOrEqual(endedAt + 1)
    })

    const security = spans.find((span) => span.name === "reviewer security")!
    expect(security.parentSpanId).toBe(review.spanId)
    expect(security.attributes).toMatchObject({
      [Attr.reviewerStatus]: "done",
      [Attr.requestModel]: "openai/gpt-5",
      [Attr.inputTokens]: 5000,
      [Attr.outputTokens]: 700,
      [Attr.reasoningTokens]: 90,
      [Attr.cacheReadTokens]: 3000,
      [Attr.cacheWriteTokens]: 100,
      [Attr.costUsd]: 0.05,
      [Attr.reviewerFindings]: 2,
      [Attr.reviewerDurationMs]: 4200,
    })
    expect(security.status.code ?? 0).not.toBe(2)
    expect(security.endMs - security.startMs).toBeGreaterThanOrEqual(4199)

    const performance = spans.find((span) => span.name === "reviewer performance")!
    expect(performance.parentSpanId).toBe(review.spanId)
    expect(performance.attributes).toMatchObject({
      [Attr.reviewerStatus]: "failed",
      [Attr.reviewerError]: "provider overloaded",
      [Attr.costUsd]: 0,
      [Attr.reviewerFindings]: 0,
    })
    expect(performance.attributes[Attr.requestModel]).toBeUndefined()
    expect(performance.status).toMatchObject({ code: 2, message: "provider overloaded" })
  })

  test("recordReview outside any span makes its own review span over startedAt–endedAt", async () => {
    const otlp = receiver()
    const tracing = createTracing({ endpoint: otlp.url })
    const startedAt = 1_700_000_000_000
    tracing.recordReview({ result, record, startedAt, endedAt: startedAt + 10_000 })
    tracing.recordReview({
      result: {
        ...result,
        toolUses: [
          { tool: "spawn_reviewers", status: "error", input: null, output: "", metadata: { reviewers: "junk" } },
        ],
      },
      record,
      startedAt,
      endedAt: startedAt,
    })
    await tracing.shutdown()

    const reviews = otlp.spans().filter((span) => span.name === "review")
    expect(reviews).toHaveLength(2)
    expect(reviews.map((span) => [span.startMs, span.endMs])).toContainEqual([startedAt, startedAt + 10_000])
    expect(otlp.spans()).toHaveLength(2 + 4 + 2)
    for (const span of otlp.spans().filter((span) => span.name !== "review"))
      expect(reviews.map((review) => review.spanId)).toContain(span.parentSpanId)
  })

  test("an error inside span marks the span and is rethrown", async () => {
    const otlp = receiver()
    const tracing = createTracing({ endpoint: otlp.url })
    const failure = new Error("plugin exploded")
    await expect(
      tracing.span("review", {}, () => tracing.span("plugin broken", {}, async () => Promise.reject(failure))),
    ).rejects.toBe(failure)
    await tracing.shutdown()

    const spans = otlp.spans()
    for (const name of ["review", "plugin broken"]) {
      const span = spans.find((entry) => entry.name === name)!
      expect(span.status).toMatchObject({ code: 2, message: "plugin exploded" })
      expect(span.events.map((event) => event.name)).toContain("exception")
    }
  })

  test("no endpoint: disabled, fn still runs, nothing is sent", async () => {
    const otlp = receiver()
    const tracing = createTracing({})
    expect(tracing.enabled).toBe(false)
    expect(await tracing.span("review", {}, async () => tracing.span("configure", {}, async () => 7))).toBe(7)
    await expect(tracing.span("x", {}, async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom")
    tracing.recordReview({ result, record, startedAt: 0, endedAt: 1 })
    await tracing.shutdown()
    expect(otlp.requests).toHaveLength(0)
  })

  test("a receiver that is down: shutdown is bounded and does not throw", async () => {
    const down = startReceiver()
    const url = down.url
    down.stop()
    const tracing = createTracing({ endpoint: url, timeoutMs: 500 })
    await tracing.span("review", {}, async () => "x")
    const started = performance.now()
    await expect(tracing.shutdown()).resolves.toBeUndefined()
    expect(performance.now() - started).toBeLessThan(500 + 1000)
  })

  test("a receiver that hangs: shutdown is bounded and does not throw", async () => {
    const otlp = receiver("hang")
    const tracing = createTracing({ endpoint: otlp.url, timeoutMs: 500 })
    await tracing.span("review", {}, async () => "x")
    const started = performance.now()
    await expect(tracing.shutdown()).resolves.toBeUndefined()
    expect(performance.now() - started).toBeLessThan(500 + 1000)
    expect(otlp.requests.length).toBeGreaterThan(0)
    // A second shutdown is the same bounded promise.
    await expect(tracing.shutdown()).resolves.toBeUndefined()
  })

  test("headers reach the receiver", async () => {
    const seen: string[] = []
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request) {
        seen.push(request.headers.get("x-api-key") ?? "")
        return Response.json({})
      },
    })
    receivers.push({ stop: () => server.stop(true) })
    const tracing = createTracing({
      endpoint: `http://127.0.0.1:${server.port}/v1/traces`,
      headers: { "x-api-key": "k1" },
    })
    await tracing.span("review", {}, async () => {})
    await tracing.shutdown()
    expect(seen).toEqual(["k1"])
  })
})

describe("otelPassThrough", () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
    OTEL_SERVICE_NAME: "oc",
    OTEL_UNSET: undefined,
    PATH: "/bin",
    GITLAB_TOKEN: "secret",
  }

  test("passes only OTEL_* and only when wanted", () => {
    expect(otelPassThrough(env, true)).toEqual({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_SERVICE_NAME: "oc",
    })
    expect(otelPassThrough(env, false)).toEqual({})
  })
})
