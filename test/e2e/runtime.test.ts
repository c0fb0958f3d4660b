import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import {
  anonymousMergeRequest,
  type ConfigInput,
  loadPrompts,
  type PromptLibrary,
  planReview,
  type ReviewPlan,
  resolveConfig,
  silentLogger,
} from "@opencode-reviewer/core"
import {
  createOpencodeSandbox,
  createTempRepo,
  findingsReply,
  type ModelServer,
  type OpencodeSandbox,
  type RecordedRequest,
  type Reply,
  runOpencode,
  startModelServer,
  statusReply,
  type TempRepo,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import { toolDescriptions, toolSchemas } from "../../packages/opencode/src/request-shape"
import type { SpawnMetadata } from "../../packages/runtime/src/runtime"
import { type Specialist, specialists } from "./harness"

// The runtime plugin inside the real opencode binary: the coordinator's spawn_reviewers call runs
// the planned reviewers in child sessions against the scripted model server.
const pluginUrl = pathToFileURL(fileURLToPath(new URL("../../packages/runtime/src/plugin.ts", import.meta.url))).href
const reviewerNames = specialists
type ReviewerName = Specialist

let repo: TempRepo
let sandbox: OpencodeSandbox
let prompts: PromptLibrary
let diff: Uint8Array
let server: ModelServer
let runs = 0

beforeAll(async () => {
  repo = await createTempRepo()
  await repo.write({ "src/app.ts": "export const a = 1\n" })
  repo.commit("init")
  repo.git("checkout", "-q", "-b", "feature")
  // A security-sensitive path and a release file: the full tier, every specialist.
  await repo.write({
    "src/auth/token.ts": "export const ttl = 1\nexport const secret = 'x'\n",
    "CHANGELOG.md": "## 1.1.0\n",
  })
  repo.commit("auth change")
  diff = new TextEncoder().encode(repo.git("diff", "main...feature"))
  sandbox = await createOpencodeSandbox()
  prompts = await loadPrompts()
})

afterAll(async () => {
  await repo?.remove()
  await sandbox?.remove()
})

afterEach(async () => {
  await server?.close()
})

interface Scenario {
  /** Reviewers to run, each with its model chain (fake model ids); the others are disabled. */
  reviewers: Partial<Record<ReviewerName, string[]>>
  limits?: ConfigInput["limits"]
  /** Replies per fake model id; a function gets the request (and can look at lastUser). */
  replies: Record<string, Reply | ((request: RecordedRequest) => Reply | Promise<Reply>)>
  latencyMs?: number
  /** Run without OPENCODE_REVIEWER_WORK_DIR (the plugin must still register its tool). */
  withoutWorkDir?: boolean
  /** The coordinator's spawn_reviewers arguments (default none). */
  spawnArgs?: Record<string, unknown>
  /**
   * Hold the coordinator's first answer until this many reviewer requests arrived (30 s at most):
   * reviewers that start early arrive while it is held, ones that wait for spawn_reviewers never do.
   */
  holdCoordinatorFor?: number
}

interface Outcome {
  plan: ReviewPlan
  code: number
  stderr: string
  events: { type: string; part?: any }[]
  metadata: SpawnMetadata
  toolOutput: string
  toolMs: number
  wallMs: number
  byModel(model: string): RecordedRequest[]
}

async function review(scenario: Scenario): Promise<Outcome> {
  server = await startModelServer({ latencyMs: scenario.latencyMs ?? 0 })
  const models = new Set<string>([
    "coordinator",
    ...Object.values(scenario.reviewers)
      .flat()
      .map((model) => model.replace(/^fake\//, "")),
  ])
  const config = resolveConfig({
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        name: "fake",
        options: { baseURL: server.url, apiKey: "test-key" },
        models: Object.fromEntries(
          [...models].map((id) => [
            id,
            { name: id, limit: { context: 100_000, output: 4_096 }, cost: { input: 3, output: 15 } },
          ]),
        ),
      },
    },
    models: { top: ["fake/coordinator"], standard: ["fake/coordinator"], light: ["fake/coordinator"] },
    reviewers: Object.fromEntries(
      reviewerNames.map((name) => {
        const chain = scenario.reviewers[name]
        return [name, chain ? { enabled: true, model: chain } : { enabled: false }]
      }),
    ),
    limits: { pollSeconds: 0.5, ...scenario.limits },
  } as ConfigInput)
  const plan = await planReview({
    change: {
      source: "test diff",
      diff,
      mergeRequest: anonymousMergeRequest("Token handling"),
      comments: [],
      previousReview: null,
      customInstructions: null,
      readHeads: async () => new Map(),
    },
    config,
    plugins: [],
    prompts,
    repoDir: repo.dir,
    workDir: join(sandbox.root, `work-${++runs}`),
    log: silentLogger,
  })

  const toolResult = (request: RecordedRequest) => request.toolResults.length > 0
  const reviewerRequest = (request: RecordedRequest) => request.model !== "coordinator" && !request.isTitle
  server.rule(
    (request) => request.model === "coordinator" && !toolResult(request),
    async () => {
      const wanted = scenario.holdCoordinatorFor ?? 0
      if (wanted > 0) await server.wait(wanted, { match: reviewerRequest, timeoutMs: 30_000 }).catch(() => undefined)
      return toolCall("spawn_reviewers", scenario.spawnArgs ?? {})
    },
  )
  server.rule(
    (request) => request.model === "coordinator" && toolResult(request),
    text("FINAL REVIEW <review><summary>ok</summary><findings/></review>"),
  )
  for (const [model, reply] of Object.entries(scenario.replies))
    server.rule((request) => request.model === model, reply)

  const started = performance.now()
  const result = await runOpencode(
    sandbox,
    ["run", "--format", "json", "--agent", "review_coordinator", "--title", "t"],
    {
      cwd: repo.dir,
      stdin: await readFile(plan.promptFile, "utf8"),
      env: {
        ...(scenario.withoutWorkDir ? {} : { OPENCODE_REVIEWER_WORK_DIR: plan.workDir }),
        OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...plan.assembly.config, plugin: [pluginUrl] }),
      },
      timeoutMs: 90_000,
    },
  )
  const wallMs = performance.now() - started
  const current = server
  const events = result.stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { type: string; part?: any })
  const call = events.find((event) => event.type === "tool_use" && event.part?.tool === "spawn_reviewers")
  if (!call)
    throw new Error(`no spawn_reviewers tool_use event (rc ${result.code}):\n${result.stdout}\n${result.stderr}`)
  const state = call.part.state
  return {
    plan,
    code: result.code,
    stderr: result.stderr,
    events,
    metadata: state.metadata as SpawnMetadata,
    toolOutput: state.output as string,
    toolMs: state.time.end - state.time.start,
    wallMs,
    byModel: (model) => current.requests.filter((request) => request.model === model && !request.isTitle),
  }
}

const finding = (title: string, category: string) => ({
  severity: "warning",
  file: "src/auth/token.ts",
  line: 2,
  category,
  title,
  body: "Why it matters.",
})
const usage = { input: 1_000, output: 50, cacheRead: 200 }
const reviewerOf = (outcome: Outcome, name: string) => {
  const reviewer = outcome.metadata.reviewers.find((entry) => entry.name === name)
  if (!reviewer)
    throw new Error(`no reviewer ${name} in ${JSON.stringify(outcome.metadata.reviewers.map((entry) => entry.name))}`)
  return reviewer
}
const firstLine = (prompt: string) => prompt.split("\n").find((line) => line.startsWith("# "))!

describe("spawn_reviewers inside the real opencode binary", () => {
  test("runs every planned reviewer concurrently, each with its own agent prompt and model, and reports findings and tokens", async () => {
    const reviewers = Object.fromEntries(reviewerNames.map((name) => [name, [`fake/${name}-model`]])) as Record<
      ReviewerName,
      string[]
    >
    // Orderings, not timings: each reviewer is answered only once all seven have asked (so they ran
    // concurrently), and the coordinator's first answer is held until then (so they started early).
    const allAsked = () =>
      server.wait(reviewerNames.length, {
        match: (request) => request.model.endsWith("-model") && !request.isTitle,
        timeoutMs: 30_000,
      })
    const outcome = await review({
      reviewers,
      holdCoordinatorFor: reviewerNames.length,
      replies: Object.fromEntries(
        reviewerNames.map((name) => [
          `${name}-model`,
          async () => {
            await allAsked().catch(() => undefined)
            return findingsReply([finding(`${name} finding`, name)], { usage })
          },
        ]),
      ),
    })
    expect(outcome.code, outcome.stderr).toBe(0)
    const { metadata } = outcome
    expect(metadata.error).toBeNull()
    expect(metadata.plan).toBe(join(outcome.plan.workDir, "plan.json"))
    expect(metadata.reviewers.map((entry) => [entry.name, entry.status, entry.error])).toEqual(
      reviewerNames.map((name) => [name, "done", null]),
    )
    for (const name of reviewerNames) {
      const reviewer = reviewerOf(outcome, name)
      expect(reviewer.findings).toEqual([finding(`${name} finding`, name)])
      expect(reviewer).toMatchObject({ model: `fake/${name}-model`, modelsTried: [`fake/${name}-model`], attempts: 1 })
      expect(reviewer.tokens).toEqual({ input: 1_000, output: 50, reasoning: 0, cacheRead: 200, cacheWrite: 0 })
      expect(reviewer.costUsd).toBeGreaterThan(0)
      expect(reviewer.sessionIDs).toHaveLength(1)
      // The child's request used the reviewer's agent: its own prompt (after the shared rules) and model.
      const [request] = outcome.byModel(`${name}-model`)
      expect(request, name).toBeDefined()
      expect(request!.system).toContain(firstLine(prompts.reviewers[name]!))
      expect(request!.system).toContain(firstLine(prompts.shared))
      // The first message carries the checkout, the date and the shared context itself (no read needed).
      expect(request!.lastUser).toContain(`Repository (the new version of every file): ${repo.dir}`)
      expect(request!.lastUser).toContain((await readFile(outcome.plan.contextFile, "utf8")).trimEnd())
      expect(request!.tools).not.toContain("spawn_reviewers")
      // Nothing volatile before it: OpenCode's model line and <env> block are gone from the system prompt,
      // and read, glob and grep carry our short descriptions.
      expect(request!.system).not.toContain("<env>")
      expect(request!.system).not.toContain(repo.dir)
      const read = request!.body.tools.find((tool: any) => tool.function.name === "read")
      expect(read.function.description).toBe(toolDescriptions.read)
      expect(read.function.parameters).toEqual(toolSchemas.read)
    }
    // Concurrent: every reviewer request arrived before the first one was answered.
    const requests = reviewerNames.map((name) => outcome.byModel(`${name}-model`)[0]!)
    const lastArrival = Math.max(...requests.map((request) => request.at))
    const firstAnswer = Math.min(...requests.map((request) => request.finishedAt!))
    expect(lastArrival).toBeLessThan(firstAnswer)
    // They started with the coordinator's first message, not after its spawn_reviewers call: every
    // reviewer was asked before the coordinator's first answer came back.
    const [first] = outcome.byModel("coordinator")
    expect(lastArrival).toBeLessThan(first!.finishedAt!)
    // One prompt prefix for all: only the agent's system prompt differs, never the user message.
    expect(new Set(requests.map((request) => request.lastUser)).size).toBe(1)
    // The coordinator got the findings back as the tool result.
    const [, second] = outcome.byModel("coordinator")
    expect(second!.toolResults[0]!.content).toContain(
      '<reviewer_result name="security" status="done" model="fake/security-model"',
    )
    expect(second!.toolResults[0]!.content).toContain("<title>agents-md finding</title>")
    expect(outcome.toolMs).toBeLessThan(4_000)
    const sentinel = JSON.parse(await readFile(join(outcome.plan.workDir, "runtime-plugin.json"), "utf8"))
    expect(sentinel).toMatchObject({ loaded: true, error: null, reviewers: [...reviewerNames] })
    console.info(
      `7 reviewers: tool ${outcome.toolMs} ms, arrivals spread ${lastArrival - Math.min(...requests.map((r) => r.at))} ms, whole run ${Math.round(outcome.wallMs)} ms`,
    )
  }, 90_000)

  // Each opencode process costs seconds of CPU to start, so reviewers that fail (or are steered) in
  // different ways share one run: each reviewer's outcome depends only on its own model's replies.
  describe("in one run: a hung reviewer, two malformed ones, one refused with a 401, and one that gets a focus note", () => {
    let outcome: Outcome

    beforeAll(async () => {
      outcome = await review({
        reviewers: {
          performance: ["fake/hang"],
          documentation: ["fake/docs-ok"],
          compliance: ["fake/garbled-twice"],
          "code-quality": ["fake/garbled-once"],
          security: ["fake/unauthorised", "fake/never-used"],
          release: ["fake/slow-release"],
        },
        limits: { idleSeconds: 2 },
        latencyMs: 200,
        spawnArgs: { notes: [{ reviewer: "release", focus: "check the token expiry" }] },
        replies: {
          hang: { type: "hang" },
          "docs-ok": findingsReply([finding("token logged", "documentation")]),
          "garbled-twice": text('Here you go: <findings><finding severity="warning" file="a.ts"><title>unclosed'),
          "garbled-once": (request) =>
            request.lastUser.includes("could not be read")
              ? text(`<findings/>`)
              : text("I found nothing, but forgot the block."),
          unauthorised: statusReply(401),
          "never-used": findingsReply([]),
          // Keeps reading (up to 40 steps) until the coordinator's note is in its conversation: still at
          // work when the note comes, however slowly the machine runs.
          "slow-release": (request) =>
            !request.lastUser.includes("- check the token expiry") && request.toolResults.length < 40
              ? toolCall("read", { filePath: join(repo.dir, "src/auth/token.ts") })
              : findingsReply([finding("expiry not checked", "release")]),
        },
      })
    }, 90_000)

    test("every planned reviewer reports a result, and opencode exits 0", () => {
      expect(outcome.code, outcome.stderr).toBe(0)
      expect(outcome.metadata.reviewers.map((entry) => entry.name).sort()).toEqual(
        ["code-quality", "compliance", "documentation", "performance", "release", "security"].sort(),
      )
    })

    test("aborts a hung reviewer after idleSeconds and keeps the others' findings", () => {
      const hung = reviewerOf(outcome, "performance")
      expect(hung).toMatchObject({ status: "failed", model: "fake/hang", attempts: 1 })
      expect(hung.error).toBe("fake/hang: no output for 2 s; no model left to fail back to")
      expect(hung.durationMs).toBeGreaterThanOrEqual(2_000)
      expect(hung.durationMs).toBeLessThan(5_000)
      expect(reviewerOf(outcome, "documentation")).toMatchObject({
        status: "done",
        findings: [finding("token logged", "documentation")],
      })
      expect(outcome.byModel("hang")).toHaveLength(1)
      expect(outcome.toolOutput).toContain('<reviewer_result name="performance" status="failed" model="fake/hang"')
      console.info(`hung reviewer aborted after ${hung.durationMs} ms (idleSeconds 2); tool ${outcome.toolMs} ms`)
    })

    test("asks once more after malformed findings, then counts a reviewer that is still malformed as failed", () => {
      const twice = reviewerOf(outcome, "compliance")
      expect(twice.status).toBe("failed")
      expect(twice.error).toMatch(/^malformed findings: /)
      expect(twice).toMatchObject({ attempts: 1, followUps: 1 })
      const requests = outcome.byModel("garbled-twice")
      expect(requests).toHaveLength(2)
      expect(requests[1]!.lastUser).toMatch(/^Your <findings> block could not be read: /)
      expect(reviewerOf(outcome, "code-quality")).toMatchObject({ status: "done", findings: [], followUps: 1 })
      expect(outcome.byModel("garbled-once")).toHaveLength(2)
    })

    test("fails a reviewer on a 401 without failing back: exactly one request to that model", () => {
      const security = reviewerOf(outcome, "security")
      expect(security).toMatchObject({
        status: "failed",
        model: "fake/unauthorised",
        modelsTried: ["fake/unauthorised"],
        attempts: 1,
      })
      expect(security.error).toMatch(/^APIError 401: /)
      expect(outcome.byModel("unauthorised")).toHaveLength(1)
      expect(outcome.byModel("never-used")).toHaveLength(0)
    })

    test("a focus note from the coordinator reaches a reviewer that is still working, in the same session", () => {
      expect(reviewerOf(outcome, "release")).toMatchObject({ status: "done", attempts: 1, followUps: 0 })
      expect(reviewerOf(outcome, "release").sessionIDs).toHaveLength(1)
      const requests = outcome.byModel("slow-release")
      const noted = requests.filter((request) => request.lastUser.includes("- check the token expiry"))
      expect(noted.length, requests.map((request) => request.lastUser.slice(0, 80)).join(" | ")).toBeGreaterThan(0)
      expect(noted[0]!.lastUser).toMatch(/^Focus notes from the coordinator/)
      expect(outcome.toolOutput).toContain("<title>expiry not checked</title>")
      expect(outcome.toolOutput).not.toContain("had finished before your focus notes arrived")
    })
  })

  // Four model chains that fail back, each for its own reason, in one run.
  describe("in one run: failing back on 503 and 429, on a retry due after the deadline, and on silence during a backoff", () => {
    let outcome: Outcome

    beforeAll(async () => {
      outcome = await review({
        reviewers: {
          security: ["fake/unavailable", "fake/security-backup"],
          performance: ["fake/rate-limited", "fake/performance-backup"],
          "code-quality": ["fake/retry-in-an-hour", "fake/quality-backup"],
          documentation: ["fake/down", "fake/docs-backup"],
        },
        limits: { idleSeconds: 3 },
        replies: {
          unavailable: statusReply(503, { headers: { "retry-after-ms": "0" } }),
          "rate-limited": statusReply(429, { headers: { "retry-after-ms": "0" } }),
          "security-backup": findingsReply([finding("found by the backup", "security")]),
          "performance-backup": findingsReply([]),
          // retry-after is honoured uncapped: OpenCode would wait an hour (docs/opencode.md#errors-and-retries).
          "retry-in-an-hour": statusReply(429, { headers: { "retry-after": "3600" } }),
          // No retry header: OpenCode backs off 2, 4, 8… s, producing no output meanwhile.
          down: statusReply(503),
          "quality-backup": findingsReply([]),
          "docs-backup": findingsReply([]),
        },
      })
    }, 90_000)

    test("fails back to the next model of the chain on 503 and 429, after OpenCode's own retries", () => {
      expect(outcome.code, outcome.stderr).toBe(0)
      expect(reviewerOf(outcome, "security")).toMatchObject({
        status: "done",
        model: "fake/security-backup",
        modelsTried: ["fake/unavailable", "fake/security-backup"],
        attempts: 2,
        findings: [finding("found by the backup", "security")],
      })
      expect(reviewerOf(outcome, "security").sessionIDs).toHaveLength(2)
      expect(reviewerOf(outcome, "performance")).toMatchObject({
        status: "done",
        model: "fake/performance-backup",
        attempts: 2,
      })
      // OpenCode retried each failing model 5 times in its session before giving up: 6 requests, one failure.
      expect(outcome.byModel("unavailable")).toHaveLength(6)
      expect(outcome.byModel("rate-limited")).toHaveLength(6)
      expect(outcome.toolOutput).toContain('attempts="2" models_tried="fake/unavailable fake/security-backup"')
      console.info(`503/429 failback: tool ${outcome.toolMs} ms`)
    })

    test("fails back at once when OpenCode's next retry is due after the deadline, and on silence during its backoff", () => {
      expect(outcome.code, outcome.stderr).toBe(0)
      const quality = reviewerOf(outcome, "code-quality")
      expect(quality).toMatchObject({ status: "done", model: "fake/quality-backup", attempts: 2 })
      // The backup was asked right after the 429, not an hour later.
      const [refused] = outcome.byModel("retry-in-an-hour")
      const [backup] = outcome.byModel("quality-backup")
      expect(backup!.at - refused!.at).toBeLessThan(10_000)
      expect(outcome.byModel("retry-in-an-hour")).toHaveLength(1)
      const documentation = reviewerOf(outcome, "documentation")
      expect(documentation).toMatchObject({ status: "done", model: "fake/docs-backup", attempts: 2 })
      expect(documentation.durationMs).toBeGreaterThanOrEqual(3_000)
      expect(outcome.byModel("down").length).toBeGreaterThanOrEqual(1)
      expect(outcome.byModel("down").length).toBeLessThan(6)
    })
  })

  test("registers the tool and explains itself when OPENCODE_REVIEWER_WORK_DIR is missing", async () => {
    const outcome = await review({
      reviewers: { security: ["fake/security-ok"] },
      replies: { "security-ok": findingsReply([]) },
      withoutWorkDir: true,
    })
    expect(outcome.code, outcome.stderr).toBe(0)
    const call = outcome.events.find((event) => event.type === "tool_use")!
    expect(call.part.state.status).toBe("completed")
    expect(call.part.state.title).toBe("spawn_reviewers could not run")
    expect(outcome.toolOutput).toContain("<error>OPENCODE_REVIEWER_WORK_DIR is not set")
    expect(outcome.metadata.reviewers).toEqual([])
    expect(outcome.byModel("security-ok")).toHaveLength(0)
  }, 90_000)
})
