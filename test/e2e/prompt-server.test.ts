import { readdirSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  createOpencodeSandbox,
  findOpencodeBinary,
  hangReply,
  type ModelServer,
  type OpencodeSandbox,
  startModelServer,
  statusReply,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import {
  PromptModelError,
  type PromptServer,
  promptAgentName,
  startPromptServer,
} from "../../packages/opencode/src/index"

// One-shot prompts (the eval command's judge) through a real `opencode serve` and the scripted
// model: one server for the file, a new session per prompt, no tools offered.

const cost = { input: 3, output: 15, cache_read: 0.3 }

let model: ModelServer
let sandbox: OpencodeSandbox
let directory: string
let server: PromptServer

function config() {
  return {
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: model.url, apiKey: "test" },
        // `temperature: true` is the models.dev flag that makes OpenCode send the agent's temperature.
        models: { judge: { temperature: true, limit: { context: 100_000, output: 4096 }, cost } },
      },
    },
  }
}

function start(): Promise<PromptServer> {
  return startPromptServer({ binary: findOpencodeBinary(), cwd: directory, env: sandbox.env(), config: config() })
}

beforeAll(async () => {
  model = await startModelServer()
  sandbox = await createOpencodeSandbox()
  directory = await mkdtemp(join(tmpdir(), "ocr-prompt-"))
  server = await start()
})

afterAll(async () => {
  await server?.close()
  await model?.close()
  await sandbox?.remove()
  if (directory) await rm(directory, { recursive: true, force: true })
})

describe("startPromptServer against the real opencode serve", () => {
  test("a prompt returns the scripted text with its tokens and cost, sent with the system text and no tools", async () => {
    const before = model.requests.length
    model.rule(
      (request) => request.lastUser === "Is finding A the same as B?",
      text("yes: same line, same bug", {
        usage: { input: 120, output: 8, cacheRead: 40 },
      }),
    )

    const answer = await server.prompt({
      model: "fake/judge",
      system: "You compare code review comments.",
      user: "Is finding A the same as B?",
    })

    expect(answer).toMatchObject({ text: "yes: same line, same bug", finish: "stop" })
    // openai-compatible reports input as prompt minus cached tokens (docs/opencode.md, step_finish).
    expect(answer.tokens).toEqual({ input: 120, output: 8, reasoning: 0, cacheRead: 40, cacheWrite: 0 })
    expect(answer.costUsd).toBeCloseTo((120 * cost.input + 8 * cost.output + 40 * cost.cache_read) / 1e6, 12)
    // One request: the session's title is given, so no title request either.
    const requests = model.requests.slice(before)
    expect(requests).toHaveLength(1)
    const request = requests[0]!
    expect(request).toMatchObject({ model: "judge", isTitle: false, lastUser: "Is finding A the same as B?" })
    expect(request.system).toContain("You compare code review comments.")
    // The agent's prompt replaced OpenCode's default system prompt.
    expect(request.system).not.toContain("You are opencode")
    expect(request.tools).toEqual([])
    expect(request.body.tools).toBeUndefined()
    expect(request.body.temperature).toBe(0)
  })

  test("four prompts in parallel on one server each get their own answer", async () => {
    const before = model.requests.length
    model.rule(
      (request) => request.lastUser.startsWith("parallel "),
      (request) => text(`answer to ${request.lastUser}`, { delayMs: 400 }),
      { times: 4 },
    )

    const answers = await Promise.all(
      [1, 2, 3, 4].map((n) => server.prompt({ model: "fake/judge", system: "Judge.", user: `parallel ${n}` })),
    )

    expect(answers.map((answer) => answer.text)).toEqual([1, 2, 3, 4].map((n) => `answer to parallel ${n}`))
    expect(new Set(answers.map((answer) => answer.sessionID)).size).toBe(4)
    // They ran at once: every request reached the model before the first answer ended.
    const requests = model.requests.slice(before)
    expect(requests).toHaveLength(4)
    const firstEnd = Math.min(...requests.map((request) => request.finishedAt ?? Number.POSITIVE_INFINITY))
    for (const request of requests) expect(request.at).toBeLessThan(firstEnd)
  })

  test("a 401 from the model rejects with the provider's message and status", async () => {
    const before = model.requests.length
    model.rule((request) => request.lastUser === "refused", statusReply(401, { message: "Invalid API key (judge)" }))

    const failure = await server.prompt({ model: "fake/judge", system: "Judge.", user: "refused" }).catch((e) => e)

    expect(failure).toBeInstanceOf(PromptModelError)
    expect(failure.message).toContain("Invalid API key (judge)")
    expect(failure.message).toContain("401")
    expect(failure.data).toMatchObject({ statusCode: 401, retryable: false, error: { name: "APIError" } })
    // Not retried.
    expect(model.requests.length - before).toBe(1)
  })

  test("an abort rejects at once and aborts the session, which ends its model request", async () => {
    model.rule((request) => request.lastUser === "hang", hangReply())
    const controller = new AbortController()

    const pending = server.prompt({ model: "fake/judge", system: "Judge.", user: "hang", signal: controller.signal })
    const [request] = await model.wait(1, { match: (r) => r.lastUser === "hang" })
    controller.abort(new Error("judge cancelled"))

    await expect(pending).rejects.toThrow("judge cancelled")
    // OpenCode closed the hung request to the model: the session was aborted, not just our fetch.
    await expect.poll(() => request!.finishedAt, { timeout: 10_000 }).toBeDefined()
  })

  test("the prompt agent is what answered", async () => {
    const agents = (await (
      await fetch(`${server.url}/agent`, {
        headers: { "x-opencode-directory": encodeURIComponent(directory) },
      })
    ).json()) as { name: string; permission: unknown }[]
    expect(agents.map((agent) => agent.name)).toContain(promptAgentName)
  })

  // Last, on the file's server: a second `opencode serve` only for this would cost seconds of CPU.
  test("close ends the server and leaves no process of its group behind", async () => {
    model.rule((request) => request.lastUser === "last", text("done"))
    expect((await server.prompt({ model: "fake/judge", system: "Judge.", user: "last" })).text).toBe("done")
    expect(groupMembers(server.pid)).toContain(server.pid)

    await server.close()
    await server.close()

    expect(groupMembers(server.pid)).toEqual([])
    await expect(fetch(`${server.url}/global/health`)).rejects.toThrow()
  })
})

/** Live processes whose process group is `group` (the server is its group's leader). */
function groupMembers(group: number): number[] {
  const members: number[] = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "latin1")
      // Fields after the command name (in parentheses, may hold spaces): state, ppid, pgrp.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(pgrp) === group && state !== "Z") members.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return members
}

describe("startPromptServer with read-only tools", () => {
  test("one prompt is a whole turn: the model reads a file, a denied path is refused, the answer is the last text", async () => {
    const repo = await mkdtemp(join(tmpdir(), "ocr-prompt-tools-"))
    await writeFile(join(repo, "code.ts"), "export const answer = 42\n")
    await mkdir(join(repo, ".git"))
    await writeFile(join(repo, ".git", "config"), "[remote]\n  url = https://token:glpat-secret@example.com/x.git\n")
    const readOnly = {
      "*": "deny",
      read: { "*": "allow", ".git/*": "deny", "*/.git/*": "deny" },
      grep: "allow",
      glob: "allow",
      list: "allow",
    }
    const tools = await startPromptServer({
      binary: findOpencodeBinary(),
      cwd: repo,
      env: sandbox.env(),
      config: config(),
      permission: readOnly,
    })
    try {
      model.rule(
        (request) => request.lastUser === "What does code.ts export?" && request.toolResults.length === 0,
        toolCall("read", { filePath: join(repo, "code.ts") }),
      )
      model.rule(
        (request) => request.lastUser === "What does code.ts export?" && request.toolResults.length === 1,
        toolCall("read", { filePath: join(repo, ".git", "config") }),
      )
      model.rule(
        (request) => request.lastUser === "What does code.ts export?" && request.toolResults.length === 2,
        (request) => text(`read: ${request.toolResults.map((result) => result.content).join(" | ")}`),
      )
      const answer = await tools.prompt({
        model: "fake/judge",
        system: "Read before you answer.",
        user: "What does code.ts export?",
      })
      const turn = model.requests.filter((request) => request.lastUser === "What does code.ts export?")
      // OpenCode 1.18.33 offers no "list" tool of its own; read, grep and glob are what a reader gets.
      expect(turn[0]!.tools.sort()).toEqual(["glob", "grep", "read"])
      expect(answer.text).toContain("export const answer = 42")
      expect(answer.text).not.toContain("glpat-secret")
    } finally {
      await tools.close()
      await rm(repo, { recursive: true, force: true })
    }
  })
})
