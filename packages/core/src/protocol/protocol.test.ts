import { describe, expect, test } from "vitest"
import { type PlanFile, PlanFile as PlanFileSchema, planFileText } from "./plan-file"
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
    const entry = {
      event: "reviewer-end",
      name: "security",
      status: "failed",
      error: "timeout",
      model: null,
      findings: 0,
      ...spent,
    } as const
    const line = progressLine(entry, 42)
    expect(JSON.parse(line)).toEqual({ at: 42, ...entry })
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

describe("plan.json", () => {
  type Entry = PlanFile["files"][number]
  const entry = (index: number): Entry => ({
    path: `src/é${index}.ts`,
    oldPath: index % 3 === 0 ? `old/${index}.ts` : `src/é${index}.ts`,
    status: index % 3 === 0 ? "renamed" : "modified",
    binary: index % 7 === 0,
    added: index,
    removed: 2 * index,
    noise: index % 5 === 0 ? "lockfile" : null,
    securitySensitive: index % 2 === 0,
    patchFile: index % 5 === 0 ? null : `diff/src__${index}.ts.patch`,
  })
  const plan = {
    tier: "full",
    reasons: ["big"],
    totals: { files: 3, added: 3, removed: 6 },
    files: Array.from({ length: 40 }, (_, index) => entry(index)),
    agents: [{ name: "review_coordinator", role: "coordinator", models: ["a/b"], timeoutMinutes: null, reason: "r" }],
    workDir: "/w",
    configFile: "/w/opencode.json",
    promptFile: "/w/coordinator-prompt.xml",
    contextFile: "/w/shared-mr-context.txt",
    // More keys than the schema's, in another order: parsing drops and orders them.
    limits: {
      descriptionBytes: 20_000,
      concurrency: 7,
      overallMinutes: 25,
      idleSeconds: 60,
      pollSeconds: 5,
      retryBudgetMinutes: 5,
      breakerFailures: 3,
      breakerCooldownMinutes: 5,
      coordinatorMinutes: 20,
      heartbeatSeconds: 30,
      extra: true,
    },
    injection: [],
    clipped: [],
    fileListFile: null,
    warnings: [],
    findings: [],
    skipped: [],
  } as unknown as PlanFile

  // File entries skip zod when they are what parsing them returns: the text must not change.
  test("is the schema's parse, whatever the entries", () => {
    const variants: PlanFile[] = [
      plan,
      { ...plan, files: [] },
      { ...plan, files: [{ ...entry(1), extra: "dropped" } as Entry, entry(2)] },
      // The same keys in another order.
      { ...plan, files: [Object.fromEntries(Object.entries(entry(1)).reverse()) as Entry] },
    ]
    for (const variant of variants)
      expect(planFileText(variant)).toBe(`${JSON.stringify(PlanFileSchema.parse(variant), null, 2)}\n`)
  })

  test("refuses an entry the schema refuses", () => {
    for (const broken of [{ added: -1 }, { added: 1.5 }, { status: "moved" }, { noise: 1 }, { binary: "no" }])
      expect(() => planFileText({ ...plan, files: [entry(1), { ...entry(2), ...broken } as Entry] })).toThrow(
        /Invalid|expected/,
      )
  })
})
