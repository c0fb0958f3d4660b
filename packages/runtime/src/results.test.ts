import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { workFiles } from "@opencode-reviewer/core/protocol/names"
import type { ReviewerOutcome } from "@opencode-reviewer/core/protocol/spawn-metadata"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { loadFinished, planDigest, saveFinished } from "./results"

let workDir: string
beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), "ocr-results-"))
  await writeFile(join(workDir, workFiles.plan), '{"tier":"full"}\n')
})
afterEach(() => rm(workDir, { recursive: true, force: true }))

const outcome = (name: string, fields: Partial<ReviewerOutcome> = {}): ReviewerOutcome => ({
  name,
  status: "done",
  error: null,
  model: `fake/${name}`,
  modelsTried: [`fake/${name}`],
  attempts: 1,
  followUps: 0,
  sessionIDs: [`ses_${name}`],
  durationMs: 1_200,
  tokens: { input: 100, output: 20, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  costUsd: 0.01,
  findings: [
    { severity: "warning", file: "src/a.ts", line: 3, category: name, title: `${name} finding`, body: "Why." },
  ],
  ...fields,
})

describe("finished reviewers carried between processes of one review", () => {
  test("a saved outcome comes back whole for the same plan, and only for the names asked", async () => {
    const digest = (await planDigest(workDir))!
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
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
    const digest = (await planDigest(workDir))!
    saveFinished(workDir, digest, outcome("security", { status: "failed", error: "timed out", findings: [] }))
    expect(await loadFinished(workDir, digest, ["security"])).toEqual([])
  })

  test("a result made for another plan, a malformed file or one under another name is ignored", async () => {
    const before = (await planDigest(workDir))!
    saveFinished(workDir, before, outcome("security"))
    await writeFile(join(workDir, workFiles.plan), '{"tier":"full","files":[]}\n')
    const after = (await planDigest(workDir))!
    expect(after).not.toBe(before)
    expect(await loadFinished(workDir, after, ["security"])).toEqual([])

    const dir = join(workDir, workFiles.reviewerResults)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, "performance.json"), "{ not json")
    await writeFile(join(dir, "release.json"), JSON.stringify({ plan: after, outcome: { name: "release" } }))
    await writeFile(join(dir, "compliance.json"), JSON.stringify({ plan: after, outcome: outcome("security") }))
    expect(await loadFinished(workDir, after, ["performance", "release", "compliance"])).toEqual([])
  })

  test("without a readable plan.json there is no digest, so nothing is carried", async () => {
    await rm(join(workDir, workFiles.plan))
    expect(await planDigest(workDir)).toBeNull()
  })
})
