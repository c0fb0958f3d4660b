import { describe, expect, test } from "vitest"
import { parseProgressLine, progressLine } from "./progress"
import { parseSpawnMetadata } from "./spawn-metadata"
import { parseSubmission, submissionText } from "./submission"

const outcome = {
  name: "security",
  status: "done",
  error: null,
  model: "fake/security",
  modelsTried: ["fake/security"],
  attempts: 1,
  followUps: 0,
  sessionIDs: ["ses_1"],
  durationMs: 1200,
  tokens: { input: 10, output: 2, reasoning: 0, cacheRead: 5, cacheWrite: 0 },
  costUsd: 0.001,
  findings: [{ severity: "critical", file: "src/a.ts", line: 2, category: "security", title: "SQL", body: "b" }],
}
const metadata = { plan: "/w/plan.json", error: null, reviewers: [outcome], cut: 0, durationMs: 1300 }

describe("the protocol between the processes", () => {
  test("spawn_reviewers metadata reads back whole", () => {
    expect(parseSpawnMetadata(metadata)).toEqual({ ok: true, value: metadata })
  })

  test("a renamed or missing field is a loud mismatch naming the path, never a silent 0", () => {
    const { costUsd: _cost, ...renamed } = outcome
    const read = parseSpawnMetadata({ ...metadata, reviewers: [{ ...renamed, cost: 0.001 }] })
    expect(read.ok ? "read" : read.error).toBe(
      "the spawn_reviewers metadata does not match this version of opencode-reviewer: reviewers.0.costUsd: Invalid input: expected number, received undefined",
    )
    expect(parseSpawnMetadata({ reviewers: [] }).ok).toBe(false)
  })

  test("progress lines are written and read by one schema; an unknown event is refused", () => {
    const spent = {
      sessionIDs: ["ses_1"],
      tokens: { input: 10, output: 2, reasoning: 0, cacheRead: 5, cacheWrite: 0 },
      costUsd: 0.001,
    }
    const line = progressLine(
      {
        event: "reviewer-end",
        name: "security",
        status: "failed",
        error: "timeout",
        model: null,
        findings: 0,
        ...spent,
      },
      42,
    )
    expect(JSON.parse(line)).toEqual({
      at: 42,
      event: "reviewer-end",
      name: "security",
      status: "failed",
      error: "timeout",
      model: null,
      findings: 0,
      ...spent,
    })
    expect(parseProgressLine(line.trim())).toEqual({ ok: true, event: JSON.parse(line) })
    expect(parseProgressLine(JSON.stringify({ at: 1, event: "reviewer-paused", name: "x" })).ok).toBe(false)
    expect(() => progressLine({ event: "reviewer-start", name: "x", model: "m", attempt: 0 } as never, 1)).toThrow()
  })

  test("submission.json round-trips and its writer refuses a malformed review", () => {
    const submission = {
      submittedAt: "2026-12-03T00:00:00.000Z",
      review: { summary: "s", findings: [], answer: null },
      rawXml: "<review/>",
    }
    expect(parseSubmission(submissionText(submission))).toEqual({ ok: true, value: submission })
    expect(() => submissionText({ ...submission, review: { summary: "s" } } as never)).toThrow()
  })
})
