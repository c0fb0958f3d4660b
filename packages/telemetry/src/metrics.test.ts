import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ReviewRecord } from "@opencode-reviewer/core/judge/review-record"
import { afterEach, describe, expect, test } from "vitest"
import { sampleRecord } from "./__fixtures__/review-record"
import { createMetrics, metricNames, pushgatewayPath } from "./metrics"

// --- a small checker of the Prometheus text exposition format (version 0.0.4) ---

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const name = "[a-zA-Z_:][a-zA-Z0-9_:]*"
const label = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`
const helpLine = new RegExp(`^# HELP (${name}) (.*)$`)
const typeLine = new RegExp(`^# TYPE (${name}) (counter|gauge|histogram|summary|untyped)$`)
const sampleLine = new RegExp(
  `^(${name})(?:\\{((?:${label})(?:,${label})*,?)?\\})? ([-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][-+]?\\d+)?|[-+]?Inf|NaN)(?: -?\\d+)?$`,
)

/** Parses exposition text; every line that is neither a HELP/TYPE comment nor a valid sample is an error. */
function parseExposition(text: string): { samples: Sample[]; types: Map<string, string>; errors: string[] } {
  const help = new Set<string>()
  const types = new Map<string, string>()
  const samples: Sample[] = []
  const errors: string[] = []
  for (const line of text.split("\n")) {
    if (line === "") continue
    const helpMatch = helpLine.exec(line)
    if (helpMatch) {
      help.add(helpMatch[1]!)
      continue
    }
    const typeMatch = typeLine.exec(line)
    if (typeMatch) {
      if (types.has(typeMatch[1]!)) errors.push(`second TYPE for ${typeMatch[1]}`)
      types.set(typeMatch[1]!, typeMatch[2]!)
      continue
    }
    const sampleMatch = sampleLine.exec(line)
    if (!sampleMatch) {
      errors.push(`not a sample: ${line}`)
      continue
    }
    const sampleName = sampleMatch[1]!
    const family = [sampleName, sampleName.replace(/_(bucket|sum|count)$/, "")].find((candidate) =>
      types.has(candidate),
    )
    if (!family || !help.has(family)) errors.push(`no HELP/TYPE before ${sampleName}`)
    if (family !== sampleName && types.get(family ?? "") !== "histogram" && types.get(family ?? "") !== "summary")
      errors.push(`suffix on a ${types.get(family ?? "")}: ${sampleName}`)
    const labels: Record<string, string> = {}
    for (const pair of (sampleMatch[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\n/g, "\n").replace(/\\(["\\])/g, "$1")
    }
    const raw = sampleMatch[3]!
    samples.push({
      name: sampleName,
      labels,
      value: raw.endsWith("Inf") ? (raw.startsWith("-") ? -Infinity : Infinity) : Number(raw),
    })
  }
  return { samples, types, errors }
}

function sampleValue(samples: Sample[], sampleName: string, labels: Record<string, string> = {}): number | undefined {
  const keys = Object.keys(labels)
  return samples.find(
    (sample) =>
      sample.name === sampleName &&
      Object.keys(sample.labels).length === keys.length &&
      keys.every((key) => sample.labels[key] === labels[key]),
  )?.value
}

// --- a real local Pushgateway stand-in ---

interface Push {
  method: string
  path: string
  contentType: string | null
  body: string
}

const stops: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()))
})

function startPushgateway(mode: "ok" | "fail" | "hang" = "ok"): { url: string; pushes: Push[] } {
  const pushes: Push[] = []
  const held: Array<() => void> = []
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      pushes.push({
        method: request.method,
        path: new URL(request.url).pathname,
        contentType: request.headers.get("content-type"),
        body: await request.text(),
      })
      if (mode === "fail") return new Response("text format parsing error", { status: 400 })
      if (mode === "hang") return new Promise<Response>((resolve) => held.push(() => resolve(new Response(null))))
      return new Response(null, { status: 200 })
    },
  })
  stops.push(async () => {
    for (const release of held.splice(0)) release()
    await server.stop(true)
  })
  return { url: `http://127.0.0.1:${server.port}/`, pushes }
}

describe("metrics text", () => {
  test("parses as the exposition format and holds exactly what the review recorded", async () => {
    const metrics = createMetrics()
    metrics.record(sampleRecord)
    const { samples, types, errors } = parseExposition(await metrics.text())

    expect(errors).toEqual([])
    expect(types.get(metricNames.reviews)).toBe("counter")
    expect(types.get(metricNames.duration)).toBe("histogram")
    expect(sampleValue(samples, metricNames.reviews, { decision: "minor_issues", tier: "full" })).toBe(1)
    expect(sampleValue(samples, metricNames.findings, { reviewer: "security", severity: "warning" })).toBe(2)
    expect(sampleValue(samples, metricNames.findings, { reviewer: "code-quality", severity: "suggestion" })).toBe(1)
    expect(sampleValue(samples, metricNames.findings, { reviewer: "performance", severity: "critical" })).toBe(1)
    expect(samples.filter((sample) => sample.name === metricNames.findings)).toHaveLength(3)
    expect(sampleValue(samples, metricNames.agentTokens, { agent: "review_coordinator", kind: "input" })).toBe(12000)
    expect(sampleValue(samples, metricNames.agentTokens, { agent: "review_coordinator", kind: "output" })).toBe(1800)
    expect(sampleValue(samples, metricNames.agentTokens, { agent: "security", kind: "cache_read" })).toBe(15000)
    expect(sampleValue(samples, metricNames.agentTokens, { agent: "security", kind: "cache_write" })).toBe(1200)
    expect(
      sampleValue(samples, metricNames.modelTokens, { model: "anthropic/claude-opus-4-7", kind: "cache_read" }),
    ).toBe(40000)
    expect(sampleValue(samples, metricNames.modelTokens, { model: "anthropic/claude-sonnet-4-6", kind: "input" })).toBe(
      8000,
    )
    expect(sampleValue(samples, metricNames.agentCost, { agent: "review_coordinator" })).toBe(0.75)
    expect(sampleValue(samples, metricNames.modelCost, { model: "anthropic/claude-sonnet-4-6" })).toBe(0.25)
    expect(sampleValue(samples, `${metricNames.duration}_count`, { tier: "full" })).toBe(1)
    expect(sampleValue(samples, `${metricNames.duration}_sum`, { tier: "full" })).toBe(219)
    expect(sampleValue(samples, `${metricNames.duration}_bucket`, { tier: "full", le: "180" })).toBe(0)
    expect(sampleValue(samples, `${metricNames.duration}_bucket`, { tier: "full", le: "240" })).toBe(1)
    expect(sampleValue(samples, `${metricNames.duration}_bucket`, { tier: "full", le: "+Inf" })).toBe(1)
    expect(sampleValue(samples, `${metricNames.reviewCost}_sum`, { tier: "full" })).toBe(1)
    expect(sampleValue(samples, metricNames.breakGlass)).toBe(1)
    expect(sampleValue(samples, metricNames.injection)).toBe(0)
    expect(sampleValue(samples, metricNames.reviewerFailures, { reviewer: "documentation" })).toBe(1)
  })

  test("batches several reviews into the same series", async () => {
    const metrics = createMetrics()
    metrics.record(sampleRecord)
    metrics.record(sampleRecord)
    metrics.record({
      ...sampleRecord,
      decision: "approved",
      tier: "trivial",
      breakGlass: false,
      findings: [],
      coverage: { ...sampleRecord.coverage, failedReviewers: [] },
    })
    const { samples, errors } = parseExposition(await metrics.text())
    expect(errors).toEqual([])
    expect(sampleValue(samples, metricNames.reviews, { decision: "minor_issues", tier: "full" })).toBe(2)
    expect(sampleValue(samples, metricNames.reviews, { decision: "approved", tier: "trivial" })).toBe(1)
    expect(sampleValue(samples, metricNames.findings, { reviewer: "security", severity: "warning" })).toBe(4)
    expect(sampleValue(samples, metricNames.breakGlass)).toBe(2)
    expect(sampleValue(samples, metricNames.agentCost, { agent: "security" })).toBe(0.75)
  })

  test("escapes odd label values, adds default labels and never throws on a bad record", async () => {
    const warnings: string[] = []
    const log = {
      debug() {},
      info() {},
      error() {},
      warn: (_: object, message?: string) => void warnings.push(String(message)),
      child: () => log,
    }
    const metrics = createMetrics({ labels: { fleet: "eu-1", "bad-name": "x" }, log })
    const odd = 'agent "quoted"\\back\nline'
    metrics.record({
      ...sampleRecord,
      usage: { ...sampleRecord.usage, byAgent: { [odd]: sampleRecord.usage.byAgent.security! } },
    })
    expect(() => metrics.record({ ...sampleRecord, durationMs: -1 })).not.toThrow()
    expect(() => metrics.record(null as unknown as ReviewRecord)).not.toThrow()

    const { samples, errors } = parseExposition(await metrics.text())
    expect(errors).toEqual([])
    expect(sampleValue(samples, metricNames.agentCost, { agent: odd, fleet: "eu-1" })).toBe(0.25)
    expect(sampleValue(samples, metricNames.reviews, { decision: "minor_issues", tier: "full", fleet: "eu-1" })).toBe(1)
    expect(warnings).toEqual([
      "metrics label ignored: invalid name",
      "review record not counted",
      "review record not counted",
    ])
  })
})

describe("metrics flush", () => {
  test("pushes the text once to <pushgateway>/metrics/job/<job>", async () => {
    const gateway = startPushgateway()
    const metrics = createMetrics({ pushgatewayUrl: gateway.url })
    metrics.record(sampleRecord)
    metrics.record(sampleRecord)

    const result = await metrics.flush()

    expect(result).toMatchObject({ target: "pushgateway", ok: true, status: 200 })
    expect(gateway.pushes).toHaveLength(1)
    const [push] = gateway.pushes
    expect(push).toMatchObject({ method: "PUT", path: "/metrics/job/opencode_reviewer" })
    expect(push?.contentType).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(push?.body).toBe(await metrics.text())
    expect(result.bytes).toBe(Buffer.byteLength(push?.body ?? ""))
    expect(parseExposition(push?.body ?? "").errors).toEqual([])
  })

  test("puts the grouping key in the path, base64-encoding values with a slash", async () => {
    const gateway = startPushgateway()
    const metrics = createMetrics({
      pushgatewayUrl: gateway.url,
      job: "reviews",
      grouping: { instance: "job 123", project: "group/app" },
      method: "POST",
    })
    await metrics.flush()
    expect(gateway.pushes.map((push) => [push.method, push.path])).toEqual([
      [
        "POST",
        `/metrics/job/reviews/instance/job%20123/project@base64/${Buffer.from("group/app").toString("base64url")}`,
      ],
    ])
    expect(pushgatewayPath("http://gw:9091///", "j", { empty: "" })).toBe("http://gw:9091/metrics/job/j/empty@base64/=")
  })

  test("a down, refusing or hanging pushgateway is reported, never thrown", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() })
    const downUrl = `http://127.0.0.1:${closed.port}`
    await closed.stop(true)
    const down = await createMetrics({ pushgatewayUrl: downUrl }).flush()
    expect(down).toMatchObject({ target: "pushgateway", ok: false })
    expect(down.error).toBeTruthy()

    const refusing = startPushgateway("fail")
    const refused = await createMetrics({ pushgatewayUrl: refusing.url }).flush()
    expect(refused).toMatchObject({
      ok: false,
      status: 400,
      error: "pushgateway answered 400: text format parsing error",
    })

    const hanging = startPushgateway("hang")
    const started = performance.now()
    const hung = await createMetrics({ pushgatewayUrl: hanging.url, timeoutMs: 200 }).flush()
    expect(performance.now() - started).toBeLessThan(200 + 300)
    expect(hung).toMatchObject({ ok: false, error: "pushgateway timed out" })
  })

  test("writes the text to the file when no pushgateway is configured", async () => {
    const dir = await mkdtemp(join(tmpdir(), "telemetry-"))
    stops.push(() => rm(dir, { recursive: true, force: true }))
    const file = join(dir, "nested", "opencode-reviewer.prom")
    const metrics = createMetrics({ file })
    metrics.record(sampleRecord)

    const result = await metrics.flush()

    expect(result).toMatchObject({ target: "file", ok: true })
    const written = await readFile(file, "utf8")
    expect(written).toBe(await metrics.text())
    const { samples, errors } = parseExposition(written)
    expect(errors).toEqual([])
    expect(sampleValue(samples, metricNames.reviews, { decision: "minor_issues", tier: "full" })).toBe(1)
  })

  test("an unwritable file is reported, and no target at all does nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "telemetry-"))
    stops.push(() => rm(dir, { recursive: true, force: true }))
    await Bun.write(join(dir, "blocker"), "a file, not a directory")
    const blocked = await createMetrics({ file: join(dir, "blocker", "metrics.prom") }).flush()
    expect(blocked).toMatchObject({ target: "file", ok: false })
    expect(await createMetrics().flush()).toEqual({ target: "none", ok: true, bytes: 0 })
  })
})
