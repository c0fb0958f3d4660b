import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { OpencodeConfig } from "@opencode-reviewer/opencode/config"
import { toolUseOf } from "@opencode-reviewer/opencode/events"
import { fakeOpencodePath } from "@opencode-reviewer/testkit"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { OpencodeStartError } from "../model/errors"
import { silentLogger } from "../model/logger"
import { childEnv } from "./child-env"
import { type CoordinatorOptions, runCoordinator } from "./coordinator"

const config = {
  $schema: "https://opencode.ai/config.json",
  default_agent: "review_coordinator",
  model: "fake/top",
  small_model: "fake/top",
  share: "disabled",
  autoupdate: false,
  snapshot: false,
  lsp: false,
  formatter: false,
  provider: {},
  agent: { review_coordinator: { mode: "primary", model: "fake/top", permission: { "*": "deny" } } },
} as OpencodeConfig

const step = (reason: string, input = 100, output = 20) => ({
  type: "step_finish",
  sessionID: "ses_1",
  part: {
    type: "step-finish",
    reason,
    tokens: { total: input + output, input, output, reasoning: 0, cache: { read: 7, write: 3 } },
    cost: 0.001,
  },
})
const text = (value: string) => ({ type: "text", sessionID: "ses_1", part: { type: "text", text: value } })
const apiError = (statusCode: number, isRetryable: boolean) => ({
  type: "error",
  sessionID: "ses_1",
  error: {
    name: "APIError",
    data: {
      message: `status ${statusCode}`,
      statusCode,
      isRetryable,
      metadata: { url: "https://api.example.test/v1/chat/completions" },
    },
  },
})

let dir: string
let log: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ocr-coordinator-"))
  log = join(dir, "calls.jsonl")
})
afterEach(() => rm(dir, { recursive: true, force: true }))

async function run(scripts: unknown[], overrides: Partial<CoordinatorOptions> = {}) {
  const progress: string[] = []
  const result = await runCoordinator({
    binary: fakeOpencodePath,
    repoDir: dir,
    title: "review",
    prompt: "<review_request/>",
    config,
    configFile: join(dir, "opencode.json"),
    models: ["fake/top", "fake/top-old"],
    env: { PATH: process.env.PATH!, FAKE_OPENCODE: JSON.stringify(scripts), FAKE_OPENCODE_LOG: log },
    coordinatorMinutes: 1,
    heartbeatSeconds: 30,
    log: silentLogger,
    onProgress: (line) => void progress.push(line),
    ...overrides,
  })
  const calls = (await readFile(log, "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as {
          argv: string[]
          stdinBytes: number
          stdinHead: string
          env: string[]
          pwd: string
          model: string
        },
    )
  return { result, calls, progress }
}

describe("runCoordinator", () => {
  test("sends the prompt on stdin with the run flags, PWD set, and collects usage and text", async () => {
    const { result, calls } = await run([{ lines: [{ type: "step_start" }, text("done"), step("stop")] }])
    expect(result.ok).toBe(true)
    expect(calls).toHaveLength(1)
    expect(calls[0]!.argv).toEqual(["run", "--format", "json", "--agent", "review_coordinator", "--title", "review"])
    expect(calls[0]!.stdinHead).toBe("<review_request/>")
    expect(calls[0]!.pwd).toBe(dir)
    expect(calls[0]!.env).toContain("OPENCODE_DISABLE_PROJECT_CONFIG")
    expect(result.finalText).toBe("done")
    expect(result.steps).toEqual([
      {
        agent: "review_coordinator",
        model: "fake/top",
        input: 100,
        output: 20,
        reasoning: 0,
        cacheRead: 7,
        cacheWrite: 3,
        costUsd: 0.001,
      },
    ])
  })

  test("passes a 2 MB prompt through stdin intact", async () => {
    const prompt = "<review_request>" + "x".repeat(2 * 1024 * 1024) + "</review_request>"
    const { result, calls } = await run([{ lines: [step("stop")] }], { prompt })
    expect(result.ok).toBe(true)
    expect(calls[0]!.stdinBytes).toBe(prompt.length)
  })

  test("survives lines that are not JSON and keeps reading", async () => {
    const { result } = await run([{ lines: ["garbage {", text("after garbage"), "", step("stop")] }])
    expect(result.ok).toBe(true)
    expect(result.badLines).toBe(1)
    expect(result.finalText).toBe("after garbage")
  })

  test("fails back to the next model on a retryable API error, hot-swapping the config", async () => {
    const { result, calls, progress } = await run([
      { lines: [apiError(503, true)], exit: 1 },
      { lines: [text("ok"), step("stop")] },
    ])
    expect(result.ok).toBe(true)
    expect(calls.map((call) => call.model)).toEqual(["fake/top", "fake/top-old"])
    expect(JSON.parse(await readFile(join(dir, "opencode.json"), "utf8")).agent.review_coordinator.model).toBe(
      "fake/top-old",
    )
    expect(progress[0]).toMatch(/failing back to fake\/top-old/)
  })

  test("does not fail back on 401, and names the provider", async () => {
    const { result, calls } = await run([{ lines: [apiError(401, false)], exit: 1 }, { lines: [step("stop")] }])
    expect(result.ok).toBe(false)
    expect(calls).toHaveLength(1)
    expect(result.attempts[0]!.error).toMatchObject({ verdict: "fatal", statusCode: 401, provider: "api.example.test" })
  })

  test("retries the same model when the answer was cut off by length", async () => {
    const { result, calls } = await run([{ lines: [step("length")] }, { lines: [step("stop")] }])
    expect(result.ok).toBe(true)
    expect(calls.map((call) => call.model)).toEqual(["fake/top", "fake/top"])
  })

  test("retries with the next model when the process dies before any output, then gives a clear error", async () => {
    const { result, calls } = await run([{ stderr: "panic: cannot start\n", exit: 3 }])
    expect(result.ok).toBe(false)
    expect(calls.map((call) => call.model)).toEqual(["fake/top", "fake/top-old"])
    expect(result.attempts.map((attempt) => attempt.outcome)).toEqual(["crash", "crash"])
    expect(result.attempts[1]!.stderrTail).toContain("panic: cannot start")
  })

  test("names the binary and the fix when opencode cannot be started at all", async () => {
    const missing = join(dir, "no-such-opencode")
    const error = await run([], { binary: missing }).then(
      () => null,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(OpencodeStartError)
    expect((error as Error).message).toBe(`cannot start opencode at ${missing}: ENOENT`)
    expect((error as OpencodeStartError).data.hint).toContain("OPENCODE_BIN")
  })

  test("kills a hung coordinator at the outer timeout", async () => {
    const started = performance.now()
    const { result } = await run([{ lines: [{ type: "step_start" }], hang: true }], { coordinatorMinutes: 0.01 })
    expect(result.ok).toBe(false)
    expect(result.attempts).toHaveLength(1)
    expect(result.attempts[0]!.outcome).toBe("timeout")
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  test("prints a heartbeat while the model is quiet", async () => {
    const { progress } = await run([{ lines: [{ type: "step_start" }, step("stop")], lineDelayMs: 400 }], {
      heartbeatSeconds: 0.1,
    })
    expect(progress.some((line) => /^Model is thinking\.\.\. \(\d+s since last output\)$/.test(line))).toBe(true)
  })
})

describe("childEnv", () => {
  test("drops CI tokens and unrelated secrets, keeps basics and what the config references", () => {
    const { env, dropped } = childEnv({
      parent: {
        PATH: "/bin",
        HOME: "/root",
        LC_ALL: "C",
        CI_JOB_TOKEN: "job",
        GITLAB_TOKEN: "glpat",
        AWS_SECRET_ACCESS_KEY: "aws",
        ANTHROPIC_API_KEY: "sk-ant",
        OPENAI_API_KEY: "sk-oa",
        GATEWAY_KEY: "gw",
      },
      config: { provider: { gw: { options: { apiKey: "{env:GATEWAY_KEY}" } } } },
      models: ["anthropic/claude-opus-4-7", "gw/model"],
      extra: { OPENCODE_REVIEWER_WORK_DIR: "/w" },
    })
    expect(env).toEqual({
      PATH: "/bin",
      HOME: "/root",
      LC_ALL: "C",
      ANTHROPIC_API_KEY: "sk-ant",
      GATEWAY_KEY: "gw",
      OPENCODE_REVIEWER_WORK_DIR: "/w",
    })
    expect(dropped).toEqual(["AWS_SECRET_ACCESS_KEY", "CI_JOB_TOKEN", "GITLAB_TOKEN", "OPENAI_API_KEY"])
  })
})

describe("runCoordinator stopWhen", () => {
  test("ends the run as a success at the chosen event without waiting for the process", async () => {
    const submit = {
      type: "tool_use",
      part: { type: "tool", tool: "review_submit_review", state: { status: "completed", output: "recorded" } },
    }
    const started = performance.now()
    const { result } = await run([{ lines: [step("tool-calls"), submit], hang: true }], {
      stopWhen: (event) => toolUseOf(event)?.tool === "review_submit_review",
    })
    expect(result.ok).toBe(true)
    expect(result.attempts).toHaveLength(1)
    expect(result.toolUses.map((use) => use.tool)).toEqual(["review_submit_review"])
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
