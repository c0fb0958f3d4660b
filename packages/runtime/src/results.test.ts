import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { workFiles } from "@opencode-reviewer/core/protocol/names"
import type { ReviewerOutcome } from "@opencode-reviewer/core/protocol/spawn-metadata"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { reviewerOutcome } from "./fake-driver"
import { loadFinished, saveFinished } from "./results"

let workDir: string
beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), "ocr-results-"))
})
// readPlanFile's SHA-256 of plan.json, for two different plans.
const digest = "a".repeat(64)
const otherPlan = "b".repeat(64)
afterEach(() => rm(workDir, { recursive: true, force: true }))

// A finished reviewer with a finding, as the scheduler reports one.
const outcome = (name: string, fields: Partial<ReviewerOutcome> = {}) =>
  reviewerOutcome(name, {
    sessionIDs: [`ses_${name}`],
    tokens: { input: 100, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    costUsd: 0.01,
    findings: [
      { severity: "warning", file: "src/a.ts", line: 3, category: name, title: `${name} finding`, body: "Why." },
    ],
    ...fields,
  })

describe("finished reviewers carried between processes of one review", () => {
  test("a saved outcome comes back whole for the same plan, and only for the names asked", async () => {
    saveFinished(workDir, digest, outcome("security"))
    saveFinished(workDir, digest, outcome("performance"))
    expect(await loadFinished(workDir, digest, ["security", "documentation"])).toEqual([outcome("security")])
    // Renamed into place: no temporary file is left beside the results.
    expect((await readdir(join(workDir, workFiles.reviewerResults))).sort()).toEqual([
      "performance.json",
      "security.json",
    ])
  })

  test("a failed reviewer is not saved: a later process runs it again", async () => {
    saveFinished(workDir, digest, outcome("security", { status: "failed", error: "timed out", findings: [] }))
    expect(await loadFinished(workDir, digest, ["security"])).toEqual([])
  })

  test("a result made for another plan, a malformed file or one under another name is ignored", async () => {
    saveFinished(workDir, otherPlan, outcome("security"))
    expect(await loadFinished(workDir, digest, ["security"])).toEqual([])
    expect(await loadFinished(workDir, otherPlan, ["security"])).toEqual([outcome("security")])

    const dir = join(workDir, workFiles.reviewerResults)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, "performance.json"), "{ not json")
    await writeFile(join(dir, "release.json"), JSON.stringify({ plan: digest, outcome: { name: "release" } }))
    await writeFile(join(dir, "compliance.json"), JSON.stringify({ plan: digest, outcome: outcome("security") }))
    expect(await loadFinished(workDir, digest, ["performance", "release", "compliance"])).toEqual([])
  })
})
