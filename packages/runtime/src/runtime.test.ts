import { createHash } from "node:crypto"
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
  directory: "/repo",
} as unknown as PluginInput

const today = () => new Date().toISOString().slice(0, 10)

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
    const started = today()
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
    const brief = {
      repoDir: "/repo",
      workDir: "/planned/work",
      contextFile: "/planned/work/shared-mr-context.txt",
      context: null,
      focus: [],
    }
    expect([briefReviewer({ ...brief, today: today() }), briefReviewer({ ...brief, today: started })]).toContain(
      driver.prompts[0]!.text,
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
    const brief = { repoDir: "/r", workDir: "/w", contextFile: "/w/shared-mr-context.txt", today: "2026-12-05" }
    const a = briefReviewer({ ...brief, context: null, focus: [] })
    const b = briefReviewer({ ...brief, context: null, focus: ["look at auth"] })
    expect(b.startsWith(a)).toBe(true)
    expect(a).toContain("Read /w/shared-mr-context.txt first")
    expect(a.length).toBeLessThan(600)
    const inline = briefReviewer({ ...brief, context: "<merge_request_context>…</merge_request_context>\n", focus: [] })
    expect(inline).toContain(
      "Today: 2026-12-05\n\n<merge_request_context>…</merge_request_context>\n\nOpen every patch",
    )
    expect(inline).not.toContain("Read /w/shared-mr-context.txt")
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

// The coordinator's first message and first model call, as OpenCode hands them to the hooks.
async function coordinatorMessage(hooks: ReturnType<typeof createRuntimeHooks>, sessionID = "ses_parent") {
  await hooks["chat.message"]!({ sessionID, agent: "review_coordinator" }, { message: {}, parts: [] } as never)
  await hooks["chat.params"]!({ sessionID } as never, {} as never)
}

// Waits for a condition the run reaches by itself (polls; never a fixed sleep).
async function until(condition: () => boolean | Promise<boolean>, what: string) {
  for (let i = 0; i < 500; i += 1) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error(`timed out waiting for ${what}`)
}

const ended = async (name: string) =>
  ((await readFile(join(workDir, "progress.jsonl"), "utf8").catch(() => "")) as string)
    .split("\n")
    .some((line) => line.includes('"reviewer-end"') && line.includes(`"${name}"`))

describe("reviewers start with the coordinator's first model call", () => {
  const planHere = () => ({ ...plan(), workDir, contextFile: join(workDir, "shared-mr-context.txt") })

  test("the coordinator's first model call starts every planned reviewer; spawn_reviewers then collects them", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const { hooks, driver } = hooksWith((prompt) => ({ kind: "answer", text: findings(prompt.agent), afterMs: 5 }))
    await hooks["chat.message"]!({ sessionID: "ses_parent", agent: "review_coordinator" }, {} as never)
    expect(driver.created).toEqual([])
    await hooks["chat.params"]!({ sessionID: "ses_parent" } as never, {} as never)
    await until(() => driver.created.length === 2, "two sessions")
    expect(driver.created.map((session) => [session.parentID, session.title])).toEqual([
      ["ses_parent", "security review"],
      ["ses_parent", "code-quality review"],
    ])
    const result = await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
    if (typeof result === "string") throw new Error("expected a result object")
    expect((result.metadata as SpawnMetadata).reviewers.map((reviewer) => reviewer.findings[0]?.title)).toEqual([
      "security",
      "code-quality",
    ])
    // Joined, not run twice; a second call returns the same results without new sessions.
    await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
    expect(driver.created).toHaveLength(2)
    expect(driver.prompts).toHaveLength(2)
  })

  test("messages of other agents, and of the reviewers themselves, start nothing", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const { hooks, driver } = hooksWith(() => ({ kind: "answer", text: "<findings/>", afterMs: 1 }))
    await hooks["chat.message"]!({ sessionID: "ses_x", agent: "security" }, { message: {}, parts: [] } as never)
    await hooks["chat.message"]!({ sessionID: "ses_y" }, { message: {}, parts: [] } as never)
    await hooks["chat.params"]!({ sessionID: "ses_x" } as never, {} as never)
    await hooks["chat.params"]!({ sessionID: "ses_y" } as never, {} as never)
    expect(driver.created).toEqual([])
  })

  test("a small shared context travels in each reviewer's first message, after the checkout and the date", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const shared = '<merge_request_context>\n<changed_files tier="full" count="1"/>\n</merge_request_context>\n'
    await writeFile(join(workDir, "shared-mr-context.txt"), shared)
    const { hooks, driver } = hooksWith(() => ({ kind: "answer", text: "<findings/>", afterMs: 1 }))
    await coordinatorMessage(hooks)
    await until(() => driver.prompts.length === 2, "both reviewers prompted")
    const first = driver.prompts[0]!.text
    expect(first.indexOf("Repository (the new version of every file): /repo")).toBe(0)
    expect(first).toMatch(/Today: \d{4}-\d{2}-\d{2}\n\n<merge_request_context>/)
    expect(first).toContain(shared.trimEnd())
    expect(first).not.toContain("Read ")
    await hooks.tool!.spawn_reviewers!.execute({}, context().value as never)
  })

  test("a focus note reaches a reviewer still working; one that finished is named to the coordinator", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const { hooks, driver } = hooksWith((prompt) =>
      prompt.agent === "security" && prompt.turn === 0
        ? { kind: "answer", text: findings("first look"), afterMs: 150 }
        : prompt.agent === "security"
          ? { kind: "answer", text: findings(`after ${prompt.text.split("\n- ")[1]}`), afterMs: 5 }
          : { kind: "answer", text: "<findings/>", afterMs: 1 },
    )
    await coordinatorMessage(hooks)
    await until(() => ended("code-quality"), "code-quality to finish")
    const result = await hooks.tool!.spawn_reviewers!.execute(
      {
        notes: [
          { reviewer: "security", focus: "the token check" },
          { reviewer: "code-quality", focus: "naming" },
        ],
      },
      context().value as never,
    )
    if (typeof result === "string") throw new Error("expected a result object")
    const security = driver.prompts.filter((prompt) => prompt.agent === "security")
    expect(security).toHaveLength(2)
    expect(security[1]!.sessionID).toBe(security[0]!.sessionID)
    expect(security[1]!.text).toContain("Focus notes from the coordinator")
    expect((result.metadata as SpawnMetadata).reviewers[0]!.findings[0]!.title).toBe("after the token check")
    expect(result.output).toContain("code-quality had finished before your focus notes arrived")
  })

  test("narrowing stops the reviewers left out; they end failed, and what they spent still counts", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const { hooks, driver } = hooksWith((prompt) =>
      prompt.agent === "security"
        ? { kind: "answer", text: "<findings/>", afterMs: 20, tokens: { input: 5 }, cost: 0.001 }
        : { kind: "hang" },
    )
    await coordinatorMessage(hooks)
    await until(() => driver.busy().length === 2, "both reviewers at work")
    const result = await hooks.tool!.spawn_reviewers!.execute({ reviewers: ["security"] }, context().value as never)
    if (typeof result === "string") throw new Error("expected a result object")
    const [security, quality] = (result.metadata as SpawnMetadata).reviewers
    expect(security).toMatchObject({ status: "done", costUsd: 0.001 })
    expect(quality).toMatchObject({
      status: "failed",
      error: "stopped: the coordinator narrowed the review to security",
    })
    expect(driver.aborted).toEqual([quality!.sessionIDs[0]])
  })

  test("aborting the tool call aborts reviewers that started before it", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify(planHere()))
    const { hooks, driver } = hooksWith(() => ({ kind: "hang" }))
    await coordinatorMessage(hooks)
    const abort = new AbortController()
    const pending = hooks.tool!.spawn_reviewers!.execute({}, context(abort.signal).value as never)
    abort.abort()
    const result = await pending
    if (typeof result === "string") throw new Error("expected a result object")
    expect((result.metadata as SpawnMetadata).reviewers.map((reviewer) => reviewer.status)).toEqual([
      "failed",
      "failed",
    ])
    expect(driver.aborted).toHaveLength(2)
  })
})

describe("after the review is submitted", () => {
  const params = (hooks: ReturnType<typeof createRuntimeHooks>, sessionID: string) =>
    hooks["chat.params"]!({ sessionID } as never, {} as never)
  // Whether the hook's promise is still pending once everything queued so far has run.
  const held = async (call: Promise<unknown>) => {
    let settled = false
    void call.then(() => (settled = true))
    await new Promise((resolve) => setTimeout(resolve, 20))
    return !settled
  }

  test("holds the coordinator's next model call, and only the coordinator's, once submission.json exists", async () => {
    await writeFile(join(workDir, "plan.json"), JSON.stringify({ ...plan(), workDir }))
    const { hooks } = hooksWith(() => ({ kind: "answer", text: "<findings/>", afterMs: 1 }))
    await coordinatorMessage(hooks, "ses_root")
    expect(await held(params(hooks, "ses_root"))).toBe(false)
    await writeFile(join(workDir, "submission.json"), "{}")
    expect(await held(params(hooks, "ses_root"))).toBe(true)
    expect(await held(params(hooks, "ses_reviewer"))).toBe(false)
  })
})

describe("request shape", () => {
  test("gives read, glob and grep short descriptions and compact schemas, and leaves other tools alone", async () => {
    const hooks = createRuntimeHooks(input, {
      workDir,
      driver: createFakeDriver(systemClock, () => ({ kind: "hang" })),
    })
    const parameters = { effect: "schema" }
    const read: { description: string; parameters: unknown; jsonSchema?: unknown } = {
      description: "x".repeat(1158),
      parameters,
    }
    await hooks["tool.definition"]!({ toolID: "read" }, read)
    expect(read.description.length).toBeLessThan(400)
    expect(read.description).toContain("absolute path")
    // OpenCode sends jsonSchema instead of converting parameters only while parameters is untouched.
    expect(read.parameters).toBe(parameters)
    expect(read.jsonSchema).toMatchObject({ type: "object", required: ["filePath"] })
    expect(Object.keys((read.jsonSchema as { properties: object }).properties)).toEqual(["filePath", "offset", "limit"])
    const other: { description: string; parameters: unknown; jsonSchema?: unknown } = {
      description: "OpenCode's own words",
      parameters: {},
    }
    await hooks["tool.definition"]!({ toolID: "spawn_reviewers" }, other)
    expect(other).toEqual({ description: "OpenCode's own words", parameters: {} })
  })

  test("takes OpenCode's model line and <env> block out of the system prompt, keeping the agent's prompt", async () => {
    const hooks = createRuntimeHooks(input, {
      workDir,
      driver: createFakeDriver(systemClock, () => ({ kind: "hang" })),
    })
    const agent = "# Rules for every reviewer\n…\n# Security reviewer\nFlag injection."
    const output = {
      system: [
        `${agent}\nYou are powered by the model named security. The exact model ID is p/security\nHere is some useful information about the environment you are running in:\n<env>\n  Working directory: /tmp/x\n  Today's date: Sat Dec 05 2026\n</env>`,
      ],
    }
    await hooks["experimental.chat.system.transform"]!({ model: {} } as never, output)
    expect(output.system).toEqual([agent])
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

  test("names the plan by the SHA-256 of its bytes: the same plan the same digest, another plan another", async () => {
    const text = JSON.stringify(plan())
    await writeFile(join(workDir, "plan.json"), text)
    const first = await readPlanFile(workDir)
    if (!first.ok) throw new Error(first.error)
    expect(first.digest).toBe(createHash("sha256").update(text).digest("hex"))
    await writeFile(join(workDir, "plan.json"), JSON.stringify(plan({ idleSeconds: 1 })))
    const second = await readPlanFile(workDir)
    expect(second.ok && second.digest).not.toBe(first.digest)
  })

  test("rejects a plan that is not JSON", async () => {
    await writeFile(join(workDir, "plan.json"), "{ nope")
    const read = await readPlanFile(workDir)
    expect(read.ok).toBe(false)
    expect(!read.ok && read.error).toMatch(/plan\.json is not valid JSON/)
  })
})
