import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { assembleConfig } from "../assemble/assemble"
import { resolveConfig } from "../config/config"
import { PluginConfigureError } from "../model/errors"
import type { Finding } from "../model/finding"
import { silentLogger } from "../model/logger"
import type { Contributions } from "../plugin/contributions"
import { runLifecycle } from "../plugin/lifecycle"
import type { PlanView, ReviewPlugin } from "../plugin/plugin"
import { anonymousMergeRequest, type Change } from "../review/change"
import { planReview } from "../review/plan-review"
import { buildReviewRecord, type PlanFacts, parsePlanFacts } from "./review-record"

// Findings established by code: ConfigureContext.addFinding → lifecycle → plan.json → review.json.

const plan: PlanView = { repoDir: "/repo", workDir: "/work", tier: "full", files: [], agents: [], diff: [] }
const filler: Finding = {
  severity: "suggestion",
  file: "AGENTS.md",
  line: 7,
  category: "agents-md",
  title: "Generic filler",
  body: "Line 7 says nothing.",
}

function seed(store: Contributions) {
  store.agents.set("review_coordinator", {
    description: "c",
    prompt: "C",
    models: ["fake/top"],
    plugin: "core",
    role: "coordinator",
  })
}

function run(plugins: ReviewPlugin[], assembled: { count: number } = { count: 0 }) {
  return runLifecycle({
    plugins,
    plan,
    log: silentLogger,
    seed,
    assemble: (store) => {
      assembled.count += 1
      return assembleConfig(store, { workDir: "/work", sharedReviewerPrompt: "S" })
    },
  })
}

describe("ConfigureContext.addFinding", () => {
  test("records the finding with the plugin that made it, the category in its canonical spelling", async () => {
    const result = await run([
      { name: "checker", configure: async (context) => context.addFinding({ ...filler, category: "Agents MD" }) },
    ])
    expect(result.findings).toEqual([{ plugin: "checker", finding: filler }])
  })

  test("an invalid finding fails the plugin's configure with its name and the bad field", async () => {
    const bad = {
      name: "checker",
      configure: async (context) => context.addFinding({ ...filler, line: 0 }),
    } satisfies ReviewPlugin
    const error = await run([bad]).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PluginConfigureError)
    expect(String((error as Error).message)).toContain("checker")
    expect(String((error as Error).message)).toMatch(/finding is not valid: line/)
  })

  test("postConfigure findings are kept without re-assembling the config; a failed postConfigure's are dropped", async () => {
    const assembled = { count: 0 }
    const result = await run(
      [
        { name: "late", postConfigure: async (context) => context.addFinding(filler) },
        {
          name: "broken",
          postConfigure: async (context) => {
            context.addFinding({ ...filler, line: 9 })
            throw new Error("boom")
          },
        },
      ],
      assembled,
    )
    expect(result.findings).toEqual([{ plugin: "late", finding: filler }])
    expect(assembled.count).toBe(1)
    expect(result.warnings).toEqual(['plugin "broken" failed in postConfigure: boom'])
  })
})

describe("buildReviewRecord with code findings", () => {
  const facts: PlanFacts = {
    tier: "lite",
    files: [
      { path: "AGENTS.md", noise: null },
      { path: "src/a.ts", noise: null },
    ],
    agents: [
      { name: "review_coordinator", role: "coordinator" },
      { name: "agents-md", role: "reviewer" },
    ],
  }
  const modelCopy: Finding = {
    ...filler,
    severity: "warning",
    title: "Filler in AGENTS.md",
    body: "The model's words.",
  }
  const other: Finding = {
    severity: "suggestion",
    file: "src/a.ts",
    line: 3,
    category: "code-quality",
    title: "Name",
    body: "b",
  }
  const input = (findings: Finding[], codeFindings = [{ plugin: "agents-md", finding: filler }]) => ({
    review: { summary: "s", findings, answer: null },
    plan: facts,
    reviewers: [{ name: "agents-md", status: "done", error: null, findings: [modelCopy] }],
    durationMs: 1,
    breakGlass: false,
    codeFindings,
  })

  test("a code finding joins the coordinator's, attributed to its plugin", () => {
    const record = buildReviewRecord(input([other]))
    expect(
      record.findings.map(({ id, reviewer, file, line, severity }) => ({ id, reviewer, file, line, severity })),
    ).toEqual([
      { id: "f1", reviewer: "code-quality", file: "src/a.ts", line: 3, severity: "suggestion" },
      { id: "f2", reviewer: "agents-md", file: "AGENTS.md", line: 7, severity: "suggestion" },
    ])
  })

  test("it wins over a coordinator finding on the same file, line and category", () => {
    const record = buildReviewRecord(input([modelCopy, other]))
    expect(record.findings).toHaveLength(2)
    expect(record.findings.find((finding) => finding.file === "AGENTS.md")).toMatchObject({
      severity: "suggestion",
      title: "Generic filler",
      body: "Line 7 says nothing.",
    })
    // The model's warning is gone, so it does not count in the decision either.
    expect(record.decision).toBe("approved")
  })

  test("a coordinator finding elsewhere in the file, or in another category, stays", () => {
    const record = buildReviewRecord(
      input([
        { ...modelCopy, line: 8 },
        { ...modelCopy, category: "documentation" },
      ]),
    )
    expect(record.findings.map((finding) => `${finding.line}/${finding.category}`)).toEqual([
      "8/agents-md",
      "7/documentation",
      "7/agents-md",
    ])
  })

  test("code findings count in the decision", () => {
    const warning = { plugin: "checker", finding: { ...filler, severity: "critical" as const } }
    expect(buildReviewRecord(input([], [warning])).decision).toBe("significant_concerns")
    const many = [5, 6, 7, 8].map((line) => ({
      plugin: "agents-md",
      finding: { ...filler, line, title: `filler ${line}` },
    }))
    expect(buildReviewRecord(input([], many)).decision).toBe("approved_with_comments")
  })

  test("a code finding the previous review raised is persisting", () => {
    const record = buildReviewRecord({
      ...input([]),
      previous: [{ id: "p1", title: "Generic filler", file: "AGENTS.md", line: 7 }],
    })
    expect(record.findings[0]).toMatchObject({ status: "persisting" })
    expect(record.resolved).toEqual([])
  })

  test("plan.json findings parse back; old plan.json without them still parses", () => {
    const parsed = parsePlanFacts(JSON.stringify({ ...facts, findings: [{ plugin: "agents-md", finding: filler }] }))
    expect(parsed).toEqual({ ok: true, value: { ...facts, findings: [{ plugin: "agents-md", finding: filler }] } })
    expect(parsePlanFacts(JSON.stringify(facts)).ok).toBe(true)
    expect(
      parsePlanFacts(
        JSON.stringify({ ...facts, findings: [{ plugin: "x", finding: { ...filler, severity: "fatal" } }] }),
      ).ok,
    ).toBe(false)
  })
})

describe("planReview carries code findings", () => {
  let dir = ""
  afterEach(() => rm(dir, { recursive: true, force: true }))

  test("into the plan and plan.json, and gives plugins the parsed diff", async () => {
    dir = await mkdtemp(join(tmpdir(), "ocr-code-findings-"))
    const diff =
      "diff --git a/package-lock.json b/package-lock.json\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/package-lock.json\n+++ /dev/null\n@@ -1 +0,0 @@\n-{}\n" +
      "diff --git a/bun.lock b/bun.lock\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/bun.lock\n@@ -0,0 +1 @@\n+{}\n" +
      "diff --git a/src/a.ts b/src/a.ts\nindex 1111111..2222222 100644\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+b\n"
    const change: Change = {
      source: "test",
      diff: new TextEncoder().encode(diff),
      mergeRequest: anonymousMergeRequest("t"),
      comments: [],
      previousReview: null,
      customInstructions: null,
      readHeads: async () => new Map(),
    }
    let seen: PlanView["diff"] = []
    const plugin: ReviewPlugin = {
      name: "checker",
      configure: async (context) => {
        seen = context.plan.diff
        context.addFinding({ ...filler, file: "src/a.ts", line: 1 })
      },
    }
    const prompts = {
      coordinator: "C",
      shared: "S",
      reviewers: Object.fromEntries(
        ["security", "code-quality", "performance", "compliance", "documentation", "release", "agents-md"].map(
          (name) => [name, name],
        ),
      ),
    }
    const result = await planReview({
      change,
      config: resolveConfig({}),
      plugins: [plugin],
      prompts,
      repoDir: dir,
      workDir: join(dir, "work"),
      log: silentLogger,
    })
    expect(result.findings).toEqual([{ plugin: "checker", finding: { ...filler, file: "src/a.ts", line: 1 } }])
    const facts = parsePlanFacts(await readFile(result.planFile, "utf8"))
    expect(facts.ok && facts.value.findings).toEqual(result.findings)
    expect(seen.map((file) => [file.path, file.status])).toEqual([
      ["package-lock.json", "deleted"],
      ["bun.lock", "added"],
      ["src/a.ts", "modified"],
    ])
    expect(Object.isFrozen(seen) && Object.isFrozen(seen[0])).toBe(true)
    expect(result.agents.map((agent) => agent.name)).toContain("agents-md")
  })
})
