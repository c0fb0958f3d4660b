import { describe, expect, test } from "vitest"
import type { ReviewFinding, ReviewRecord } from "../judge/review-record"
import { renderFailureSummary, renderSummary, renderThread, type SummaryInput } from "./review-summary"

const finding = (over: Partial<ReviewFinding> = {}): ReviewFinding => ({
  id: "f1",
  reviewer: "security",
  severity: "critical",
  category: "security",
  file: "src/db.ts",
  line: 12,
  title: "SQL built from request input",
  body: "The query concatenates `req.query.id`.",
  status: "new",
  thread: null,
  ...over,
})

const record = (over: Partial<ReviewRecord> = {}): ReviewRecord => ({
  decision: "approved",
  tier: "lite",
  breakGlass: false,
  injectionSuspected: false,
  findings: [],
  resolved: [],
  dismissed: [],
  stillOpen: [],
  coverage: {
    reviewedFiles: 3,
    filtered: [],
    failedReviewers: [],
    unreviewed: [],
    complete: true,
    unjudgedFindings: 0,
  },
  usage: {
    byAgent: {},
    byModel: {
      "anthropic/claude": { input: 1200, output: 300, cacheRead: 0, cacheWrite: 0, costUsd: 0.42, cacheHitRate: 0 },
    },
    costUsd: 0.42,
    cacheHitRate: 0,
  },
  durationMs: 65_000,
  reasons: [],
  summary: "Small, safe change.",
  answer: null,
  notes: [],
  breakGlassIgnored: [],
  ...over,
})

const input = (over: Partial<SummaryInput> = {}): SummaryInput => ({
  record: record(),
  inline: [],
  unanchored: [],
  unreviewed: [],
  platform: { name: "GitLab", change: "merge request" },
  resolvedThreads: 0,
  breakGlass: null,
  headSha: "0123456789abcdef",
  notices: [],
  ...over,
})

describe("renderSummary", () => {
  test("a clean review says so, with decision and cost", () => {
    const text = renderSummary(input())
    expect(text).toContain("### AI code review: ✅ approved")
    expect(text).toContain("**Decision:** `approved`")
    expect(text).toContain("No findings.")
    expect(text).toContain("Every scheduled reviewer finished.")
    expect(text).toContain("Cost 0.42 USD · 1m 05s · 1,200 tokens in, 300 out, 0 cache read (0 % cache hits)")
    expect(text).toContain("head `01234567`")
  })

  test("the cost line shows the review's cache hit rate", () => {
    const entry = { input: 7_600, output: 1_234, cacheRead: 4_745, cacheWrite: 0, costUsd: 0.05, cacheHitRate: 0.384 }
    const text = renderSummary(
      input({
        record: record({ usage: { byAgent: {}, byModel: { "a/m": entry }, costUsd: 0.05, cacheHitRate: 0.384 } }),
      }),
    )
    expect(text).toContain("Cost 0.05 USD · 1m 05s · 7,600 tokens in, 1,234 out, 4,745 cache read (38 % cache hits)")
  })

  test("a partial review or unreviewed files never read as clean", () => {
    const text = renderSummary(
      input({
        record: record({
          coverage: {
            reviewedFiles: 2,
            filtered: [{ path: "bun.lock", reason: "lockfile" }],
            failedReviewers: [{ name: "performance", error: "timeout" }],
            unreviewed: [],
            complete: true,
            unjudgedFindings: 0,
          },
        }),
        unreviewed: [{ path: "big.json", reason: "too large: GitLab returned no diff content" }],
      }),
    )
    expect(text).not.toContain("No findings.\n")
    expect(text).toContain("this is not a clean result")
    expect(text).toContain("> **Partial review.** 1 reviewer failed (performance: timeout)")
    expect(text).toContain("**Not reviewed** — GitLab sent no content for 1 file:")
    expect(text).toContain("`big.json` — too large")
    expect(text).toContain("`bun.lock` — lockfile")
  })

  test("findings not anchored inline are listed with their body; inline ones by title", () => {
    const text = renderSummary(
      input({
        record: record({
          decision: "significant_concerns",
          findings: [finding(), finding({ id: "f2", severity: "warning", line: 400, title: "Slow loop" })],
        }),
        inline: [{ finding: finding(), thread: "created" }],
        unanchored: [
          {
            finding: finding({ id: "f2", severity: "warning", line: 400, title: "Slow loop", body: "Quadratic." }),
            reason: "line 400 is not in the diff",
          },
        ],
      }),
    )
    expect(text).toContain("- ⛔ **critical** `src/db.ts:12` — SQL built from request input *(new thread)*")
    expect(text).toContain("- ⚠️ **warning** `src/db.ts:400` — **Slow loop** *(security; line 400 is not in the diff)*")
    expect(text).toContain("  Quadratic.")
  })

  test("break glass, the answer and notices are stated", () => {
    const text = renderSummary(
      input({
        record: record({ breakGlass: true, answer: "Yes, the flag is off by default." }),
        breakGlass: { by: "alice", at: "2026-01-01T10:00:00Z" },
        notices: ["the merge request changed during the review"],
      }),
    )
    expect(text).toContain(
      "> **Break glass:** approved because alice asked for it (2026-01-01T10:00:00Z), whatever the review found.",
    )
    expect(text).toContain("#### Answer\n\nYes, the flag is off by default.")
    expect(text).toContain("> **Note:** the merge request changed during the review")
  })

  test("the platform's words: who sent no content, what was not reviewed", () => {
    const github = { name: "GitHub", change: "pull request" }
    const text = renderSummary(
      input({ platform: github, unreviewed: [{ path: "big.bin", reason: "GitHub sent no patch" }] }),
    )
    expect(text).toContain("**Not reviewed** — GitHub sent no content for 1 file:")
    expect(text).not.toContain("GitLab")
    expect(renderFailureSummary({ message: "boom", hint: null, headSha: "0123456789", platform: github })).toContain(
      "nothing in this pull request was reviewed",
    )
  })

  test("renderThread states severity, category, title and body", () => {
    expect(renderThread(finding())).toBe(
      "**⛔ Critical · security** — SQL built from request input\n\nThe query concatenates `req.query.id`.\n\n*raised by security · AI code review*\n",
    )
  })
})
