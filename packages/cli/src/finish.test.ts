import type { ReviewerOutcome, SpawnMetadata } from "@opencode-reviewer/core"
import { describe, expect, test } from "vitest"
import { reviewerUsage } from "./finish"

function outcome(name: string, sessionIDs: string[], input: number): ReviewerOutcome {
  return {
    name,
    status: "done",
    error: null,
    model: "fake/reviewer",
    modelsTried: ["fake/reviewer"],
    attempts: sessionIDs.length,
    followUps: 0,
    sessionIDs,
    durationMs: 1_000,
    tokens: { input, output: 10, reasoning: 0, cacheRead: 100, cacheWrite: 0 },
    costUsd: 0.01,
    findings: [],
  }
}

function call(...reviewers: ReviewerOutcome[]): SpawnMetadata {
  return { plan: "plan.json", error: null, reviewers, cut: 0, durationMs: 1_000 }
}

// The reports finishReview hands over: every call's reviewers, then progress.jsonl's reviewer-end lines.
const reports = (calls: SpawnMetadata[], progress: ReviewerOutcome[] = []) => [
  ...calls.flatMap((entry) => entry.reviewers),
  ...progress,
]

describe("reviewerUsage", () => {
  test("counts each reviewer session once, however many spawn_reviewers calls report it", () => {
    const security = outcome("security", ["ses_1", "ses_2"], 1_000)
    const docs = outcome("documentation", ["ses_3"], 500)
    const items = reviewerUsage(reports([call(security, docs), call(security, docs)], [security, docs]))
    expect(items.map((item) => [item.agent, item.tokens.input])).toEqual([
      ["security", 1_000],
      ["documentation", 500],
    ])
  })

  test("counts reviewers run again in new sessions, and failures that never had a session", () => {
    const failed: ReviewerOutcome = { ...outcome("performance", [], 0), status: "failed", error: "no model" }
    const items = reviewerUsage(
      reports([
        call(outcome("security", ["ses_1"], 1_000), failed),
        call(outcome("security", ["ses_9"], 1_200), failed),
      ]),
    )
    expect(items.map((item) => [item.agent, item.tokens.input])).toEqual([
      ["security", 1_000],
      ["performance", 0],
      ["security", 1_200],
      ["performance", 0],
    ])
  })

  test("counts reviewers only progress.jsonl reports: an earlier attempt's, or ones no call collected", () => {
    const earlier = outcome("security", ["ses_1"], 700)
    const collected = outcome("security", ["ses_5"], 1_000)
    const items = reviewerUsage(reports([call(collected)], [earlier, collected]))
    expect(items.map((item) => [item.agent, item.tokens.input])).toEqual([
      ["security", 1_000],
      ["security", 700],
    ])
  })
})
