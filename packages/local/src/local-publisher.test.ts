import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildReviewRecord, type PlanFacts, ReviewRecord, type ReviewRecordInput } from "@opencode-reviewer/core"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { publishLocal } from "./local-publisher"

const plan: PlanFacts = {
  tier: "full",
  files: [
    { path: "src/db.ts", noise: null },
    { path: "src/list.ts", noise: null },
    { path: "bun.lock", noise: "lockfile" },
  ],
  agents: [
    { name: "review_coordinator", role: "coordinator" },
    { name: "security", role: "reviewer" },
    { name: "performance", role: "reviewer" },
  ],
}

const base: ReviewRecordInput = {
  review: {
    summary: "Adds a user lookup; the query is built from request input.",
    findings: [
      {
        severity: "suggestion",
        file: "src/list.ts",
        line: null,
        category: "code-quality",
        title: "Name the magic number",
        body: "Use a constant.",
      },
      {
        severity: "critical",
        file: "src/db.ts",
        line: 12,
        category: "security",
        title: "SQL built from request input",
        body: "Use a parameterised query.",
      },
      {
        severity: "warning",
        file: "src/list.ts",
        line: 40,
        category: "performance",
        title: "Quadratic loop",
        body: "Index users by id\nbefore the loop.",
      },
    ],
    answer: "Yes, the migration is reversible.",
  },
  plan,
  reviewers: [
    { name: "security", status: "ok", error: null, findings: [] },
    { name: "performance", status: "ok", error: null, findings: [] },
  ],
  usage: {
    byAgent: {},
    byModel: {
      "anthropic/claude-opus-4-7": { input: 12000, output: 800, cacheRead: 9000, cacheWrite: 100, costUsd: 0.4321 },
    },
  },
  durationMs: 219_000,
  breakGlass: false,
}

let outputDir: string
let printed: string

beforeEach(async () => {
  outputDir = await mkdtemp(join(tmpdir(), "local-publisher-"))
  printed = ""
})

afterEach(async () => {
  await rm(outputDir, { recursive: true, force: true })
})

async function publish(input: ReviewRecordInput) {
  const record = buildReviewRecord(input)
  const result = await publishLocal(record, { outputDir: join(outputDir, "out"), write: (text) => (printed += text) })
  const markdown = await readFile(join(outputDir, "out", "review.md"), "utf8")
  return { record, result, markdown }
}

describe("publishLocal", () => {
  test("writes review.json as the record, pretty-printed", async () => {
    const { record, result } = await publish(base)
    expect(result.files).toEqual([join(outputDir, "out", "review.json"), join(outputDir, "out", "review.md")])
    const text = await readFile(result.files[0]!, "utf8")
    expect(text).toBe(JSON.stringify(record, null, 2) + "\n")
    expect(ReviewRecord.parse(JSON.parse(text))).toEqual(record)
  })

  test("writes a markdown report: decision, summary, answer, findings grouped by severity, coverage, cost", async () => {
    const { markdown } = await publish(base)
    expect(markdown).toContain("# Code review: significant concerns")
    expect(markdown).toContain(
      "**Decision:** `significant_concerns` — 1 critical finding: SQL built from request input (src/db.ts:12)",
    )
    expect(markdown).toContain("## Summary\n\nAdds a user lookup; the query is built from request input.")
    expect(markdown).toContain("## Answer\n\nYes, the migration is reversible.")
    const order = [
      "### Critical (1)",
      "#### `src/db.ts:12` — SQL built from request input",
      "### Warnings (1)",
      "#### `src/list.ts:40` — Quadratic loop",
      "Index users by id\nbefore the loop.",
      "### Suggestions (1)",
      "#### `src/list.ts` — Name the magic number",
    ]
    const positions = order.map((text) => markdown.indexOf(text))
    expect(positions.every((position) => position >= 0)).toBe(true)
    expect([...positions].sort((a, b) => a - b)).toEqual(positions)
    expect(markdown).toContain("*security · raised by security · new · f2*")
    expect(markdown).toContain("- Filtered, not reviewed (1):\n  - `bun.lock` — lockfile")
    expect(markdown).toContain("- Every scheduled reviewer finished.")
    // 9,000 of 21,100 prompt tokens came from the provider's cache.
    expect(markdown).toContain(
      "Cost $0.43 · 3m 39s · tokens: 12,000 in, 800 out, 9,000 cache read, 100 cache write (43 % cache hits)",
    )
  })

  test("prints a concise plain-text rendering", async () => {
    await publish(base)
    expect(printed).toContain(
      "Decision: significant_concerns (full tier, 2 files reviewed, 3 findings (1 critical, 1 warning, 1 suggestion))",
    )
    expect(printed).toContain("  critical   src/db.ts:12    SQL built from request input [security]")
    expect(printed).toContain("  warning    src/list.ts:40  Quadratic loop [performance]")
    expect(printed).toContain("Filtered: bun.lock (lockfile)")
    expect(printed).toContain(`Report: ${join(outputDir, "out", "review.md")}`)
    expect(printed).not.toMatch(/\u001b\[/)
  })

  test("a review with a failed reviewer and no findings is incomplete: flagged before the summary, never clean", async () => {
    const { markdown } = await publish({
      ...base,
      review: { summary: "Looks good to me.", findings: [], answer: null },
      reviewers: [
        { name: "security", status: "ok", error: null, findings: [] },
        { name: "performance", status: "failed", error: "timeout after 5 min", findings: [] },
      ],
    })
    expect(markdown).toMatch(/^# Code review: incomplete, not approved: performance did not finish\n/)
    const warning = markdown.indexOf(
      "> **Incomplete review.** performance (timeout after 5 min) did not finish; what it covers was not reviewed, so the change is not approved and the review exits 1.",
    )
    expect(warning).toBeGreaterThan(0)
    expect(warning).toBeLessThan(markdown.indexOf("## Summary"))
    expect(markdown).toContain("> **Not reviewed:** 1 file was filtered as noise")
    expect(markdown).toContain(
      "No findings from the reviewers that finished. The failed reviewers' areas were not reviewed, so this is not a clean result.",
    )
    expect(markdown).toContain(
      "- Reviewers that failed (1); their areas were not reviewed:\n  - performance — timeout after 5 min",
    )
    expect(markdown).not.toContain("Every scheduled reviewer finished")
    // the only "looks good" is the coordinator's own words, quoted in the summary
    expect(markdown.match(/looks good/gi)).toEqual(["Looks good"])
    expect(printed).toContain("Decision: minor_issues (review incomplete)")
    expect(printed).toContain("Incomplete review. performance (timeout after 5 min) did not finish")
  })

  test("a binary file is listed as not reviewed, and a disputed critical and an ignored break glass are said", async () => {
    const { markdown } = await publish({
      ...base,
      plan: { ...plan, files: [...plan.files, { path: "assets/logo.png", noise: null, binary: true }] },
      review: {
        ...base.review,
        findings: [
          {
            severity: "warning",
            file: "src/db.ts",
            line: 12,
            category: "security",
            title: "SQL built from request input",
            body: "Use a parameterised query.",
            verification: {
              status: "not_confirmed",
              by: "m/verifier",
              reason: "the id is parsed as a number first",
              evidence: [],
              originalSeverity: "critical",
            },
          },
        ],
      },
      breakGlassRequests: {
        honoured: null,
        ignored: [{ by: "mallory", at: null, reason: "read access; breaking the glass needs write access or above" }],
      },
    })
    expect(markdown).toContain(
      "- **Not reviewed** (1):\n  - `assets/logo.png` — binary file: there is no text diff to review",
    )
    expect(markdown).toContain(
      "> **Disputed blocker:** the verifier disputed the critical `src/db.ts:12` SQL built from request input (the id is parsed as a number first)",
    )
    expect(markdown).toContain(
      "> **Break glass ignored:** mallory asked for it, but read access; breaking the glass needs write access or above.",
    )
  })

  test("records break glass, suspected injection and resolved findings", async () => {
    const { markdown } = await publish({
      ...base,
      breakGlass: true,
      injectionSuspected: true,
      previous: [
        {
          id: "t9",
          title: "Old problem",
          file: "src/old.ts",
          line: 3,
          trace: { file: "src/old.ts", line: null, changed: true },
        },
      ],
    })
    expect(markdown).toContain("# Code review: approved")
    expect(markdown).toContain("> **Break glass:** approved at a human's request")
    expect(markdown).toContain("> **Prompt injection suspected:**")
    expect(markdown).toContain("## Resolved since the previous review\n\n- `src/old.ts:3` — Old problem")
  })
})
