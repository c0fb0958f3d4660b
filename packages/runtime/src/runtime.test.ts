import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { defaults } from "@opencode-reviewer/core/config/config"
import type { PluginInput } from "@opencode-reviewer/opencode/plugin"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { createBreakers } from "./breaker"
import { systemClock } from "./clock"
import { createFakeDriver, type FakeBehaviour, type FakePrompt } from "./fake-driver"
import { briefReviewer } from "./instructions"
import { readPlanFile } from "./plan-file"
import { createRuntimeHooks, type SpawnMetadata, sentinelFile } from "./runtime"

let workDir: string
beforeEach(async () => {
  workDir = await mkdtemp(join(tmpdir(), "ocr-runtime-"))
})
afterEach(async () => {
  await rm(workDir, { recursive: true, force: true })
})

const plan = (limits: Record<string, number> = {}) => ({
  tier: "full",
  agents: [
    {
      name: "review_coordinator",
      role: "coordinator",
      models: ["fake/coordinator"],
      timeoutMinutes: null,
      reason: "top",
    },
    {
      name: "security",
      role: "reviewer",
      models: ["fake/security", "fake/security-2"],
      timeoutMinutes: 5,
      reason: "full tier",
    },
    { name: "code-quality", role: "reviewer", models: ["fake/code-quality"], timeoutMinutes: 10, reason: "full tier" },
  ],
  limits: { ...defaults.limits, ...limits },
  workDir: "/planned/work",
  contextFile: "/planned/work/shared-mr-context.txt",
})

const logs: unknown[] = []
const input = {
  client: { app: { log: async (entry: unknown) => (logs.push(entry), { data: true }) } },
} as unknown as PluginInput

function context(abort = new AbortController().signal) {
  const titles: string[] = []
  return {
    titles,
    value: {
      sessionID: "ses_parent",
      messageID: "msg_1",
      agent: "review_coordinator",
      directory: workDir,
      worktree: workDir,
      abort,
      metadata: (update: { title?: string }) => void (update.title && titles.push(update.title)),
      ask: async () => {},
    },
  }
}

function hooksWith(behave: (prompt: FakePrompt) => FakeBehaviour) {
  const driver = createFakeDriver(systemClock, behave)
  const hooks = createRuntimeHooks(input, {
    workDir,
    driver,
    clock: systemClock,
    breakers: createBreakers({ failures: 3, cooldownMs: 120_000, now: Date.now }),
  })
  driver.connect((event) => void hooks.event!({ event: event as never }))
  return { hooks, driver }
}

const findings = (title: string) =>
  `<findings><finding severity="warning" file="src/a.ts" line="2" category="security"><title>${title}</title><body>b</body></finding></findings>`

describe("spawn_reviewers tool", () => {
  test("runs the planned reviewers and returns the XML output with full metadata", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(plan()))
    const { hooks, driver } = hooksWith((prompt) => ({
      kind: "answer",
      text: findings(`${prompt.agent} says`),
      afterMs: 5,
      tokens: { input: 10, output: 2 },
      cost: 0.01,
    }))
    const call = context()
    const result = await hooks.tool!.spawn_reviewers!.execute({}, call.value as never)
    if (typeof result === "string") throw new Error("expected a result object")
    expect(result.title).toBe("2 reviewers finished (0 failed)")
    expect(result.output).toMatch(/^<reviewer_results plan="[^"]+plan\.json" reviewers="2" failed="0">/)
    expect(result.output).toContain('<reviewer_result name="security" status="done" model="fake/security"')
    const metadata = result.metadata as SpawnMetadata
    expect(metadata.error).toBeNull()
    expect(metadata.reviewers.map((reviewer) => [reviewer.name, reviewer.status, reviewer.findings[0]?.title])).toEqual(
      [
        ["security", "done", "security says"],
        ["code-quality", "done", "code-quality says"],
      ],
    )
    expect(metadata.reviewers[0]).toMatchObject({
      tokens: { input: 10, output: 2 },
      costUsd: 0.01,
      modelsTried: ["fake/security"],
      attempts: 1,
    })
    expect(JSON.parse(JSON.stringify(metadata))).toEqual(metadata)
    expect(driver.created.map((session) => session.parentID)).toEqual(["ses_parent", "ses_parent"])
    expect(driver.prompts[0]!.text).toBe(
      briefReviewer({ workDir: "/planned/work", contextFile: "/planned/work/shared-mr-context.txt", focus: [] }),
    )
    expect(call.titles.at(-1)).toBe("2/2 reviewers finished")
  })

  test("narrows to the named planned reviewers, passes focus notes and reports unknown names", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(plan()))
    const { hooks, driver } = hooksWith(() => ({ kind: "answer", text: "<findings/>", afterMs: 1 }))
    const result = await hooks.tool!.spawn_reviewers!.execute(
      {
        reviewers: ["security", "nonsense"],
        focus: "the retry loop in src/pay.ts",
        notes: [{ reviewer: "security", focus: "token handling </findings>" }],
      },
      context().value as never,
    )
    if (typeof result === "string") throw new Error("expected a result object")
    expect(driver.prompts.map((prompt) => prompt.agent)).toEqual(["security"])
    expect(driver.prompts[0]!.text).toContain("- the retry loop in src/pay.ts\n- token handling")
    expect(driver.prompts[0]!.text).not.toContain("</findings>")
    expect(result.output).toContain("<note>not in the plan, ignored: nonsense</note>")
  })

  test("gives every reviewer the same first message up to the focus notes", () => {
    const a = briefReviewer({ workDir: "/w", contextFile: "/w/shared-mr-context.txt", focus: [] })
    const b = briefReviewer({ workDir: "/w", contextFile: "/w/shared-mr-context.txt", focus: ["look at auth"] })
    expect(b.startsWith(a)).toBe(true)
    expect(a).toContain("Read /w/shared-mr-context.txt first")
    expect(a.length).toBeLessThan(600)
  })

  test("registers and explains itself when the work dir is not set", async () => {
    const hooks = createRuntimeHooks(input, {
      workDir: null,
      driver: createFakeDriver(systemClock, () => ({ kind: "hang" })),
    })
    const result = await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
    if (typeof result === "string") throw new Error("expected a result object")
    expect(result.title).toBe("spawn_reviewers could not run")
    expect(result.output).toContain("<error>OPENCODE_REVIEWER_WORK_DIR is not set")
    expect((result.metadata as SpawnMetadata).reviewers).toEqual([])
  })

  test("reports a missing or invalid plan.json as its output", async () => {
    const hooks = createRuntimeHooks(input, {
      workDir,
      driver: createFakeDriver(systemClock, () => ({ kind: "hang" })),
    })
    const missing = await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
    expect(typeof missing !== "string" && missing.output).toMatch(/<error>cannot read .*plan\.json: ENOENT<\/error>/)
    await writeFile(
      join(workDir, "plan.json"),
      JSON.stringify({ agents: [{ name: "x", role: "reviewer", models: ["no-slash"] }] }),
    )
    const invalid = await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
    expect(typeof invalid !== "string" && invalid.output).toContain(
      "is invalid: agents.0.models.0: must be &lt;provider&gt;/&lt;model&gt;",
    )
  })

  test("writes a sentinel when it loads, naming the plan it read", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(plan()))
    createRuntimeHooks(input, { workDir, driver: createFakeDriver(systemClock, () => ({ kind: "hang" })) })
    const sentinel = join(workDir, sentinelFile)
    for (let i = 0; i < 100; i += 1) {
      const text = await readFile(sentinel, "utf8").catch(() => null)
      if (text) {
        expect(JSON.parse(text)).toMatchObject({
          loaded: true,
          plan: join(workDir, "plan.json"),
          error: null,
          reviewers: ["security", "code-quality"],
        })
        return
      }
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    throw new Error("no sentinel written")
  })
})

describe("readPlanFile", () => {
  test("accepts fractions, and refuses limits that lack a key, naming it (the CLI always writes them all)", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(plan({ idleSeconds: 0.5, overallMinutes: 0.25 })))
    const read = await readPlanFile(workDir)
    if (!read.ok) throw new Error(read.error)
    expect(read.plan.limits).toMatchObject({ overallMinutes: 0.25, idleSeconds: 0.5, concurrency: 7 })
    const { pollSeconds: _dropped, ...partial } = defaults.limits
    await writeFile(join(workDir, "plan.json"), JSON.stringify({ ...plan(), limits: partial }))
    const refused = await readPlanFile(workDir)
    expect(refused.ok ? "read" : refused.error).toMatch(/limits\.pollSeconds/)
  })

  test("rejects a plan that is not JSON", async () => {
    await writeFile(join(workDir, "plan.json"), "{ nope")
    const read = await readPlanFile(workDir)
    expect(read.ok).toBe(false)
    expect(!read.ok && read.error).toMatch(/plan\.json is not valid JSON/)
  })
})
