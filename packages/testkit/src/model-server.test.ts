import { describe, expect, onTestFinished, test } from "vitest"
import {
  contextOverflowReply,
  findingsReply,
  findingsXml,
  hangReply,
  lengthReply,
  type ModelServer,
  promptCacheInput,
  rateLimitReply,
  resetReply,
  stallReply,
  startModelServer,
  statusReply,
  text,
  titleSystemMarker,
  toolCall,
  toolCalls,
} from "./model-server"

async function start(options?: Parameters<typeof startModelServer>[0]): Promise<ModelServer> {
  const server = await startModelServer(options)
  onTestFinished(() => server.close())
  return server
}

async function json(response: Response | Promise<Response>): Promise<any> {
  return (await response).json()
}

function chat(server: ModelServer, body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${server.url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer test" },
    body: JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }], ...body }),
    ...init,
  })
}

/** The parsed `data:` payloads of an SSE body, with the final [DONE] kept as the string. */
async function events(response: Response): Promise<any[]> {
  const body = await response.text()
  return body
    .split("\n\n")
    .filter((block) => block.startsWith("data: "))
    .map((block) => block.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)))
}

function contentOf(chunks: any[]): string {
  return chunks.map((chunk) => chunk?.choices?.[0]?.delta?.content ?? "").join("")
}

function finishOf(chunks: any[]): string | undefined {
  return chunks.map((chunk) => chunk?.choices?.[0]?.finish_reason).find((reason) => reason)
}

describe("scripted model server over HTTP", () => {
  test("streams a text reply in chunks that reassemble, then finish, usage and [DONE]", async () => {
    const server = await start()
    server.enqueue(text("The quick brown fox jumps over the lazy dog.", { chunkSize: 5 }))
    const response = await chat(server, {})
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const chunks = await events(response)
    expect(chunks[0].choices[0].delta.role).toBe("assistant")
    expect(contentOf(chunks)).toBe("The quick brown fox jumps over the lazy dog.")
    expect(chunks.filter((chunk) => chunk?.choices?.[0]?.delta?.content).length).toBe(9)
    expect(finishOf(chunks)).toBe("stop")
    expect(chunks.at(-1)).toBe("[DONE]")
    const usage = chunks.at(-2)
    expect(usage.choices).toEqual([])
    expect(usage.usage.completion_tokens).toBeGreaterThan(0)
  })

  test("streams a tool call whose deltas reassemble to the name and JSON arguments", async () => {
    const server = await start()
    const args = { filePath: "/repo/src/app.ts", offset: 3, nested: { list: [1, 2, "three"] } }
    server.enqueue(toolCall("read", args, { text: "Let me look." }))
    const chunks = await events(await chat(server, {}))
    expect(contentOf(chunks)).toBe("Let me look.")
    const deltas = chunks.flatMap((chunk) => chunk?.choices?.[0]?.delta?.tool_calls ?? [])
    expect(deltas[0]).toMatchObject({
      index: 0,
      id: "call_1_0",
      type: "function",
      function: { name: "read", arguments: "" },
    })
    expect(deltas.length).toBeGreaterThan(2)
    const joined = deltas.map((delta) => delta.function?.arguments ?? "").join("")
    expect(JSON.parse(joined)).toEqual(args)
    expect(finishOf(chunks)).toBe("tool_calls")
  })

  test("streams parallel tool calls, each with its own index and id, and sends them whole without streaming", async () => {
    const server = await start()
    const calls = [
      { name: "read", args: { filePath: "/work/diff/a.patch" } },
      { name: "read", args: { filePath: "/work/diff/b.patch" } },
    ]
    server.enqueue(toolCalls(calls), toolCalls(calls))
    const deltas = (await events(await chat(server, {}))).flatMap(
      (chunk) => chunk?.choices?.[0]?.delta?.tool_calls ?? [],
    )
    const byIndex = [0, 1].map((index) => deltas.filter((delta) => delta.index === index))
    expect(byIndex.map((list) => list[0]!.id)).toEqual(["call_1_0", "call_1_1"])
    expect(byIndex.map((list) => JSON.parse(list.map((delta) => delta.function?.arguments ?? "").join("")))).toEqual(
      calls.map((call) => call.args),
    )
    const whole = await json(chat(server, { stream: false }))
    expect(
      whole.choices[0].message.tool_calls.map((call: any) => [call.id, JSON.parse(call.function.arguments)]),
    ).toEqual([
      ["call_2_0", calls[0]!.args],
      ["call_2_1", calls[1]!.args],
    ])
  })

  test("reports usage as prompt = input + cache read + cache write, with cached_tokens", async () => {
    const server = await start()
    server.enqueue(text("ok", { usage: { input: 100, output: 20, cacheRead: 50, cacheWrite: 30 } }))
    const chunks = await events(await chat(server, {}))
    expect(chunks.at(-2).usage).toEqual({
      prompt_tokens: 180,
      completion_tokens: 20,
      total_tokens: 200,
      prompt_tokens_details: { cached_tokens: 50, cache_write_tokens: 30 },
    })
  })

  test("answers non-streaming requests with a chat.completion body", async () => {
    const server = await start()
    server.enqueue(toolCall("grep", { pattern: "TODO" }), lengthReply("cut"))
    const first = await json(chat(server, { stream: false }))
    expect(first.object).toBe("chat.completion")
    expect(first.choices[0].finish_reason).toBe("tool_calls")
    expect(first.choices[0].message.tool_calls[0].function).toEqual({ name: "grep", arguments: '{"pattern":"TODO"}' })
    const second = await json(chat(server, { stream: false }))
    expect(second.choices[0]).toMatchObject({ finish_reason: "length", message: { role: "assistant", content: "cut" } })
    expect(second.usage.prompt_tokens).toBeGreaterThan(0)
  })

  test("records each request's system text, last user text, tools and tool results", async () => {
    const server = await start()
    server.enqueue(text("ok"))
    await (
      await chat(server, {
        messages: [
          { role: "system", content: "You are a reviewer." },
          { role: "system", content: [{ type: "text", text: "Be brief." }] },
          { role: "user", content: "first" },
          {
            role: "assistant",
            content: "",
            tool_calls: [{ id: "call_9", type: "function", function: { name: "read", arguments: "{}" } }],
          },
          { role: "tool", tool_call_id: "call_9", content: "file body" },
          { role: "user", content: [{ type: "text", text: "second" }] },
        ],
        tools: [
          { type: "function", function: { name: "read", parameters: {} } },
          { type: "function", function: { name: "glob", parameters: {} } },
        ],
      })
    ).text()
    const [request] = server.requests
    expect(request).toMatchObject({
      id: 1,
      model: "m",
      system: "You are a reviewer.\nBe brief.",
      lastUser: "second",
      tools: ["read", "glob"],
      isTitle: false,
      toolResults: [{ toolCallId: "call_9", content: "file body" }],
      reply: { type: "text", text: "ok" },
    })
    expect(request?.headers.authorization).toBe("Bearer test")
    expect(request?.bytes).toBeGreaterThan(100)
    expect(request?.finishedAt).toBeGreaterThanOrEqual(request?.at ?? Number.NaN)
  })

  test("consumes the queue in order and answers an empty queue with a 500 naming the request", async () => {
    const server = await start()
    server.enqueue(text("one"), text("two"))
    expect(contentOf(await events(await chat(server, {})))).toBe("one")
    expect(contentOf(await events(await chat(server, {})))).toBe("two")
    const third = await chat(server, {})
    expect(third.status).toBe(500)
    expect(third.headers.get("retry-after-ms")).toBe("0")
    expect((await json(third)).error).toMatchObject({
      message: "no scripted reply for request 3 (model m)",
      code: "no_scripted_reply",
    })
  })

  test("checks rules before the queue, in order, each at most `times` times", async () => {
    const server = await start()
    server.enqueue(text("from queue"))
    server.rule((request) => request.lastUser.includes("security"), text("security rule"), { times: 1 })
    server.rule(
      (request) => request.lastUser.includes("security"),
      (request) => text(`second rule for #${request.id}`),
    )
    const ask = async (content: string) =>
      contentOf(await events(await chat(server, { messages: [{ role: "user", content }] })))
    expect(await ask("review security")).toBe("security rule")
    expect(await ask("review security")).toBe("second rule for #2")
    expect(await ask("anything else")).toBe("from queue")
    expect(await ask("review security")).toBe("second rule for #4")
  })

  test("holds a response while an async rule decides, seeing later requests meanwhile", async () => {
    const server = await start()
    // The first request is answered only once a second one has arrived: an ordering, not a timing.
    server.rule(
      (request) => request.lastUser === "first",
      async () => {
        const [second] = await server.wait(1, { match: (request) => request.lastUser === "second", timeoutMs: 5_000 })
        return text(`after #${second!.id}`)
      },
    )
    server.rule(
      () => true,
      async () => {
        throw new Error("broken rule")
      },
    )
    const first = chat(server, { messages: [{ role: "user", content: "first" }] })
    await server.wait(1)
    const second = await chat(server, { messages: [{ role: "user", content: "second" }] })
    expect(second.status).toBe(500)
    expect((await json(second)).error.message).toContain("a rule threw on request 2: Error: broken rule")
    expect(contentOf(await events(await first))).toBe("after #2")
    expect(server.requests.map((request) => request.finishedAt! >= request.at)).toEqual([true, true])
  })

  test("answers title-generation requests with a title without consuming the queue", async () => {
    const server = await start({ title: "Auth refresh token support" })
    server.enqueue(text("real answer"))
    const title = await chat(server, {
      messages: [
        { role: "system", content: `${titleSystemMarker}. You output ONLY a thread title. Nothing else.` },
        { role: "user", content: "Generate a title for this conversation:\n" },
        { role: "user", content: "add refresh tokens" },
      ],
    })
    expect(contentOf(await events(title))).toBe("Auth refresh token support")
    expect(contentOf(await events(await chat(server, {})))).toBe("real answer")
    expect(server.requests.map((request) => request.isTitle)).toEqual([true, false])
    await expect(server.wait(1)).resolves.toHaveLength(1)
  })

  test("sends a 429 with the OpenAI error shape and retry headers", async () => {
    const server = await start()
    server.enqueue(
      rateLimitReply({ retryAfter: 7, retryAfterMs: 7000 }),
      contextOverflowReply(),
      statusReply(503, { headers: { "x-test": "1" } }),
    )
    const limited = await chat(server, {})
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("7")
    expect(limited.headers.get("retry-after-ms")).toBe("7000")
    expect((await json(limited)).error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" })
    const overflow = await chat(server, {})
    expect(overflow.status).toBe(400)
    expect((await json(overflow)).error).toMatchObject({
      type: "invalid_request_error",
      code: "context_length_exceeded",
    })
    const unavailable = await chat(server, {})
    expect(unavailable.status).toBe(503)
    expect(unavailable.headers.get("x-test")).toBe("1")
    expect((await json(unavailable)).error.message).toContain("Service unavailable")
  })

  test("wait(n) resolves once n matching requests arrived", async () => {
    const server = await start()
    server.rule(() => true, text("ok"))
    const waiting = server.wait(2, { match: (request) => request.lastUser === "b", timeoutMs: 5_000 })
    await (await chat(server, { messages: [{ role: "user", content: "a" }] })).text()
    await (await chat(server, { messages: [{ role: "user", content: "b" }] })).text()
    await (await chat(server, { messages: [{ role: "user", content: "b" }] })).text()
    const matched = await waiting
    expect(matched.map((request) => request.id)).toEqual([2, 3])
  })

  test("wait(n) times out with a message listing what arrived", async () => {
    const server = await start()
    server.enqueue(text("ok"))
    await (await chat(server, { messages: [{ role: "user", content: "only one" }] })).text()
    const error = await server.wait(2, { timeoutMs: 50 }).catch((caught: Error) => caught)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toMatch(/timed out after 50 ms: wanted 2 matching request\(s\), got 1/)
    expect((error as Error).message).toContain("#1 at")
    expect((error as Error).message).toContain('lastUser="only one" -> text')
  })

  test("hang never sends headers; the request ends when the client gives up", async () => {
    const server = await start()
    server.enqueue(hangReply())
    const error = await chat(server, {}, { signal: AbortSignal.timeout(200) }).catch((caught: Error) => caught)
    expect((error as Error).name).toBe("TimeoutError")
    const [request] = await server.wait(1)
    await expect.poll(() => request?.finishedAt, { timeout: 2_000 }).toBeGreaterThanOrEqual(150)
  })

  test("stall sends headers and the start of the answer, then nothing", async () => {
    const server = await start()
    server.enqueue(stallReply("partial answer"))
    const controller = new AbortController()
    const response = await chat(server, {}, { signal: controller.signal })
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    let received = ""
    while (!received.includes('"content":"answer"')) received += new TextDecoder().decode((await reader.read()).value)
    const next = reader.read()
    const silent = await Promise.race([
      next.then(() => "data"),
      new Promise((resolve) => setTimeout(resolve, 200, "silent")),
    ])
    expect(silent).toBe("silent")
    controller.abort()
    await next.catch(() => undefined)
    expect(received).not.toContain('finish_reason":"stop')
  })

  test("reset destroys the connection before headers, or mid-stream after some text", async () => {
    const server = await start()
    server.enqueue(resetReply(), resetReply("some text"))
    const early = await chat(server, {}).catch((caught: Error) => caught)
    expect(early).toBeInstanceOf(Error)
    expect((early as Error & { code?: string }).code).toBe("ECONNRESET")
    const response = await chat(server, {})
    expect(response.status).toBe(200)
    const late = await response.text().catch((caught: Error) => caught)
    expect(late).toBeInstanceOf(Error)
  })

  test("close() ends hung and stalled responses and pending waits promptly", async () => {
    const server = await startModelServer()
    server.enqueue(hangReply(), stallReply("slow"))
    const hung = chat(server, {}).catch((caught: Error) => caught)
    const stalled = await chat(server, {})
    const body = stalled.text().catch((caught: Error) => caught)
    const waiting = server.wait(5).catch((caught: Error) => caught)
    await server.wait(2)
    const started = performance.now()
    await server.close()
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(await hung).toBeInstanceOf(Error)
    expect(await body).toBeInstanceOf(Error)
    expect(((await waiting) as Error).message).toContain("server closed")
  })

  test("setLatency delays the first byte of every response", async () => {
    const server = await start({ latencyMs: 150 })
    server.rule(() => true, text("ok"))
    const started = performance.now()
    await (await chat(server, {})).text()
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    server.setLatency(0)
    const again = performance.now()
    await (await chat(server, {})).text()
    expect(performance.now() - again).toBeLessThan(140)
  })

  test("lists models and answers unknown routes with 404", async () => {
    const server = await start({ models: ["m", "small"] })
    const models = await json(fetch(`${server.url}/models`))
    expect(models.data.map((model: { id: string }) => model.id)).toEqual(["m", "small"])
    expect((await fetch(`${server.url}/embeddings`, { method: "POST", body: "{}" })).status).toBe(404)
    expect(server.requests).toHaveLength(0)
  })

  test("findingsReply ends with a <findings> block that the core parser reads back", async () => {
    const findings = [
      {
        severity: "warning",
        file: "src/db.ts",
        line: 12,
        category: "security",
        title: "SQL built from <input>",
        body: 'Use "parameters" & bind.',
      },
      {
        severity: "suggestion",
        file: "README.md",
        line: null,
        category: "documentation",
        title: "Document the flag",
        body: "",
      },
    ]
    const reply = findingsReply(findings, { preamble: "Two things." })
    expect(reply.type).toBe("text")
    const content = reply.type === "text" ? reply.text : ""
    expect(content.startsWith("Two things.\n\n<findings>")).toBe(true)
    expect(content.endsWith("</findings>")).toBe(true)
    expect(findingsXml([])).toBe("<findings/>")
    // Imported lazily so a broken core module fails this test only.
    const { parseFindings } = await import("@opencode-reviewer/core")
    expect(parseFindings(content)).toEqual({ ok: true, findings })
  })

  describe("the simulated prompt cache", () => {
    // About 2,500 tokens of system prompt and tools: above OpenAI's 1,024-token minimum on its own.
    const system = { role: "system", content: `You review code.\n${"Check every changed line. ".repeat(400)}` }
    const tools = [{ type: "function", function: { name: "read", description: "Reads a file.", parameters: {} } }]
    const first = [system, { role: "user", content: "Review the change." }]
    const followUp = [
      ...first,
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "file body" },
    ]

    /** Sends one chat request and returns the usage it reported. */
    async function usageOf(server: ModelServer, body: Record<string, unknown>): Promise<any> {
      return (await events(await chat(server, { tools, ...body }))).at(-2).usage
    }

    /** What OpenAI's cache serves of a prefix of `bytes`: its tokens (bytes / 4) in steps of 128, none below 1,024. */
    function served(bytes: number): number {
      const tokens = Math.ceil(bytes / 4)
      return tokens < 1_024 ? 0 : tokens - (tokens % 128)
    }

    /** The bytes two inputs share at their start. */
    function shared(a: Record<string, unknown>, b: Record<string, unknown>): number {
      const [x, y] = [promptCacheInput(a)!, promptCacheInput(b)!]
      let at = 0
      while (at < Math.min(x.length, y.length) && x[at] === y[at]) at += 1
      return at
    }

    test("the first request gets nothing; a follow-up that extends it gets the shared prefix in whole blocks", async () => {
      const server = await start({ promptCache: true })
      server.rule(() => true, text("ok"))
      const one = await usageOf(server, { messages: first })
      expect(one.prompt_tokens_details.cached_tokens).toBe(0)
      const two = await usageOf(server, { messages: followUp })
      const prefix = shared({ tools, messages: first }, { tools, messages: followUp })
      // Everything of the first input but its closing "]}".
      expect(prefix).toBe(promptCacheInput({ tools, messages: first })!.length - 2)
      expect(two.prompt_tokens_details.cached_tokens).toBe(served(prefix))
      expect(two.prompt_tokens_details.cached_tokens).toBeGreaterThan(2_000)
      expect(two.prompt_tokens_details.cached_tokens % 128).toBe(0)
      // The cache moves tokens from input to cached; prompt_tokens stays what the body's size gives.
      const [, second] = server.requests
      expect(two.prompt_tokens).toBe(Math.ceil(second!.bytes / 4))
      expect(second).toMatchObject({
        cachedPrefixBytes: prefix,
        promptTokens: two.prompt_tokens,
        cachedTokens: two.prompt_tokens_details.cached_tokens,
        completionTokens: two.completion_tokens,
      })
      expect(server.requests[0]).toMatchObject({ cachedPrefixBytes: 0, cachedTokens: 0 })
    })

    test("a request that differs early gets little or nothing; the same request again gets all of it", async () => {
      const server = await start({ promptCache: true })
      server.rule(() => true, text("ok"))
      await usageOf(server, { messages: first })
      const renamed = [{ role: "system", content: `You judge code.${system.content.slice("You review code.".length)}` }]
      const early = await usageOf(server, { messages: [...renamed, ...first.slice(1)] })
      expect(early.prompt_tokens_details.cached_tokens).toBe(0)
      expect(server.requests[1]!.cachedPrefixBytes).toBeLessThan(200)
      // Half-way through the system prompt: about half of it.
      const half = [{ ...system, content: `${system.content.slice(0, 5_000)}!${system.content.slice(5_001)}` }]
      const middle = await usageOf(server, { messages: [...half, ...first.slice(1)] })
      const prefix = shared({ tools, messages: first }, { tools, messages: [...half, ...first.slice(1)] })
      expect(middle.prompt_tokens_details.cached_tokens).toBe(served(prefix))
      expect(middle.prompt_tokens_details.cached_tokens).toBeGreaterThan(1_000)
      expect(middle.prompt_tokens_details.cached_tokens).toBeLessThan(1_400)
      const again = await usageOf(server, { messages: first })
      expect(again.prompt_tokens_details.cached_tokens).toBe(
        served(promptCacheInput({ tools, messages: first })!.length),
      )
    })

    test("a shared prefix below the minimum is no hit, and other body fields are not part of the input", async () => {
      const server = await start({ promptCache: true })
      server.rule(() => true, text("ok"))
      const small = [{ role: "system", content: "Be brief. ".repeat(300) }]
      await usageOf(server, { messages: small, max_tokens: 10 })
      const repeat = await usageOf(server, { messages: small, max_tokens: 20 })
      expect(server.requests[1]!.cachedPrefixBytes).toBe(promptCacheInput({ tools, messages: small })!.length)
      expect(repeat.prompt_tokens_details.cached_tokens).toBe(0)
      // With smaller numbers the same repeat is a hit of its whole input, rounded down to the block.
      const tuned = await start({ promptCache: { minTokens: 100, blockTokens: 10 } })
      tuned.rule(() => true, text("ok"))
      await usageOf(tuned, { messages: small })
      const hit = await usageOf(tuned, { messages: small })
      const tokens = Math.ceil(promptCacheInput({ tools, messages: small })!.length / 4)
      expect(hit.prompt_tokens_details.cached_tokens).toBe(tokens - (tokens % 10))
    })

    test("separate models share nothing; a refused request leaves nothing in the cache", async () => {
      const server = await start({ promptCache: true })
      server.rule((request) => request.model === "busy", rateLimitReply({ retryAfterMs: 0 }), { times: 1 })
      server.rule(() => true, text("ok"))
      await usageOf(server, { model: "a", messages: first })
      expect((await usageOf(server, { model: "b", messages: first })).prompt_tokens_details.cached_tokens).toBe(0)
      expect(
        (await usageOf(server, { model: "a", messages: first })).prompt_tokens_details.cached_tokens,
      ).toBeGreaterThan(0)
      expect((await chat(server, { model: "busy", tools, messages: first })).status).toBe(429)
      expect((await usageOf(server, { model: "busy", messages: first })).prompt_tokens_details.cached_tokens).toBe(0)
      expect(server.requests.map((request) => request.cachedTokens)).toEqual([0, 0, expect.any(Number), undefined, 0])
    })

    test("a scripted usage.cacheRead wins over the simulated cache", async () => {
      const server = await start({ promptCache: true })
      server.enqueue(text("ok"), text("ok", { usage: { input: 500, cacheRead: 7 } }))
      await usageOf(server, { messages: first })
      const scripted = await usageOf(server, { messages: first })
      expect(scripted.prompt_tokens).toBe(507)
      expect(scripted.prompt_tokens_details.cached_tokens).toBe(7)
      expect(server.requests[1]).toMatchObject({ promptTokens: 507, cachedTokens: 7 })
      expect(server.requests[1]!.cachedPrefixBytes).toBeGreaterThan(4_096)
    })

    test("is off by default: the same large request twice reports no cached tokens", async () => {
      const server = await start()
      server.rule(() => true, text("ok"))
      await usageOf(server, { messages: first })
      const again = await usageOf(server, { messages: first })
      expect(again.prompt_tokens_details.cached_tokens).toBe(0)
      expect(again.prompt_tokens).toBe(Math.ceil(server.requests[1]!.bytes / 4))
      expect(server.requests[1]).toMatchObject({ promptTokens: again.prompt_tokens, cachedTokens: 0 })
      expect(server.requests[1]!.cachedPrefixBytes).toBeUndefined()
    })
  })
})
