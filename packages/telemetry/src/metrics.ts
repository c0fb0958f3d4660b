import { mkdir, rename, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { ReviewRecord } from "@opencode-reviewer/core/judge/review-record"
import { type Logger, silentLogger } from "@opencode-reviewer/core/model/logger"
import type { UsageEntry } from "@opencode-reviewer/core/model/usage"
import { Counter, Histogram, Registry } from "prom-client"
import type { Fetch } from "./tracker"

/** Where the metrics of a job go: a Pushgateway when `pushgatewayUrl` is set, else `file`, else nowhere. */
export interface MetricsOptions {
  /** Base URL of a Prometheus Pushgateway; the push goes to `<url>/metrics/job/<job>[/<label>/<value>…]`. */
  pushgatewayUrl?: string
  /** File the text exposition format is written to when no Pushgateway is configured. */
  file?: string
  /** The Pushgateway job name. Default "opencode_reviewer". */
  job?: string
  /**
   * Extra Pushgateway grouping key labels. A PUT replaces the whole group, so jobs that must not
   * overwrite each other's series need a key of their own (e.g. `{ instance: <CI job id> }`).
   */
  grouping?: Record<string, string>
  /** Labels added to every series (prom-client default labels); invalid label names are ignored. */
  labels?: Record<string, string>
  /** PUT replaces the group's metrics, POST only the metric names pushed. Default PUT. */
  method?: "PUT" | "POST"
  /** Pushgateway request timeout. Default 2000. */
  timeoutMs?: number
  headers?: Record<string, string>
  fetch?: Fetch
  log?: Logger
}

/** What one flush did; errors are reported here, never thrown. */
export interface MetricsFlush {
  target: "pushgateway" | "file" | "none"
  ok: boolean
  /** The Pushgateway's HTTP status, when it answered. */
  status?: number
  error?: string
  /** Size of the text that was pushed or written. */
  bytes: number
}

/** Prometheus metrics of review jobs, batched in a private registry and flushed once before exit. */
export interface Metrics {
  /** The prom-client registry holding the series (never the global one). */
  readonly registry: Registry
  /** Adds one finished review to the counters and histograms; an invalid record is logged and skipped, never thrown. */
  record(review: ReviewRecord): void
  /** The current series in the Prometheus text exposition format. */
  text(): Promise<string>
  /** Pushes the series to the Pushgateway (one request) or writes them to the file; never throws. */
  flush(): Promise<MetricsFlush>
}

/** Metric names, for dashboards and tests. */
export const metricNames = {
  reviews: "opencode_reviewer_reviews_total",
  findings: "opencode_reviewer_findings_total",
  agentTokens: "opencode_reviewer_tokens_total",
  modelTokens: "opencode_reviewer_model_tokens_total",
  agentCost: "opencode_reviewer_cost_usd_total",
  modelCost: "opencode_reviewer_model_cost_usd_total",
  duration: "opencode_reviewer_review_duration_seconds",
  reviewCost: "opencode_reviewer_review_cost_usd",
  breakGlass: "opencode_reviewer_break_glass_total",
  injection: "opencode_reviewer_injection_suspected_total",
  reviewerFailures: "opencode_reviewer_reviewer_failures_total",
} as const

/** Creates the metrics of one job (see `Metrics`). */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const log = options.log ?? silentLogger
  const registry = new Registry()
  registry.setDefaultLabels(validLabels(options.labels ?? {}, log))
  const registers = [registry]

  const reviews = new Counter({
    name: metricNames.reviews,
    help: "Reviews finished, by decision and risk tier.",
    labelNames: ["decision", "tier"],
    registers,
  })
  const findings = new Counter({
    name: metricNames.findings,
    help: "Findings posted, by reviewer and severity.",
    labelNames: ["reviewer", "severity"],
    registers,
  })
  const agentTokens = new Counter({
    name: metricNames.agentTokens,
    help: "Tokens used, by agent and kind (input, output, cache_read, cache_write).",
    labelNames: ["agent", "kind"],
    registers,
  })
  const modelTokens = new Counter({
    name: metricNames.modelTokens,
    help: "Tokens used, by model and kind (input, output, cache_read, cache_write).",
    labelNames: ["model", "kind"],
    registers,
  })
  const agentCost = new Counter({
    name: metricNames.agentCost,
    help: "Cost in US dollars, by agent.",
    labelNames: ["agent"],
    registers,
  })
  const modelCost = new Counter({
    name: metricNames.modelCost,
    help: "Cost in US dollars, by model.",
    labelNames: ["model"],
    registers,
  })
  // Buckets from the seed system's numbers: median 3 m 39 s, P99 10 m 21 s; median $0.98, P99 $4.45.
  const duration = new Histogram({
    name: metricNames.duration,
    help: "Wall time of a review, by risk tier.",
    labelNames: ["tier"],
    buckets: [30, 60, 120, 180, 240, 300, 450, 600, 900, 1200, 1800],
    registers,
  })
  const reviewCost = new Histogram({
    name: metricNames.reviewCost,
    help: "Cost of a review in US dollars, by risk tier.",
    labelNames: ["tier"],
    buckets: [0.1, 0.25, 0.5, 1, 2, 3, 5, 10],
    registers,
  })
  const breakGlass = new Counter({
    name: metricNames.breakGlass,
    help: "Reviews approved because someone broke the glass.",
    registers,
  })
  const injection = new Counter({
    name: metricNames.injection,
    help: "Reviews of changes that carried a suspected prompt injection.",
    registers,
  })
  const reviewerFailures = new Counter({
    name: metricNames.reviewerFailures,
    help: "Reviewers that failed or did not run, by reviewer.",
    labelNames: ["reviewer"],
    registers,
  })

  function record(review: ReviewRecord): void {
    // Validate before touching a counter, so a bad record never leaves half its numbers behind.
    const parsed = ReviewRecord.safeParse(review)
    if (!parsed.success) {
      log.warn(
        { error: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") },
        "review record not counted",
      )
      return
    }
    const data = parsed.data
    try {
      reviews.inc({ decision: data.decision, tier: data.tier })
      for (const finding of data.findings) findings.inc({ reviewer: finding.reviewer, severity: finding.severity })
      for (const [agent, entry] of Object.entries(data.usage.byAgent)) {
        for (const [kind, value] of tokenKinds(entry)) agentTokens.inc({ agent, kind }, value)
        agentCost.inc({ agent }, entry.costUsd)
      }
      for (const [model, entry] of Object.entries(data.usage.byModel)) {
        for (const [kind, value] of tokenKinds(entry)) modelTokens.inc({ model, kind }, value)
        modelCost.inc({ model }, entry.costUsd)
      }
      duration.observe({ tier: data.tier }, data.durationMs / 1000)
      reviewCost.observe({ tier: data.tier }, data.usage.costUsd)
      if (data.breakGlass) breakGlass.inc()
      if (data.injectionSuspected) injection.inc()
      for (const failure of data.coverage.failedReviewers) reviewerFailures.inc({ reviewer: failure.name })
    } catch (error) {
      log.warn({ error: error instanceof Error ? error.message : String(error) }, "review record not fully counted")
    }
  }

  async function flush(): Promise<MetricsFlush> {
    const target = options.pushgatewayUrl ? "pushgateway" : options.file ? "file" : "none"
    if (target === "none") return { target, ok: true, bytes: 0 }
    let text: string
    try {
      text = await registry.metrics()
    } catch (error) {
      return { target, ok: false, error: error instanceof Error ? error.message : String(error), bytes: 0 }
    }
    const bytes = Buffer.byteLength(text)
    if (options.pushgatewayUrl) return push(text, bytes, options.pushgatewayUrl)
    return write(text, bytes, options.file ?? "")
  }

  async function push(text: string, bytes: number, base: string): Promise<MetricsFlush> {
    const controller = new AbortController()
    const timer = setTimeout(
      () => controller.abort(new Error("pushgateway timed out")),
      Math.max(1, options.timeoutMs ?? 2000),
    )
    try {
      const url = pushgatewayPath(base, options.job ?? "opencode_reviewer", options.grouping ?? {})
      const response = await (options.fetch ?? fetch)(url, {
        method: options.method ?? "PUT",
        headers: { ...options.headers, "content-type": registry.contentType },
        body: text,
        signal: controller.signal,
      })
      const answer = await response.text().catch(() => "")
      if (response.ok) return { target: "pushgateway", ok: true, status: response.status, bytes }
      const error = `pushgateway answered ${response.status}${answer ? `: ${answer.slice(0, 200)}` : ""}`
      log.warn({ status: response.status }, "metrics push failed")
      return { target: "pushgateway", ok: false, status: response.status, error, bytes }
    } catch (error) {
      const message = controller.signal.aborted
        ? "pushgateway timed out"
        : error instanceof Error
          ? error.message
          : String(error)
      log.warn({ error: message }, "metrics push failed")
      return { target: "pushgateway", ok: false, error: message, bytes }
    } finally {
      clearTimeout(timer)
    }
  }

  async function write(text: string, bytes: number, file: string): Promise<MetricsFlush> {
    try {
      await mkdir(dirname(file), { recursive: true })
      // Write then rename, so a scraper (e.g. node_exporter's textfile collector) never reads half a file.
      const partial = `${file}.${process.pid}.partial`
      await writeFile(partial, text)
      await rename(partial, file)
      return { target: "file", ok: true, bytes }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      log.warn({ error: message, file }, "metrics file not written")
      return { target: "file", ok: false, error: message, bytes }
    }
  }

  return { registry, record, text: () => registry.metrics(), flush }
}

/** The Pushgateway URL of a job and grouping key; values with "/" or empty ones use the `@base64` form. */
export function pushgatewayPath(base: string, job: string, grouping: Record<string, string>): string {
  const segments = [["job", job] as const, ...Object.entries(grouping)].map(([name, value]) => segment(name, value))
  return `${base.replace(/\/+$/, "")}/metrics/${segments.join("/")}`
}

function segment(name: string, value: string): string {
  if (value === "") return `${name}@base64/=`
  if (!value.includes("/")) return `${name}/${encodeURIComponent(value)}`
  return `${name}@base64/${Buffer.from(value).toString("base64url")}`
}

function tokenKinds(entry: UsageEntry): Array<[string, number]> {
  return [
    ["input", entry.input],
    ["output", entry.output],
    ["cache_read", entry.cacheRead],
    ["cache_write", entry.cacheWrite],
  ]
}

const labelName = /^[a-zA-Z_][a-zA-Z0-9_]*$/

function validLabels(labels: Record<string, string>, log: Logger): Record<string, string> {
  const valid: Record<string, string> = {}
  for (const [name, value] of Object.entries(labels)) {
    if (labelName.test(name) && !name.startsWith("__")) valid[name] = String(value)
    else log.warn({ label: name }, "metrics label ignored: invalid name")
  }
  return valid
}
