import { describe, expect, test } from "vitest"
import type { Finding } from "../model/finding"
import { parseSubmission } from "../protocol/submission"
import {
  buildReviewRecord,
  type PlanFacts,
  parsePlanFacts,
  ReviewRecord,
  type ReviewRecordInput,
} from "./review-record"

const sql: Finding = {
  severity: "critical",
  file: "src/db.ts",
  line: 12,
  category: "security",
  title: "SQL built from request input",
  body: "Use parameters.",
}
const loop: Finding = {
  severity: "warning",
  file: "src/list.ts",
  line: 40,
  category: "performance",
  title: "Quadratic loop over users",
  body: "Index by id.",
}
const docs: Finding = {
  severity: "suggestion",
  file: "README.md",
  line: null,
  category: "documentation",
  title: "Document the new flag",
  body: "",
}

const plan: PlanFacts = {
  tier: "full",
  files: [
    { path: "src/db.ts", noise: null },
    { path: "src/list.ts", noise: null },
    { path: "README.md", noise: null },
    { path: "bun.lock", noise: "lockfile" },
  ],
  agents: [
    { name: "review_coordinator", role: "coordinator" },
    { name: "security", role: "reviewer" },
    { name: "performance", role: "reviewer" },
    { name: "documentation", role: "reviewer" },
    { name: "code-quality", role: "reviewer" },
  ],
  injection: [],
}

// Every planned reviewer of `plan`, finished without findings.
const finishedReviewers = ["security", "performance", "documentation", "code-quality"].map((name) => ({
  name,
  status: "done",
  error: null,
  findings: [],
}))

function input(overrides: Partial<ReviewRecordInput> = {}): ReviewRecordInput {
  return {
    review: { summary: "One injection, one slow loop.", findings: [sql, loop, docs], answer: null },
    plan,
    reviewers: [
      { name: "security", status: "ok", error: null, findings: [{ ...sql, title: "Injection in query builder" }] },
      { name: "performance", status: "failed", error: "timeout", findings: [] },
      {
        name: "code-quality",
        status: "ok",
        error: null,
        findings: [{ ...loop, category: "code-quality", title: "Quadratic loop over users." }],
      },
      { name: "documentation", status: "completed", error: null, findings: [] },
    ],
    durationMs: 1234.6,
    breakGlass: false,
    ...overrides,
  }
}

describe("buildReviewRecord", () => {
  test("assembles a record that satisfies the review.json schema", () => {
    const record = buildReviewRecord(
      input({
        usage: {
          byAgent: { security: { input: 100, output: 20, cacheRead: 5, cacheWrite: 1, costUsd: 0.25 } },
          byModel: {
            "anthropic/claude-sonnet-4-6": { input: 100, output: 20, cacheRead: 5, cacheWrite: 1, costUsd: 0.25 },
            "anthropic/claude-opus-4-7": { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, costUsd: 0.5 },
          },
        },
      }),
    )
    expect(ReviewRecord.parse(record)).toEqual(record)
    expect(record).toMatchObject({
      decision: "significant_concerns",
      tier: "full",
      breakGlass: false,
      injectionSuspected: false,
      resolved: [],
      coverage: {
        reviewedFiles: 3,
        filtered: [{ path: "bun.lock", reason: "lockfile" }],
        failedReviewers: [{ name: "performance", error: "timeout" }],
        unreviewed: [],
        complete: false,
        unjudgedFindings: 0,
      },
      usage: { costUsd: 0.75 },
      durationMs: 1235,
      summary: "One injection, one slow loop.",
      answer: null,
    })
    expect(Object.keys(record).slice(0, 9)).toEqual([
      "decision",
      "tier",
      "breakGlass",
      "injectionSuspected",
      "findings",
      "resolved",
      "coverage",
      "usage",
      "durationMs",
    ])
  })

  test("numbers findings and attributes them to the reviewer that raised them", () => {
    const record = buildReviewRecord(input())
    expect(record.findings.map(({ id, reviewer, status }) => ({ id, reviewer, status }))).toEqual([
      { id: "f1", reviewer: "security", status: "new" },
      // moved to performance by the coordinator, raised by code-quality: matched by file and title
      { id: "f2", reviewer: "code-quality", status: "new" },
      // nobody raised it: the category stands in
      { id: "f3", reviewer: "documentation", status: "new" },
    ])
    expect(Object.keys(record.findings[0]!)).toEqual([
      "id",
      "reviewer",
      "severity",
      "category",
      "file",
      "line",
      "title",
      "body",
      "status",
      "thread",
    ])
  })

  test("a finding's suggestion is carried into review.json, and only where one was given", () => {
    const suggestion = { startLine: 12, lines: ["  return db.query(sql, [id])"] }
    const record = buildReviewRecord(
      input({ review: { summary: "s", findings: [{ ...sql, suggestion }, loop], answer: null } }),
    )
    expect(record.findings[0]!.suggestion).toEqual(suggestion)
    expect("suggestion" in record.findings[1]!).toBe(false)
    expect(ReviewRecord.parse(record).findings[0]!.suggestion).toEqual(suggestion)
  })

  test("a finding nobody raised, in a failed reviewer's category, is the coordinator's", () => {
    const record = buildReviewRecord(
      input({
        review: {
          summary: "s",
          findings: [{ ...loop, file: "src/elsewhere.ts", title: "Another loop" }],
          answer: null,
        },
      }),
    )
    expect(record.findings[0]!.reviewer).toBe("review_coordinator")
  })

  test("merges exact duplicates before deciding", () => {
    const record = buildReviewRecord(
      input({
        review: {
          summary: "s",
          findings: [docs, { ...docs, severity: "warning", body: "Longer body." }],
          answer: null,
        },
        reviewers: finishedReviewers,
      }),
    )
    expect(record.findings).toHaveLength(1)
    expect(record.findings[0]).toMatchObject({ severity: "warning", body: "Longer body." })
    expect(record.decision).toBe("approved_with_comments")
  })

  test("a planned reviewer with no outcome counts as failed, and coverage gaps are noted", () => {
    const record = buildReviewRecord(input({ reviewers: [] }))
    expect(record.coverage.failedReviewers).toEqual([
      { name: "security", error: "did not run" },
      { name: "performance", error: "did not run" },
      { name: "documentation", error: "did not run" },
      { name: "code-quality", error: "did not run" },
    ])
    expect(record.notes[0]).toBe(
      "coverage is partial: 4 of 4 reviewers failed (security, performance, documentation, code-quality)",
    )
  })

  test("a review nobody ran is not approved, whatever the (empty) findings say", () => {
    const record = buildReviewRecord(
      input({ reviewers: [], review: { summary: "Looks good.", findings: [], answer: null } }),
    )
    expect(record.coverage.complete).toBe(false)
    expect(record.decision).toBe("minor_issues")
    expect(record.reasons[0]).toMatch(
      /^the review is incomplete: the security review did not run; 4 of 4 planned reviewers did not finish/,
    )
  })

  test("break glass still approves an incomplete review, and the reasons say it was incomplete", () => {
    const record = buildReviewRecord(
      input({ reviewers: [], breakGlass: true, review: { summary: "s", findings: [], answer: null } }),
    )
    expect(record.decision).toBe("approved")
    expect(record.coverage.complete).toBe(false)
    expect(record.reasons.at(-1)).toMatch(/^the review is incomplete/)
  })

  test("files the provider could not give the reviewers become notes, and an unknown number past its limits makes the review incomplete", () => {
    const unread = [
      { path: "big.sql", reason: "too large: GitLab returned no diff content" },
      { path: "every changed file after the first 1,000", reason: "past GitLab's diff limits", files: null },
    ]
    const record = buildReviewRecord(
      input({
        unread,
        review: { summary: "s", findings: [], answer: null },
        reviewers: input().reviewers.map((reviewer) => ({ ...reviewer, status: "done" })),
      }),
    )
    expect(record.notes).toContain("not reviewed: big.sql (too large: GitLab returned no diff content)")
    expect(record.coverage.complete).toBe(false)
    expect(record.decision).toBe("minor_issues")
    expect(record.reasons[0]).toContain("an unknown number of changed files could not be read, against 3 reviewed")
  })

  test("findings cut from the coordinator's input are counted and noted", () => {
    const record = buildReviewRecord(input({ unjudgedFindings: 12 }))
    expect(record.coverage.unjudgedFindings).toBe(12)
    expect(record.notes).toContain(
      "12 less severe reviewer findings were left out of the coordinator's input to fit OpenCode's tool output limit and not judged",
    )
  })

  test("what the agents saw only in part (plan.json clipped) is one note each, after partial coverage, before other notes", () => {
    const clipped = [
      { what: "description", detail: "1,048,576 bytes, the first 65,536 reached the reviewers" },
      { what: "src/big.ts line 3", detail: "12,000 characters, reviewers saw the first 1,999" },
    ]
    const record = buildReviewRecord(
      input({
        plan: { ...plan, clipped },
        review: { summary: "s", findings: [{ ...docs, file: "src/context.ts" }], answer: null },
      }),
    )
    expect(record.notes).toEqual([
      "coverage is partial: 1 of 4 reviewers failed (performance)",
      "description: 1,048,576 bytes, the first 65,536 reached the reviewers",
      "src/big.ts line 3: 12,000 characters, reviewers saw the first 1,999",
      "f1 cites src/context.ts, which is not part of the change",
    ])
    expect(parsePlanFacts(JSON.stringify({ ...plan, clipped }))).toEqual({ ok: true, value: { ...plan, clipped } })
    expect(buildReviewRecord(input()).notes).not.toContainEqual(expect.stringContaining("reached the reviewers"))
  })

  test("keeps findings on files outside the diff, with a note", () => {
    const record = buildReviewRecord(
      input({ review: { summary: "s", findings: [{ ...docs, file: "src/context.ts" }], answer: "yes" } }),
    )
    expect(record.findings[0]!.file).toBe("src/context.ts")
    expect(record.notes).toContain("f1 cites src/context.ts, which is not part of the change")
    expect(record.answer).toBe("yes")
  })

  test("marks persisting findings and lists the previous ones whose code changed as resolved", () => {
    const record = buildReviewRecord(
      input({
        reviewers: input().reviewers.map((reviewer) => ({ ...reviewer, status: "done", error: null })),
        previous: [
          { id: "t1", title: "sql built from request input", file: "src/db.ts", line: 10 },
          { id: "t2", title: "Old loop", file: "src/list.ts", line: 40, category: "performance" },
          {
            id: "t3",
            title: "Fixed since",
            file: "src/gone.ts",
            line: 3,
            trace: { file: "src/gone.ts", line: null, changed: true },
          },
          { id: "t4", title: "Resolved by a user earlier", file: "src/x.ts", line: 1, resolved: true },
          {
            id: "t5",
            title: "Not reported, code untouched",
            file: "src/y.ts",
            line: 7,
            trace: { file: "src/y.ts", line: 9, changed: false },
          },
          { id: "t6", title: "Not reported, never compared", file: "src/z.ts", line: 2 },
        ],
      }),
    )
    expect(record.findings.map((finding) => [finding.status, finding.thread])).toEqual([
      ["persisting", "t1"],
      ["persisting", "t2"],
      ["new", null],
    ])
    expect(record.resolved).toEqual([{ id: "t3", title: "Fixed since", file: "src/gone.ts", line: 3 }])
    expect(record.stillOpen).toEqual([
      {
        id: "t5",
        title: "Not reported, code untouched",
        file: "src/y.ts",
        line: 7,
        reason: "not reported again, but the code at its lines did not change",
      },
      {
        id: "t6",
        title: "Not reported, never compared",
        file: "src/z.ts",
        line: 2,
        reason: "not reported again, but its code could not be compared with the reviewed head",
      },
    ])
  })

  test("a partial review resolves nothing as fixed, even where the code changed", () => {
    const record = buildReviewRecord(
      input({
        previous: [
          {
            id: "t3",
            title: "Fixed since",
            file: "src/gone.ts",
            line: 3,
            trace: { file: "src/gone.ts", line: null, changed: true },
          },
        ],
      }),
    )
    expect(record.resolved).toEqual([])
    expect(record.stillOpen[0]!.reason).toMatch(/review was partial/)
  })

  test("a reworded finding at the traced line continues its thread instead of fixing it", () => {
    const previous = [
      {
        id: "t1",
        title: "Query concatenates user input",
        file: "src/db.ts",
        line: 9,
        category: "security",
        trace: { file: "src/db.ts", line: 12, changed: false },
      },
    ]
    const record = buildReviewRecord(
      input({
        previous,
        review: {
          summary: "s",
          findings: [{ ...sql, line: 13, title: "SQL injection through the id parameter" }],
          answer: null,
        },
      }),
    )
    expect(record.findings[0]).toMatchObject({ status: "persisting", thread: "t1" })
    expect(record.resolved).toEqual([])
    expect(record.stillOpen).toEqual([])
  })

  test("a re-categorised finding with its title continues its thread", () => {
    const previous = [
      {
        id: "t1",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 9,
        category: "code-quality",
        fingerprint: "old",
        trace: { file: "src/db.ts", line: 30, changed: false },
      },
    ]
    const record = buildReviewRecord(input({ previous, review: { summary: "s", findings: [sql], answer: null } }))
    expect(record.findings[0]).toMatchObject({ status: "persisting", thread: "t1" })
  })

  test("a different problem at the same line opens its own thread and leaves the earlier one open, never fixed", () => {
    const previous = [
      {
        id: "t1",
        title: "Missing await on the query",
        file: "src/db.ts",
        line: 12,
        category: "code-quality",
        trace: { file: "src/db.ts", line: 12, changed: false },
      },
    ]
    const record = buildReviewRecord(input({ previous, review: { summary: "s", findings: [sql], answer: null } }))
    expect(record.findings[0]).toMatchObject({ status: "new", thread: null })
    expect(record.resolved).toEqual([])
    expect(record.stillOpen.map((entry) => entry.id)).toEqual(["t1"])
  })

  test("the coordinator's thread claim wins over every other match at the thread's place", () => {
    const previous = [
      { id: "t1", title: "SQL built from request input", file: "src/db.ts", line: 12 },
      { id: "t2", title: "Something else", file: "src/db.ts", line: 13 },
    ]
    const record = buildReviewRecord(
      input({ previous, review: { summary: "s", findings: [{ ...sql, thread: "t2" }], answer: null } }),
    )
    expect(record.findings[0]!.thread).toBe("t2")
  })

  test("a thread claim for a thread elsewhere is ignored and said: a new critical cannot join a dismissed thread", () => {
    const previous = [
      {
        id: "t9",
        title: "Unused import",
        file: "src/other.ts",
        line: 1,
        severity: "critical" as const,
        trace: { file: "src/other.ts", line: 1, changed: false },
        reply: { by: "erin", kind: "acknowledged" as const, trusted: true, words: "won't fix" },
      },
    ]
    const record = buildReviewRecord(
      input({ previous, review: { summary: "s", findings: [{ ...sql, thread: "t9" }], answer: null } }),
    )
    expect(record.findings.map((finding) => [finding.title, finding.thread])).toEqual([
      ["SQL built from request input", null],
    ])
    expect(record.decision).toBe("significant_concerns")
    expect(record.notes).toContain(
      'the coordinator tied "SQL built from request input" (src/db.ts:12) to the earlier thread "Unused import", which is at src/other.ts:1; the claim was ignored',
    )
  })

  test('a "won\'t fix" from someone without write access dismisses nothing: the critical stays and blocks', () => {
    const previous = [
      {
        id: "t1",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 12,
        severity: "critical" as const,
        reply: { by: "mallory", kind: "acknowledged" as const, trusted: false, words: "intended" },
      },
      {
        id: "t2",
        title: "Old idea",
        file: "src/x.ts",
        line: 1,
        trace: { file: "src/x.ts", line: 1, changed: false },
        reply: { by: "mallory", kind: "acknowledged" as const, trusted: false, words: "won't fix" },
      },
    ]
    const record = buildReviewRecord(input({ previous, reviewers: finishedReviewers }))
    expect(record.findings[0]).toMatchObject({ title: "SQL built from request input", thread: "t1" })
    expect(record.decision).toBe("significant_concerns")
    expect(record.dismissed).toEqual([])
    expect(record.stillOpen).toEqual([
      {
        id: "t2",
        title: "Old idea",
        file: "src/x.ts",
        line: 1,
        reason:
          "not reported again, but the code at its lines did not change; mallory's reply does not close it (they cannot dismiss findings)",
      },
    ])
  })

  test("a critical a person with write access dismissed is their decision, named in the reasons", () => {
    const previous = [
      {
        id: "t1",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 12,
        severity: "critical" as const,
        reply: { by: "erin", kind: "acknowledged" as const, trusted: true, words: "won't fix" },
      },
    ]
    const record = buildReviewRecord(
      input({ previous, review: { summary: "s", findings: [sql], answer: null }, reviewers: finishedReviewers }),
    )
    expect(record.findings).toEqual([])
    expect(record.decision).toBe("approved")
    expect(record.dismissed).toEqual([
      {
        id: "t1",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 12,
        reason: "dismissed by erin: won't fix",
      },
    ])
    expect(record.reasons).toContain(
      "a critical finding was dismissed by a person, not fixed: SQL built from request input (src/db.ts:12), dismissed by erin: won't fix",
    )
  })

  test("an earlier critical nobody fixed or dismissed keeps the change from approval, even when no model found it again", () => {
    const previous = [
      {
        id: "t1",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 12,
        severity: "critical" as const,
        trace: { file: "src/db.ts", line: 12, changed: false },
      },
    ]
    const clean = { summary: "Looks fine now.", findings: [], answer: null }
    const record = buildReviewRecord(input({ previous, review: clean, reviewers: finishedReviewers }))
    expect(record.stillOpen).toHaveLength(1)
    expect(record.decision).toBe("minor_issues")
    expect(record.reasons[0]).toBe(
      "an earlier critical finding is still open: SQL built from request input (src/db.ts:12), not reported again, but the code at its lines did not change: it is never approved automatically",
    )
    // Fixed (its code changed) or dismissed by someone with the access: nothing holds the approval.
    const fixed = [{ ...previous[0]!, trace: { file: "src/db.ts", line: 12, changed: true } }]
    expect(buildReviewRecord(input({ previous: fixed, review: clean, reviewers: finishedReviewers })).decision).toBe(
      "approved",
    )
  })

  test("a critical the verifier disputed is never approved over; one it could not verify still blocks", () => {
    const verification = (status: "not_confirmed" | "unverified", reason: string) => ({
      status,
      by: "m/verifier",
      reason,
      evidence: [],
      originalSeverity: "critical" as const,
    })
    const disputed = buildReviewRecord(
      input({
        review: {
          summary: "s",
          findings: [
            { ...sql, severity: "warning", verification: verification("not_confirmed", "the name is a number") },
          ],
          answer: null,
        },
      }),
    )
    expect(disputed.decision).toBe("minor_issues")
    expect(disputed.reasons[0]).toBe(
      "a critical finding disputed by the verifier: SQL built from request input (src/db.ts:12): the name is a number: it is never approved automatically",
    )
    expect(disputed.findings[0]!.verification).toMatchObject({ status: "not_confirmed", originalSeverity: "critical" })
    const unverified = buildReviewRecord(
      input({
        review: {
          summary: "s",
          findings: [{ ...sql, verification: verification("unverified", "the verifier's answer was cut off") }],
          answer: null,
        },
      }),
    )
    expect(unverified.decision).toBe("significant_concerns")
    expect(unverified.findings[0]).toMatchObject({ severity: "critical", verification: { status: "unverified" } })
  })

  test("every planned reviewer must finish: one failed, or one the spend cap skipped, is no approval", () => {
    const clean = { summary: "s", findings: [], answer: null }
    const failed = buildReviewRecord(input({ review: clean }))
    expect(failed.coverage).toMatchObject({
      complete: false,
      failedReviewers: [{ name: "performance", error: "timeout" }],
    })
    expect(failed.decision).toBe("minor_issues")
    const skipped = buildReviewRecord(
      input({
        review: clean,
        plan: { ...plan, skipped: [{ name: "release", reason: "skipped by the spend cap (maxCostUsd 0.5 USD)" }] },
        reviewers: finishedReviewers,
      }),
    )
    expect(skipped.coverage.failedReviewers).toEqual([
      { name: "release", error: "skipped by the spend cap (maxCostUsd 0.5 USD)" },
    ])
    expect(skipped.decision).toBe("minor_issues")
    expect(skipped.reasons[0]).toContain("1 of 5 planned reviewers did not finish (release: skipped by the spend cap")
    expect(buildReviewRecord(input({ review: clean, reviewers: finishedReviewers })).decision).toBe("approved")
  })

  test("a binary file is not counted as reviewed: it is listed as not reviewed, with why", () => {
    const record = buildReviewRecord(
      input({
        plan: { ...plan, files: [...plan.files, { path: "assets/logo.png", noise: null, binary: true }] },
        reviewers: finishedReviewers,
      }),
    )
    expect(record.coverage.reviewedFiles).toBe(3)
    expect(record.coverage.unreviewed).toEqual([
      { path: "assets/logo.png", reason: "binary file: there is no text diff to review" },
    ])
    expect(record.notes).toContain("not reviewed: assets/logo.png (binary file: there is no text diff to review)")
    const only = buildReviewRecord(
      input({
        plan: { ...plan, files: [{ path: "assets/logo.png", noise: null, binary: true }] },
        review: { summary: "s", findings: [], answer: null },
        reviewers: finishedReviewers,
      }),
    )
    expect(only.coverage).toMatchObject({ reviewedFiles: 0, complete: false })
    expect(only.decision).toBe("minor_issues")
  })

  test("a thread a person accepted as it is is dismissed, not fixed, and its finding leaves the review unless it got worse", () => {
    const previous = [
      {
        id: "t1",
        title: "Quadratic loop over users",
        file: "src/list.ts",
        line: 40,
        severity: "warning" as const,
        reply: { by: "alice", kind: "acknowledged" as const, trusted: true, words: "won't fix" },
      },
      {
        id: "t2",
        title: "SQL built from request input",
        file: "src/db.ts",
        line: 12,
        severity: "warning" as const,
        reply: { by: "bob", kind: "acknowledged" as const, trusted: true, words: "acknowledged" },
      },
      {
        id: "t3",
        title: "Old idea",
        file: "src/x.ts",
        line: 1,
        reply: { by: "carol", kind: "argued" as const, trusted: true },
      },
    ]
    const record = buildReviewRecord(input({ previous }))
    // The loop finding (warning, as acknowledged) is dropped; the SQL one got worse (critical now) and stays.
    expect(record.findings.map((finding) => finding.title)).toEqual([
      "SQL built from request input",
      "Document the new flag",
    ])
    expect(record.findings[0]!.thread).toBe("t2")
    expect(record.dismissed).toEqual([
      {
        id: "t1",
        title: "Quadratic loop over users",
        file: "src/list.ts",
        line: 40,
        reason: "dismissed by alice: won't fix",
      },
      { id: "t3", title: "Old idea", file: "src/x.ts", line: 1, reason: "not reported again after carol's reply" },
    ])
    expect(record.resolved).toEqual([])
  })

  test("injection suspected from plan.json unless told otherwise; break glass recorded", () => {
    const suspicious = {
      ...plan,
      injection: [
        {
          field: "description",
          kind: "boundary-tag" as const,
          tags: ["</mr_description>"],
          excerpt: "</mr_description>",
        },
      ],
    }
    const clean = input({
      plan: suspicious,
      review: { summary: "s", findings: [], answer: null },
      reviewers: finishedReviewers,
    })
    expect(buildReviewRecord(clean)).toMatchObject({ injectionSuspected: true, decision: "minor_issues" })
    expect(buildReviewRecord({ ...clean, injectionSuspected: false })).toMatchObject({
      injectionSuspected: false,
      decision: "approved",
    })
    expect(buildReviewRecord({ ...clean, breakGlass: true })).toMatchObject({ breakGlass: true, decision: "approved" })
  })
})

describe("parsing stored files", () => {
  test("parseSubmission and parsePlanFacts return results, never throw", () => {
    expect(parseSubmission("{").ok).toBe(false)
    const bad = parseSubmission(
      JSON.stringify({ submittedAt: "x", review: { summary: "", findings: [], answer: null }, rawXml: "" }),
    )
    expect(bad.ok ? "parsed" : bad.error).toContain("review.summary")
    const good = {
      submittedAt: "2026-01-01T00:00:00.000Z",
      review: { summary: "s", findings: [sql], answer: null },
      rawXml: "<review/>",
    }
    expect(parseSubmission(JSON.stringify(good))).toEqual({ ok: true, value: good })
    const facts = parsePlanFacts(JSON.stringify({ ...plan, workDir: "/tmp/x", limits: {} }))
    expect(facts).toEqual({ ok: true, value: plan })
    // A renamed field is a loud mismatch, never a silent default.
    const renamed = parsePlanFacts(
      JSON.stringify({ ...plan, files: plan.files.map(({ noise, ...rest }) => ({ ...rest, noiseReason: noise })) }),
    )
    expect(renamed.ok ? "parsed" : renamed.error).toMatch(
      /^plan\.json does not match this version of opencode-reviewer: files\.0\.noise:/,
    )
  })
})
