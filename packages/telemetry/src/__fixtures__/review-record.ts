import type { ReviewRecord } from "@opencode-reviewer/core/judge/review-record"

// A review.json as buildReviewRecord produces it for a full-tier review with break glass, one failed
// reviewer and secret-looking text in the parts telemetry must never send (bodies, summary).
export const sampleRecord: ReviewRecord = {
  decision: "minor_issues",
  tier: "full",
  breakGlass: true,
  injectionSuspected: false,
  findings: [
    finding("f1", "security", "warning", "SQL built from request input", "password=hunter2 is in the diff"),
    finding("f2", "security", "warning", "Token logged", "glpat-abcdefghijklmnop1234 printed to the job log"),
    finding("f3", "code-quality", "suggestion", "Name the magic number", "const retries = 3"),
    finding("f4", "performance", "critical", "Unbounded query", "SELECT * FROM users"),
  ],
  resolved: [],
  dismissed: [],
  stillOpen: [],
  coverage: {
    reviewedFiles: 12,
    filtered: [{ path: "bun.lock", reason: "lockfile" }],
    failedReviewers: [{ name: "documentation", error: "no output for 60 s" }],
    unreviewed: [],
    complete: true,
    unjudgedFindings: 0,
  },
  usage: {
    byAgent: {
      review_coordinator: {
        input: 12000,
        output: 1800,
        cacheRead: 40000,
        cacheWrite: 2500,
        costUsd: 0.75,
        cacheHitRate: 0.734,
      },
      security: { input: 8000, output: 900, cacheRead: 15000, cacheWrite: 1200, costUsd: 0.25, cacheHitRate: 0.62 },
    },
    byModel: {
      "anthropic/claude-opus-4-7": {
        input: 12000,
        output: 1800,
        cacheRead: 40000,
        cacheWrite: 2500,
        costUsd: 0.75,
        cacheHitRate: 0.734,
      },
      "anthropic/claude-sonnet-4-6": {
        input: 8000,
        output: 900,
        cacheRead: 15000,
        cacheWrite: 1200,
        costUsd: 0.25,
        cacheHitRate: 0.62,
      },
    },
    costUsd: 1,
    cacheHitRate: 0.699,
  },
  durationMs: 219_000,
  reasons: ["several warnings suggesting a risky pattern"],
  summary: "The change reads the prompt text: SECRET-SUMMARY",
  answer: null,
  notes: [],
  breakGlassIgnored: [],
}

function finding(
  id: string,
  reviewer: string,
  severity: "critical" | "warning" | "suggestion",
  title: string,
  body: string,
): ReviewRecord["findings"][number] {
  return {
    id,
    reviewer,
    severity,
    category: reviewer,
    file: "src/db.ts",
    line: 12,
    title,
    body,
    status: "new",
    thread: null,
  }
}
