import {
  assembleConfig,
  type Contributions,
  type Logger,
  type PlanView,
  runLifecycle,
  silentLogger,
} from "@opencode-reviewer/core"
import { afterAll, beforeEach, describe, expect, test } from "vitest"
import { fetchReviewerConfig } from "./fetch"
import { reviewerConfigPlugin } from "./reviewer-config"

const plannedChains: Record<string, string[]> = {
  review_coordinator: ["anthropic/claude-opus-4-7", "anthropic/claude-opus-4-6"],
  security: ["anthropic/claude-sonnet-4-6", "openai/gpt-5.3-codex"],
  documentation: ["moonshotai/kimi-k2.5"],
}

// As planReview builds it: the planned agents with their chains.
const plan: PlanView = {
  repoDir: "/repo",
  workDir: "/work",
  tier: "full",
  diff: [],
  files: [],
  agents: Object.entries(plannedChains).map(([name, models]) => ({
    name,
    role: name === "review_coordinator" ? "coordinator" : "reviewer",
    models,
  })),
}

// The control plane: a real HTTP server whose answer a test changes between jobs.
function startControlPlane() {
  let answer: { status: number; body: string } | "hang" = { status: 200, body: "{}" }
  const hung: (() => void)[] = []
  let requests = 0
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      requests += 1
      if (answer === "hang")
        return new Promise<Response>((resolve) => void hung.push(() => resolve(new Response("{}"))))
      return new Response(answer.body, { status: answer.status, headers: { "content-type": "application/json" } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/reviewer-config?token=secret-token`,
    get requests() {
      return requests
    },
    serve(document: unknown) {
      answer = { status: 200, body: JSON.stringify(document) }
    },
    answer(status: number, body: string) {
      answer = { status, body }
    },
    hang() {
      answer = "hang"
    },
    stop() {
      for (const release of hung) release()
      server.stop(true)
    },
  }
}

function capturingLogger() {
  const warnings: string[] = []
  const log: Logger = {
    ...silentLogger,
    warn: (data) => void warnings.push(String((data as { warning?: unknown }).warning ?? JSON.stringify(data))),
    child: () => log,
  }
  return { log, warnings }
}

// One "job": the lifecycle as planReview runs it, the same chains seeded and in the plan view.
async function runJob(options: { url: string; timeoutMs?: number; log?: Logger }) {
  const plugin = reviewerConfigPlugin({ url: options.url, timeoutMs: options.timeoutMs ?? 2000 })
  return runLifecycle({
    plugins: [plugin],
    plan,
    log: options.log ?? silentLogger,
    seed(store: Contributions) {
      for (const [name, models] of Object.entries(plannedChains)) {
        const role = name === "review_coordinator" ? "coordinator" : "reviewer"
        store.agents.set(name, { description: name, prompt: name.toUpperCase(), models, plugin: "core", role })
      }
    },
    assemble: (store) => assembleConfig(store, { workDir: "/work", sharedReviewerPrompt: "SHARED" }),
  })
}

const controlPlane = startControlPlane()
afterAll(() => controlPlane.stop())
beforeEach(() => controlPlane.serve({}))

describe("reviewerConfigPlugin", () => {
  test("a remote assignment re-routes a reviewer in the assembled opencode.json", async () => {
    controlPlane.serve({ version: 1, reviewers: { security: { model: "openai/gpt-5.4" } } })
    const result = await runJob({ url: controlPlane.url })
    expect(result.config.agent.security!.model).toBe("openai/gpt-5.4")
    expect(result.models.security).toEqual(["openai/gpt-5.4"])
    expect(result.models.documentation).toEqual(plannedChains.documentation)
    expect(result.warnings).toEqual([])
  })

  test("the kill switch moves a reviewer to its first model on an enabled provider; unknown providers stay", async () => {
    controlPlane.serve({ providers: { anthropic: { enabled: false }, "never-heard-of": { enabled: false } } })
    const { log, warnings } = capturingLogger()
    const result = await runJob({ url: controlPlane.url, log })
    expect(result.config.agent.security!.model).toBe("openai/gpt-5.3-codex")
    expect(result.models.security).toEqual(["openai/gpt-5.3-codex"])
    expect(result.config.agent.documentation!.model).toBe("moonshotai/kimi-k2.5")
    // The coordinator has only anthropic models: it keeps them, loudly.
    expect(result.config.model).toBe("anthropic/claude-opus-4-7")
    expect(warnings).toEqual([
      expect.stringMatching(/^review_coordinator: every model of its chain .* is on a disabled provider \(anthropic\)/),
    ])
  })

  test("failback overrides reach the chain the runtime fails back along", async () => {
    controlPlane.serve({ failback: { "anthropic/claude-sonnet-4-6": ["anthropic/claude-sonnet-4-5"] } })
    const result = await runJob({ url: controlPlane.url })
    expect(result.models.security).toEqual(["anthropic/claude-sonnet-4-6", "anthropic/claude-sonnet-4-5"])
    expect(result.config.agent.security!.model).toBe("anthropic/claude-sonnet-4-6")
  })

  test("a switch flipped between two jobs re-routes the second", async () => {
    controlPlane.serve({ providers: { anthropic: { enabled: true } } })
    const first = await runJob({ url: controlPlane.url })
    controlPlane.serve({ providers: { anthropic: { enabled: false } } })
    const second = await runJob({ url: controlPlane.url })
    controlPlane.serve({ providers: { anthropic: { enabled: true } } })
    const third = await runJob({ url: controlPlane.url })
    expect(first.config.agent.security!.model).toBe("anthropic/claude-sonnet-4-6")
    expect(second.config.agent.security!.model).toBe("openai/gpt-5.3-codex")
    expect(third.config.agent.security!.model).toBe("anthropic/claude-sonnet-4-6")
  })

  test("an agent the plan view does not list (a plugin added it) has its assembled primary as its chain", async () => {
    controlPlane.serve({ providers: { anthropic: { enabled: false } } })
    const result = await runLifecycle({
      plugins: [reviewerConfigPlugin({ url: controlPlane.url })],
      plan: { ...plan, agents: [] },
      log: silentLogger,
      seed(store) {
        store.agents.set("review_coordinator", {
          description: "c",
          prompt: "C",
          models: plannedChains.review_coordinator!,
          plugin: "core",
          role: "coordinator",
        })
        store.agents.set("security", {
          description: "s",
          prompt: "S",
          models: plannedChains.security!,
          plugin: "core",
          role: "reviewer",
        })
      },
      assemble: (store) => assembleConfig(store, { workDir: "/work", sharedReviewerPrompt: "SHARED" }),
    })
    // Nothing left to fail over to, so nothing changes: the warning tells the operator why.
    expect(result.models.security).toEqual(plannedChains.security)
  })
})

describe("a bad remote document is ignored with a warning", () => {
  const timeoutMs = 300
  const cases: [string, () => string, RegExp][] = [
    ["HTTP 500", () => (controlPlane.answer(500, "upstream broke"), controlPlane.url), /: HTTP 500/],
    ["invalid JSON", () => (controlPlane.answer(200, "{ reviewers: "), controlPlane.url), /: not valid JSON: /],
    [
      "a schema violation",
      () => (controlPlane.serve({ reviewers: { security: { model: "gpt-5.4" } } }), controlPlane.url),
      /: invalid document: reviewers\.security\.model: /,
    ],
    [
      "a document over the 1 MiB cap",
      () => (controlPlane.answer(200, `{"pad":"${"x".repeat(1024 * 1024)}"}`), controlPlane.url),
      /: the document is larger than 1048576 bytes$/,
    ],
    [
      "a server that never answers",
      () => (controlPlane.hang(), controlPlane.url),
      new RegExp(`: no answer within ${timeoutMs} ms$`),
    ],
    ["a refused connection", () => refusedUrl(), /: request failed: /],
  ]

  test.each(cases)("%s leaves the planned routing untouched", async (_name, prepare, expected) => {
    const url = prepare()
    const { log, warnings } = capturingLogger()
    const started = performance.now()
    const result = await runJob({ url, timeoutMs, log })
    const elapsed = performance.now() - started
    expect(elapsed).toBeLessThan(timeoutMs + 1000)
    expect(result.models).toEqual(plannedChains)
    expect(result.config.agent.security!.model).toBe("anthropic/claude-sonnet-4-6")
    expect(result.warnings).toEqual([])
    expect(warnings).toEqual([expect.stringMatching(expected)])
    expect(warnings[0]).toMatch(/^remote reviewer config ignored \(http:\/\/127\.0\.0\.1:\d+\/reviewer-config\)/)
    expect(warnings[0]).not.toContain("secret-token")
  })
})

describe("fetchReviewerConfig", () => {
  test("returns the document with unknown-key warnings", async () => {
    controlPlane.serve({ reviewers: { security: { model: "openai/gpt-5.4" } }, owner: "platform" })
    const fetched = await fetchReviewerConfig(controlPlane.url)
    expect(fetched).toEqual({
      ok: true,
      document: { reviewers: { security: { model: "openai/gpt-5.4" } } },
      warnings: [expect.stringMatching(/unknown key "owner" is ignored$/)],
    })
  })

  test("stops when the caller aborts", async () => {
    controlPlane.hang()
    const before = controlPlane.requests
    const controller = new AbortController()
    const pending = fetchReviewerConfig(controlPlane.url, { signal: controller.signal, timeoutMs: 20_000 })
    await waitFor(() => controlPlane.requests > before)
    controller.abort()
    expect(await pending).toEqual({ ok: false, warning: expect.stringMatching(/: aborted$/) })
  })

  test("refuses a URL that is not http(s)", async () => {
    expect(await fetchReviewerConfig("file:///etc/passwd")).toEqual({
      ok: false,
      warning: expect.stringMatching(/not a valid http\(s\) URL/),
    })
  })
})

// A port that was just listening and is now closed: connecting to it is refused.
function refusedUrl(): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") })
  const port = server.port
  server.stop(true)
  return `http://127.0.0.1:${port}/reviewer-config?token=secret-token`
}

async function waitFor(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}
