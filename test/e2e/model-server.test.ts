import {
  createOpencodeSandbox,
  createTempRepo,
  lengthReply,
  type ModelServer,
  type RecordedRequest,
  rateLimitReply,
  runOpencode,
  startModelServer,
  statusReply,
  text,
  toolCall,
  toolCalls,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest"

// The scripted model server (packages/testkit) as the real opencode binary sees it: what a fake is
// worth is what its real client makes of it. The server's own unit tests are beside it.
// Each `opencode run` costs seconds of CPU to start, so the answers that keep a run going (a retried
// 429, tool calls, the title request) share one run; the ones that end it (stop, length, 401, a 500
// given up) are one run each.

const cost = { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 }

async function start(options?: Parameters<typeof startModelServer>[0]): Promise<ModelServer> {
  const server = await startModelServer(options)
  onTestFinished(() => server.close())
  return server
}

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

describe("the real opencode binary against the scripted server: one run of a 429, a read, two parallel reads and a text answer, without --title", () => {
  const prompt = "What do the files say?"
  let server: ModelServer
  let run: Awaited<ReturnType<typeof runAgainst>>
  // The requests of the conversation, in order (the title request aside): the 429, its retry (a
  // read call), the request after the read (two parallel reads), the one after them (the text).
  let asked: RecordedRequest[]

  beforeAll(async () => {
    server = await startModelServer()
    run = await runAgainst(server, prompt, {
      files: {
        "src/app.ts": "export const answer = 42\n",
        "a.ts": "export const a = 1\n",
        "b.ts": "export const b = 2\n",
      },
      title: false,
      script: (repo) =>
        server.enqueue(
          rateLimitReply({ retryAfterMs: 0 }),
          toolCall("read", { filePath: `${repo}/src/app.ts` }),
          toolCalls([
            { name: "read", args: { filePath: `${repo}/a.ts` } },
            { name: "read", args: { filePath: `${repo}/b.ts` } },
          ]),
          text("The answer is 42, a is 1, b is 2.", {
            usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 30 },
          }),
        ),
    })
    asked = server.requests.filter((request) => !request.isTitle)
  }, 90_000)

  afterAll(async () => {
    await server?.close()
  })

  test("a 429 with retry-after-ms: 0 is retried at once and the run succeeds", () => {
    expect(run.code, run.stderr).toBe(0)
    expect(asked).toHaveLength(4)
    expect(asked[1]!.lastUser).toBe(prompt)
    expect(asked[1]!.at - (asked[0]!.finishedAt ?? 0)).toBeLessThan(1_900)
  })

  test("a read tool call runs and its result reaches the next request", () => {
    const callID = `call_${asked[1]!.id}_0`
    const tool = run.events.find((event) => event.type === "tool_use" && event.part.callID === callID)?.part
    expect(tool).toMatchObject({ tool: "read", callID, state: { status: "completed" } })
    expect(asked[2]!.toolResults).toHaveLength(1)
    expect(asked[2]!.toolResults[0]?.toolCallId).toBe(callID)
    expect(asked[2]!.toolResults[0]?.content).toContain("1: export const answer = 42")
  })

  test("parallel read calls in one answer both run, and one request carries both results", () => {
    const callIDs = [`call_${asked[2]!.id}_0`, `call_${asked[2]!.id}_1`]
    // OpenCode prints a tool_use event as each call completes, so their order is the reads' race.
    const printed = run.events
      .filter((event) => event.type === "tool_use" && callIDs.includes(event.part.callID))
      .map((event) => event.part.callID)
    expect(printed.sort()).toEqual(callIDs)
    const results = asked[3]!.toolResults.filter((result) => callIDs.includes(result.toolCallId))
    expect(results.map((result) => result.toolCallId).sort()).toEqual(callIDs)
    expect(results.find((result) => result.toolCallId === callIDs[1])?.content).toContain("1: export const b = 2")
    expect(run.events.filter((event) => event.type === "step_finish").map((event) => event.part.reason)).toEqual([
      "tool-calls",
      "tool-calls",
      "stop",
    ])
  })

  test("a text reply becomes a text event and step_finish carries the sent tokens and a cost", () => {
    expect(run.events.find((event) => event.type === "text")?.part.text).toBe("The answer is 42, a is 1, b is 2.")
    const finish = run.events.filter((event) => event.type === "step_finish").at(-1)?.part
    // openai-compatible has no cache-write field: OpenCode reports input = prompt - cached, so the
    // 30 cache-write tokens land in input and cache.write stays 0.
    expect(finish.tokens).toEqual({ total: 200, input: 130, output: 20, reasoning: 0, cache: { read: 50, write: 0 } })
    expect(finish.cost).toBeCloseTo((130 * cost.input + 20 * cost.output + 50 * cost.cache_read) / 1e6, 12)
    expect(finish.reason).toBe("stop")
    expect(asked[0]).toMatchObject({ model: "m", isTitle: false, lastUser: prompt })
    expect(asked[0]?.tools).toContain("read")
    expect(asked[0]?.body.stream_options).toEqual({ include_usage: true })
  })

  test("without --title the title request is answered automatically and leaves the queue alone", () => {
    // Every scripted reply went to the conversation, in order; the title request took none of them.
    expect(asked.map((request) => request.reply?.type)).toEqual(["status", "tool", "tool", "text"])
    expect(server.requests.map((request) => request.isTitle).sort()).toEqual([false, false, false, false, true])
    const title = server.requests.find((request) => request.isTitle)
    expect(title?.tools).toEqual([])
    expect(title?.lastUser).toBe(prompt)
  })
})

describe("the real opencode binary against the scripted server: answers that end a run", () => {
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
