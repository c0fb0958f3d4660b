import { AsyncLocalStorage } from "node:async_hooks"
import {
  type CoordinatorResult,
  parseSpawnMetadata,
  providerOf,
  type ReviewRecord,
  type StepUsage,
  type TokenCounts,
  tools,
} from "@opencode-reviewer/core"
import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { resourceFromAttributes } from "@opentelemetry/resources"
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace"
import { Attr } from "./attributes"

/** Where and how to export spans; without `endpoint` tracing is off and nothing touches the network. */
export interface TracingOptions {
  /** OTLP/HTTP traces URL, e.g. `http://127.0.0.1:4318/v1/traces`. */
  endpoint?: string
  /** `service.name` of the resource (default "opencode-reviewer"). */
  serviceName?: string
  /** Extra request headers, e.g. an API key of the collector. */
  headers?: Record<string, string>
  /** Bound of one export request and of `shutdown` (default 2000). */
  timeoutMs?: number
}

/** Attribute values a caller may pass; `null`/`undefined` entries are dropped. */
export type SpanAttributes = Record<string, string | number | boolean | readonly string[] | null | undefined>

/** Everything `recordReview` turns into spans after the review has run. */
export interface ReviewTrace {
  result: CoordinatorResult
  record: ReviewRecord
  /** Epoch ms. */
  startedAt: number
  /** Epoch ms. */
  endedAt: number
}

export interface Tracing {
  /** False without an endpoint: `span` only runs `fn`, `recordReview` does nothing. */
  enabled: boolean
  /** Runs `fn` in a child span of the current one; an error marks the span and is rethrown. */
  span<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>
  /**
   * After the fact: one span per model step of the coordinator and one per reviewer (from the
   * `spawn_reviewers` metadata), under the current span, or under a new "review" span spanning
   * `startedAt`–`endedAt` when called outside any span. Never throws.
   */
  recordReview(input: ReviewTrace): void
  /** Ends pending spans and flushes them, bounded by `timeoutMs` plus a little; never throws. */
  shutdown(): Promise<void>
}

/** What one reviewer's entry of the `spawn_reviewers` metadata says, as far as it can be read. */
export interface ReviewerTrace {
  name: string
  status: string
  error: string | null
  model: string | null
  durationMs: number
  tokens: TokenCounts
  costUsd: number
  findings: number
}

const finished = new Set(["ok", "done", "completed"])

/** Creates the tracer; OpenTelemetry's global API is left alone (no global provider, no context manager). */
export function createTracing(options: TracingOptions = {}): Tracing {
  if (!options.endpoint) return disabled()

  const timeoutMs = options.timeoutMs ?? 2000
  const exporter = new OTLPTraceExporter({
    url: options.endpoint,
    headers: { ...options.headers },
    timeoutMillis: timeoutMs,
  })
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName ?? "opencode-reviewer" }),
    spanProcessors: [new BatchSpanProcessor({ exporter, exportTimeoutMillis: timeoutMs })],
  })
  const tracer = provider.getTracer("@opencode-reviewer/tracing")
  const current = new AsyncLocalStorage<Context>()
  let closing: Promise<void> | null = null

  return {
    enabled: true,
    async span(name, attributes, fn) {
      const parent = current.getStore() ?? ROOT_CONTEXT
      const span = tracer.startSpan(name, { attributes: clean(attributes) }, parent)
      try {
        return await current.run(trace.setSpan(parent, span), fn)
      } catch (error) {
        markError(span, error)
        throw error
      } finally {
        span.end()
      }
    },
    recordReview(input) {
      try {
        recordReview(tracer, current.getStore(), input)
      } catch {
        // Tracing never fails a review.
      }
    },
    shutdown() {
      closing ??= bounded(provider.shutdown(), timeoutMs + 250)
      return closing
    },
  }
}

/** The spans of a finished review; exported for callers that hold their own tracer. */
export function recordReview(tracer: Tracer, context: Context | undefined, input: ReviewTrace): void {
  const { result, record, startedAt, endedAt } = input
  const end = Math.max(startedAt, endedAt)
  const summary: Attributes = {
    [Attr.decision]: record.decision,
    [Attr.tier]: record.tier,
    [Attr.findings]: record.findings.length,
    [Attr.failedReviewers]: record.coverage.failedReviewers.map((reviewer) => reviewer.name),
    [Attr.reviewCostUsd]: record.usage.costUsd,
    [Attr.reviewDurationMs]: record.durationMs,
    [Attr.steps]: result.steps.length,
    [Attr.coordinatorOk]: result.ok,
  }

  const active = context ? trace.getSpan(context) : undefined
  const own = active?.isRecording()
    ? null
    : tracer.startSpan("review", { startTime: startedAt, attributes: summary }, context ?? ROOT_CONTEXT)
  const review = own ?? active!
  if (!own) review.setAttributes(summary)
  const parent = trace.setSpan(context ?? ROOT_CONTEXT, review)

  // Steps carry no timestamps: they get equal consecutive slices of the run, in order.
  const slice = result.steps.length > 0 ? (end - startedAt) / result.steps.length : 0
  result.steps.forEach((step, index) => {
    const span = tracer.startSpan(
      `chat ${step.model}`,
      { startTime: startedAt + slice * index, attributes: stepAttributes(step, index) },
      parent,
    )
    span.end(startedAt + slice * (index + 1))
  })

  for (const reviewer of reviewerTraces(result)) {
    const span = tracer.startSpan(
      `reviewer ${reviewer.name}`,
      { startTime: startedAt, attributes: reviewerAttributes(reviewer) },
      parent,
    )
    if (!finished.has(reviewer.status))
      span.setStatus({ code: SpanStatusCode.ERROR, message: reviewer.error ?? reviewer.status })
    span.end(Math.min(end, startedAt + reviewer.durationMs))
  }

  own?.end(end)
}

/**
 * The reviewers of every `spawn_reviewers` call, from the tool metadata as the protocol defines it;
 * a call whose metadata does not match is skipped (tracing never fails a review; the CLI reports it).
 */
export function reviewerTraces(result: Pick<CoordinatorResult, "toolUses">): ReviewerTrace[] {
  return result.toolUses
    .filter((use) => use.tool === tools.spawnReviewers)
    .flatMap((use) => {
      const parsed = parseSpawnMetadata(use.metadata)
      return parsed.ok ? parsed.value.reviewers : []
    })
    .map((outcome) => ({
      name: outcome.name,
      status: outcome.status,
      error: outcome.error,
      model: outcome.model,
      durationMs: outcome.durationMs,
      tokens: outcome.tokens,
      costUsd: outcome.costUsd,
      findings: outcome.findings.length,
    }))
}

function stepAttributes(step: StepUsage, index: number): Attributes {
  return {
    [Attr.operation]: "chat",
    [Attr.requestModel]: step.model,
    ...provider(step.model),
    [Attr.agent]: step.agent,
    [Attr.step]: index,
    [Attr.inputTokens]: step.input,
    [Attr.outputTokens]: step.output,
    [Attr.reasoningTokens]: step.reasoning,
    [Attr.cacheReadTokens]: step.cacheRead,
    [Attr.cacheWriteTokens]: step.cacheWrite,
    [Attr.costUsd]: step.costUsd,
    [Attr.timing]: "approximate",
  }
}

function reviewerAttributes(reviewer: ReviewerTrace): Attributes {
  return clean({
    [Attr.operation]: "invoke_agent",
    [Attr.agent]: reviewer.name,
    [Attr.reviewer]: reviewer.name,
    [Attr.reviewerStatus]: reviewer.status,
    [Attr.reviewerError]: reviewer.error,
    [Attr.requestModel]: reviewer.model,
    ...(reviewer.model ? provider(reviewer.model) : {}),
    [Attr.reviewerDurationMs]: reviewer.durationMs,
    [Attr.inputTokens]: reviewer.tokens.input,
    [Attr.outputTokens]: reviewer.tokens.output,
    [Attr.reasoningTokens]: reviewer.tokens.reasoning,
    [Attr.cacheReadTokens]: reviewer.tokens.cacheRead,
    [Attr.cacheWriteTokens]: reviewer.tokens.cacheWrite,
    [Attr.costUsd]: reviewer.costUsd,
    [Attr.reviewerFindings]: reviewer.findings,
    [Attr.timing]: "approximate",
  })
}

function disabled(): Tracing {
  return {
    enabled: false,
    span: (_name, _attributes, fn) => fn(),
    recordReview: () => {},
    shutdown: async () => {},
  }
}

/** "anthropic/claude-sonnet-4" → provider "anthropic"; a bare model name has none. */
function provider(model: string): Attributes {
  const id = providerOf(model)
  return id ? { [Attr.provider]: id } : {}
}

function markError(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error)
  span.recordException(error instanceof Error ? error : message)
  span.setStatus({ code: SpanStatusCode.ERROR, message })
}

/** Resolves when `work` settles or after `ms`, whichever comes first; never rejects. */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms)
    timer.unref?.()
  })
  await Promise.race([
    work.then(
      () => {},
      () => {},
    ),
    expired,
  ])
  clearTimeout(timer)
}

function clean(attributes: SpanAttributes): Attributes {
  const kept: Attributes = {}
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined) continue
    kept[name] = Array.isArray(value) ? [...value] : (value as string | number | boolean)
  }
  return kept
}
