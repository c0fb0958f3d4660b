import { join } from "node:path"
import { describe, type ReviewRecord } from "@opencode-reviewer/core"
import { createMetrics, createTracker, jobEndEvent } from "@opencode-reviewer/telemetry"
import type { Io } from "./io"
import type { Prepared } from "./prepare"

/** Telemetry around one review: events to the tracker, metrics to the Pushgateway or a file. */
export interface Observer {
  finished(record: ReviewRecord): Promise<void>
  failed(error: unknown): Promise<void>
}

/**
 * Starts observing a review. Nothing here can slow or fail it: events are fire-and-forget with a
 * 2 s timeout each, and the flush just before exit is bounded the same way.
 */
export function observeReview(prepared: Prepared, io: Io): Observer {
  const { config, plan, change, log } = prepared
  const jobId = io.env.CI_JOB_ID ?? `local-${Date.now().toString(36)}`
  const tracker = config.telemetryUrl
    ? createTracker({ url: config.telemetryUrl, jobId, log: log.child({ stage: "telemetry" }) })
    : null
  const metrics = createMetrics({
    ...(config.pushgatewayUrl
      ? { pushgatewayUrl: config.pushgatewayUrl, grouping: { instance: jobId } }
      : { file: join(prepared.outputDir, "metrics.prom") }),
    log: log.child({ stage: "metrics" }),
  })
  tracker?.track({
    type: "job-start",
    repo: {
      id: io.env.CI_PROJECT_ID ?? prepared.repoDir,
      ...(change.mergeRequest.url ? { url: change.mergeRequest.url } : {}),
    },
    mergeRequestIid: io.env.CI_MERGE_REQUEST_IID ? Number(io.env.CI_MERGE_REQUEST_IID) : null,
    tier: plan.tier,
    agents: plan.agents.map((agent) => agent.name),
  })
  const flush = async () => {
    const [sent, pushed] = await Promise.all([tracker?.flush() ?? null, metrics.flush()])
    log.debug({ telemetry: sent, metrics: pushed }, "telemetry flushed")
  }
  return {
    async finished(record) {
      if (record.breakGlass) {
        const by = record.notes.map((note) => /^break glass requested by (\S+)/.exec(note)?.[1]).find(Boolean)
        tracker?.track({ type: "break-glass", by: by ?? "unknown" })
      }
      tracker?.track(jobEndEvent(record))
      metrics.record(record)
      await flush()
    },
    async failed(error) {
      tracker?.track({ type: "error", stage: "review", message: describe(error) })
      await flush()
    },
  }
}
