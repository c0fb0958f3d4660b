import {
  createOpencodeSandbox,
  createTempRepo,
  lengthReply,
  type ModelServer,
  rateLimitReply,
  runOpencode,
  startModelServer,
  statusReply,
  text,
  toolCall,
  toolCalls,
} from "@opencode-reviewer/testkit"
import { describe, expect, onTestFinished, test } from "vitest"

// The scripted model server (packages/testkit) as the real opencode binary sees it: what a fake is
// worth is what its real client makes of it. The server's own unit tests are beside it.

async function start(options?: Parameters<typeof startModelServer>[0]): Promise<ModelServer> {
  const server = await startModelServer(options)
  onTestFinished(() => server.close())
  return server
}

describe("the real opencode binary against the scripted server", () => {
  const cost = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }

  async function runAgainst(
    server: ModelServer,
    prompt: string,
    setup: { files?: Record<string, string>; script?: (repo: string) => void; title?: boolean } = {},
  ) {
    const sandbox = await createOpencodeSandbox()
    const repo = await createTempRepo()
    try {
      await repo.write({ "README.md": "# fixture\n", ...setup.files })
      repo.commit("fixture")
      setup.script?.(repo.dir)
      const config = {
        provider: {
          fake: {
            npm: "@ai-sdk/openai-compatible",
            options: { baseURL: server.url, apiKey: "test" },
            models: { m: { limit: { context: 100000, output: 4096 }, cost } },
          },
        },
        model: "fake/m",
      }
      const args = ["run", "--format", "json", ...(setup.title === false ? [] : ["--title", "t"])]
      const run = await runOpencode(sandbox, args, {
        cwd: repo.dir,
        stdin: prompt,
        env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(config) },
        timeoutMs: 60_000,
      })
      const lines = run.stdout.split("\n").filter((line) => line.trim() !== "")
      return { ...run, repo: repo.dir, events: lines.map((line) => JSON.parse(line)) as any[] }
    } finally {
      await Promise.all([sandbox.remove(), repo.remove()])
    }
  }

  test("a text reply becomes a text event and step_finish carries the sent tokens and a cost", {
    timeout: 60_000,
  }, async () => {
    const server = await start()
    server.enqueue(
      text("Hello from the scripted model.", { usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 30 } }),
    )
    const run = await runAgainst(server, "Say hello")
    expect(run.code, run.stderr).toBe(0)
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("Hello from the scripted model.")
    const finish = run.events.find((event) => event.type === "step_finish")?.part
    // openai-compatible has no cache-write field: OpenCode reports input = prompt - cached, so the
    // 30 cache-write tokens land in input and cache.write stays 0.
    expect(finish.tokens).toEqual({ total: 200, input: 130, output: 20, reasoning: 0, cache: { read: 50, write: 0 } })
    expect(finish.cost).toBeCloseTo((130 * cost.input + 20 * cost.output + 50 * cost.cache_read) / 1e6, 12)
    expect(finish.reason).toBe("stop")
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]).toMatchObject({ model: "m", isTitle: false, lastUser: "Say hello" })
    expect(server.requests[0]?.tools).toContain("read")
    expect(server.requests[0]?.body.stream_options).toEqual({ include_usage: true })
  })

  test("a read tool call runs and its result reaches the second request", { timeout: 60_000 }, async () => {
    const server = await start()
    const run = await runAgainst(server, "What is the answer?", {
      files: { "src/app.ts": "export const answer = 42\n" },
      script: (repo) => server.enqueue(toolCall("read", { filePath: `${repo}/src/app.ts` }), text("The answer is 42.")),
    })
    expect(run.code, run.stderr).toBe(0)
    const tool = run.events.find((event) => event.type === "tool_use")?.part
    expect(tool).toMatchObject({ tool: "read", callID: "call_1_0", state: { status: "completed" } })
    expect(run.events.filter((event) => event.type === "step_finish").map((event) => event.part.reason)).toEqual([
      "tool-calls",
      "stop",
    ])
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("The answer is 42.")
    expect(server.requests).toHaveLength(2)
    expect(server.requests[1]?.toolResults).toHaveLength(1)
    expect(server.requests[1]?.toolResults[0]?.toolCallId).toBe("call_1_0")
    expect(server.requests[1]?.toolResults[0]?.content).toContain("1: export const answer = 42")
  })

  test("parallel read calls in one answer both run, and one request carries both results", {
    timeout: 60_000,
  }, async () => {
    const server = await start()
    const run = await runAgainst(server, "Compare the two files", {
      files: { "a.ts": "export const a = 1\n", "b.ts": "export const b = 2\n" },
      script: (repo) =>
        server.enqueue(
          toolCalls([
            { name: "read", args: { filePath: `${repo}/a.ts` } },
            { name: "read", args: { filePath: `${repo}/b.ts` } },
          ]),
          text("a is 1, b is 2."),
        ),
    })
    expect(run.code, run.stderr).toBe(0)
    // OpenCode prints a tool_use event as each call completes, so their order is the reads' race.
    const printed = run.events.filter((event) => event.type === "tool_use").map((event) => event.part.callID)
    expect(printed.sort()).toEqual(["call_1_0", "call_1_1"])
    expect(server.requests).toHaveLength(2)
    const results = server.requests[1]?.toolResults ?? []
    expect(results.map((result) => result.toolCallId).sort()).toEqual(["call_1_0", "call_1_1"])
    expect(results.find((result) => result.toolCallId === "call_1_1")?.content).toContain("1: export const b = 2")
  })

  test("a 401 is one request and one APIError event with statusCode 401", { timeout: 60_000 }, async () => {
    const server = await start()
    server.enqueue(statusReply(401))
    const run = await runAgainst(server, "Say hello")
    expect(run.code).toBe(1)
    const errors = run.events.filter((event) => event.type === "error")
    expect(errors).toHaveLength(1)
    expect(errors[0].error).toMatchObject({ name: "APIError", data: { statusCode: 401, isRetryable: false } })
    expect(errors[0].error.data.message).toContain("model-server 401")
    expect(server.requests).toHaveLength(1)
  })

  test("finish_reason length ends the step with reason length and no error", { timeout: 60_000 }, async () => {
    const server = await start()
    server.enqueue(lengthReply("This answer was cut o"))
    const run = await runAgainst(server, "Say hello")
    expect(run.code, run.stderr).toBe(0)
    expect(run.events.find((event) => event.type === "step_finish")?.part.reason).toBe("length")
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("This answer was cut o")
    expect(run.events.filter((event) => event.type === "error")).toEqual([])
  })

  test("a 429 with retry-after-ms: 0 is retried at once and the run succeeds", { timeout: 60_000 }, async () => {
    const server = await start()
    server.enqueue(rateLimitReply({ retryAfterMs: 0 }), text("after the retry"))
    const run = await runAgainst(server, "Say hello")
    expect(run.code, run.stderr).toBe(0)
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("after the retry")
    expect(server.requests).toHaveLength(2)
    expect((server.requests[1]?.at ?? 0) - (server.requests[0]?.finishedAt ?? 0)).toBeLessThan(1_900)
  })

  test("without --title the title request is answered automatically and leaves the queue alone", {
    timeout: 60_000,
  }, async () => {
    const server = await start()
    server.enqueue(text("the real answer"))
    const run = await runAgainst(server, "Explain the README", { title: false })
    expect(run.code, run.stderr).toBe(0)
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("the real answer")
    expect(server.requests.map((request) => request.isTitle).sort()).toEqual([false, true])
    const title = server.requests.find((request) => request.isTitle)
    expect(title?.tools).toEqual([])
    expect(title?.lastUser).toBe("Explain the README")
  })

  test("an unscripted request fails the run fast with the server's message", { timeout: 60_000 }, async () => {
    const server = await start()
    const run = await runAgainst(server, "Say hello")
    expect(run.code).toBe(1)
    const error = run.events.find((event) => event.type === "error")
    // OpenCode retries a 500 five times; retry-after-ms: 0 makes that immediate.
    expect(error?.error.data.message).toBe("no scripted reply for request 6 (model m)")
    expect(server.requests).toHaveLength(6)
  })
})
