import { type AddressInfo, createServer, type Socket } from "node:net"

/**
 * A scripted OpenAI-compatible model server for tests: OpenCode (through @ai-sdk/openai-compatible)
 * talks to it as `provider.<id>.options.baseURL = server.url`.
 *
 * Which reply a chat request gets, first match wins:
 * 1. a title-generation request (OpenCode's title agent) gets an automatic short title;
 * 2. the rules, in registration order (a rule whose `times` is used up is skipped);
 * 3. the queue, first in first out;
 * 4. otherwise HTTP 500 "no scripted reply for request N (model X)" with `retry-after-ms: 0`,
 *    so OpenCode's 5 retries are immediate and the run fails fast with that message.
 */
export interface ModelServer {
  /** Base URL including /v1, e.g. http://127.0.0.1:PORT/v1 — goes into provider.options.baseURL. */
  url: string
  /** Every chat-completions request (titles included), in arrival order; GET /v1/models is not recorded. */
  requests: RecordedRequest[]
  /**
   * Resolves with the matching requests once at least n have arrived. The default match is every
   * non-title request. Rejects after timeoutMs (default 30 s), or on close, listing what did arrive.
   */
  wait(
    n: number,
    options?: { match?: (request: RecordedRequest) => boolean; timeoutMs?: number },
  ): Promise<RecordedRequest[]>
  /** Queues replies, consumed in order by non-title requests that no rule answered. */
  enqueue(...replies: Reply[]): void
  /**
   * Answers non-title requests matching `match`; checked before the queue, in registration order;
   * `times` caps its uses. A function reply may return a promise: the response waits for it (the
   * request is recorded at once), which lets a test order events without leaning on timing.
   */
  rule(
    match: (request: RecordedRequest) => boolean,
    reply: Reply | ((request: RecordedRequest) => Reply | Promise<Reply>),
    options?: { times?: number },
  ): void
  /** Fixed latency before every response's first byte (for benchmarks); 0 by default. */
  setLatency(ms: number): void
  /** Ends hung and stalled responses, destroys every socket and stops listening. */
  close(): Promise<void>
}

/** One chat-completions request as the server saw it. */
export interface RecordedRequest {
  /** 1-based, in arrival order. */
  id: number
  /** ms since the server started. */
  at: number
  /** ms since the server started when the response ended (or the connection closed); unset while open. */
  finishedAt?: number
  model: string
  /** The parsed JSON body (null if it did not parse). */
  body: any
  bytes: number
  headers: Record<string, string>
  /** The text of every system message, joined by a newline. */
  system: string
  /** The text of the last user message. */
  lastUser: string
  /** Names of the tools offered. */
  tools: string[]
  /** True for OpenCode's title-generation requests. */
  isTitle: boolean
  /** The role:"tool" messages: results of earlier tool calls. */
  toolResults: { toolCallId: string; content: string }[]
  /** The reply that was chosen; unset for an unscripted request. */
  reply?: Reply
  /**
   * With `promptCache`: the bytes at the start of this request's input (the tools, then the messages,
   * serialised as {@link promptCacheInput} does) that an earlier request to the same model had too.
   * Unset without the option.
   */
  cachedPrefixBytes?: number
  /** `prompt_tokens` of the usage this request's answer reported; unset until a usage was sent (never for an error). */
  promptTokens?: number
  /** `cached_tokens` of that usage: the scripted `usage.cacheRead`, else the simulated prompt cache, else 0. */
  cachedTokens?: number
  /** `completion_tokens` of that usage. */
  completionTokens?: number
}

/** Token counts to report. `input` is the uncached part; prompt_tokens = input + cacheRead + cacheWrite. */
export interface Usage {
  input?: number
  output?: number
  cacheRead?: number
  cacheWrite?: number
}

/** What the server does with one request. */
export type Reply =
  | { type: "text"; text: string; usage?: Usage; chunkSize?: number; delayMs?: number }
  | {
      type: "tool"
      name: string
      args: Record<string, unknown>
      /** More calls in the same answer, after the first: parallel tool calls, as models make them. */
      more?: ToolCallSpec[]
      text?: string
      usage?: Usage
    }
  | { type: "length"; text: string; usage?: Usage }
  | { type: "status"; status: number; body?: unknown; headers?: Record<string, string> }
  | { type: "hang" }
  | { type: "stall"; text: string }
  | { type: "reset"; text?: string }

/** Options for {@link startModelServer}. */
export interface ModelServerOptions {
  /** Latency before every response's first byte, ms (see `setLatency`). */
  latencyMs?: number
  /** The text of automatic title replies. */
  title?: string
  /** Model ids listed by GET /v1/models. */
  models?: string[]
  /**
   * Simulates a provider's automatic prompt cache (off by default): a reply that sets no
   * `usage.cacheRead` reports as `cached_tokens` the longest prefix of its input that an earlier
   * request to the same model began with (see {@link PromptCacheOptions}). `true` takes OpenAI's
   * numbers; `prompt_tokens` stays what it is without the cache, the cached part moves out of input.
   */
  promptCache?: boolean | PromptCacheOptions
}

/**
 * How the simulated prompt cache counts. The defaults are OpenAI's automatic caching: a prompt is
 * cached from 1,024 tokens on, with hits in increments of 128 tokens (OpenAI cookbook, "Prompt
 * Caching 201", §1.1; the Prompt Caching guide on platform.openai.com says the same).
 */
export interface PromptCacheOptions {
  /** A shared prefix shorter than this many tokens is no hit at all (default 1,024). */
  minTokens?: number
  /** A hit is the shared prefix rounded down to a multiple of this many tokens (default 128). */
  blockTokens?: number
}

/** A finding for {@link findingsReply}, in the shape of the reviewer XML (docs/contracts.md#reviewer-findings-xml). */
export interface ScriptedFinding {
  severity: "critical" | "warning" | "suggestion" | (string & {})
  file: string
  /** null for a file-level finding (the attribute is left out). */
  line: number | null
  category: string
  title: string
  body: string
  /** A `<suggestion start_line>` with these replacement lines (verbatim, escaped). */
  suggestion?: { startLine: number; lines: string[] }
}

/** Starts a scripted model server on 127.0.0.1 with a free port. */
export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const shutdown = new AbortController()
  const sockets = new Set<Socket>()
  const requests: RecordedRequest[] = []
  const queue: Reply[] = []
  const rules: Rule[] = []
  const waiters = new Set<Waiter>()
  const cache = createPromptCache(options.promptCache)
  let latency = options.latencyMs ?? 0

  const choose = async (request: RecordedRequest): Promise<Reply | undefined> => {
    if (request.isTitle) return text(options.title ?? "Scripted session title")
    try {
      for (const rule of rules) {
        if (rule.remaining <= 0 || !rule.match(request)) continue
        rule.remaining -= 1
        return typeof rule.reply === "function" ? await rule.reply(request) : rule.reply
      }
    } catch (error) {
      // A broken rule is a test bug: say so in the response instead of crashing the connection.
      return statusReply(500, {
        message: `model-server: a rule threw on request ${request.id}: ${String(error)}`,
        code: "rule_failed",
      })
    }
    return queue.shift()
  }

  const handle = async (exchange: Exchange) => {
    const path = exchange.path.replace(/\/+$/, "")
    if (exchange.method === "GET" && path === "/v1/models") {
      const data = (options.models ?? ["m"]).map((id) => ({
        id,
        object: "model",
        created: 0,
        owned_by: "model-server",
      }))
      return exchange.json(200, { object: "list", data })
    }
    if (exchange.method !== "POST" || path !== "/v1/chat/completions") {
      return exchange.json(
        404,
        errorBody(`model-server: no route for ${exchange.method} ${exchange.path}`, "not_found", null),
      )
    }
    const request = recordRequest(requests.length + 1, elapsed(), exchange.body, exchange.headers)
    requests.push(request)
    exchange.onFinish(() => {
      request.finishedAt = elapsed()
    })
    const cached = cache?.match(request)
    if (cached) request.cachedPrefixBytes = cached.bytes
    const pending = choose(request)
    // Waiters see the request when it arrives, even if its reply is still being decided.
    for (const waiter of waiters) waiter.check()
    const reply = await pending
    if (reply) request.reply = reply
    // Only a prompt the model went on to read is in the cache: not one refused with a status or never answered.
    if (cached && reply && readsPrompt(reply)) cached.keep()
    for (const waiter of waiters) waiter.check()

    const signal = exchange.signal
    if (reply?.type !== "hang" && latency > 0) await sleep(latency, signal)
    if (signal.aborted) return
    if (!reply) {
      // retry-after-ms: 0 turns OpenCode's 5 retries of a 500 (~66 s of backoff) into immediate ones.
      const message = `no scripted reply for request ${request.id} (model ${request.model})`
      return exchange.json(500, errorBody(message, "server_error", "no_scripted_reply"), { "retry-after-ms": "0" })
    }
    await respond(reply, request, request.body?.stream === true, exchange, cached?.tokens ?? 0)
  }

  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
    serveConnection(socket, shutdown.signal, handle)
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    wait(n, waitOptions = {}) {
      const match = waitOptions.match ?? ((request: RecordedRequest) => !request.isTitle)
      const timeoutMs = waitOptions.timeoutMs ?? 30_000
      return new Promise((resolve, reject) => {
        const waiter: Waiter = {
          check() {
            const seen = requests.filter(match)
            if (seen.length < n) return
            done()
            resolve(seen)
          },
          fail(why) {
            done()
            reject(new Error(`model-server: ${why}: ${describeArrivals(requests, match, n)}`))
          },
        }
        const timer = setTimeout(() => waiter.fail(`timed out after ${timeoutMs} ms`), timeoutMs)
        const done = () => {
          clearTimeout(timer)
          waiters.delete(waiter)
        }
        waiters.add(waiter)
        if (shutdown.signal.aborted) return waiter.fail("server closed")
        waiter.check()
      })
    },
    enqueue(...replies) {
      queue.push(...replies)
    },
    rule(match, reply, ruleOptions = {}) {
      rules.push({ match, reply, remaining: ruleOptions.times ?? Number.POSITIVE_INFINITY })
    },
    setLatency(ms) {
      latency = ms
    },
    async close() {
      if (shutdown.signal.aborted) return
      shutdown.abort()
      for (const waiter of [...waiters]) waiter.fail("server closed")
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const socket of sockets) socket.destroy()
      await closed
    },
  }
}

/** A streamed text answer (finish_reason "stop"). */
export function text(content: string, options: { usage?: Usage; chunkSize?: number; delayMs?: number } = {}): Reply {
  return { type: "text", text: content, ...options }
}

/** A streamed call of tool `name` with `args` (finish_reason "tool_calls"), optionally after some text. */
export function toolCall(
  name: string,
  args: Record<string, unknown> = {},
  options: { text?: string; usage?: Usage } = {},
): Reply {
  return { type: "tool", name, args, ...options }
}

/** One call of a {@link toolCalls} answer. */
export interface ToolCallSpec {
  name: string
  args: Record<string, unknown>
}

/** An answer that calls several tools at once (parallel tool calls, indexes 0, 1, …). */
export function toolCalls(calls: ToolCallSpec[], options: { text?: string; usage?: Usage } = {}): Reply {
  const [first, ...more] = calls
  if (!first) throw new Error("toolCalls needs at least one call")
  return { type: "tool", name: first.name, args: first.args, ...(more.length > 0 ? { more } : {}), ...options }
}

/** A text answer cut off by the output limit (finish_reason "length"). */
export function lengthReply(content: string, options: { usage?: Usage } = {}): Reply {
  return { type: "length", text: content, ...options }
}

/** An HTTP error; the body defaults to the OpenAI error shape with a message naming the status. */
export function statusReply(
  status: number,
  options: {
    message?: string
    type?: string
    code?: string | null
    body?: unknown
    headers?: Record<string, string>
  } = {},
): Reply {
  const body = options.body ?? defaultErrorBody(status, options)
  return { type: "status", status, body, ...(options.headers ? { headers: options.headers } : {}) }
}

/**
 * A 429. `retryAfterMs: 0` (or `retryAfter: 0`) makes OpenCode retry at once: it honours both
 * headers uncapped. Without them it backs off about 2, 4, 8, 16, 32 s before giving up (~66 s).
 */
export function rateLimitReply(
  options: { retryAfter?: string | number; retryAfterMs?: number; message?: string } = {},
): Reply {
  const headers: Record<string, string> = {}
  if (options.retryAfter !== undefined) headers["retry-after"] = String(options.retryAfter)
  if (options.retryAfterMs !== undefined) headers["retry-after-ms"] = String(options.retryAfterMs)
  return statusReply(429, {
    message: options.message ?? "Rate limit exceeded (model-server)",
    code: "rate_limit_exceeded",
    headers,
  })
}

/** A 400 `context_length_exceeded`, which OpenCode turns into ContextOverflowError (and then tries a compaction call). */
export function contextOverflowReply(
  message = "This model's maximum context length is 100000 tokens. However, your messages resulted in 250000 tokens. Please reduce the length of the messages.",
): Reply {
  return statusReply(400, { message, type: "invalid_request_error", code: "context_length_exceeded" })
}

/** Never sends headers, until the client gives up or the server closes. */
export function hangReply(): Reply {
  return { type: "hang" }
}

/** Sends headers and the start of `text`, then nothing more, until the client gives up or the server closes. */
export function stallReply(content = "Thinking about"): Reply {
  return { type: "stall", text: content }
}

/** Destroys the connection: at once, or after streaming `text` without finishing. */
export function resetReply(content?: string): Reply {
  return content === undefined ? { type: "reset" } : { type: "reset", text: content }
}

/** The reviewer `<findings>` block (docs/contracts.md#reviewer-findings-xml), escaped; an empty list gives `<findings/>`. */
export function findingsXml(findings: ScriptedFinding[]): string {
  if (findings.length === 0) return "<findings/>"
  const items = findings.map((finding) =>
    [
      `  <finding severity="${escapeAttribute(finding.severity)}" file="${escapeAttribute(finding.file)}"${finding.line === null ? "" : ` line="${finding.line}"`} category="${escapeAttribute(finding.category)}">`,
      `    <title>${escapeXml(finding.title)}</title>`,
      `    <body>${escapeXml(finding.body)}</body>`,
      ...(finding.suggestion
        ? [
            `    <suggestion start_line="${finding.suggestion.startLine}">`,
            escapeXml(finding.suggestion.lines.join("\n")),
            "    </suggestion>",
          ]
        : []),
      "  </finding>",
    ].join("\n"),
  )
  return ["<findings>", ...items, "</findings>"].join("\n")
}

/** A reviewer's text answer: a short preamble, then the `<findings>` block. */
export function findingsReply(
  findings: ScriptedFinding[],
  options: { preamble?: string; usage?: Usage; chunkSize?: number; delayMs?: number } = {},
): Reply {
  const { preamble = `Reviewed the change; ${findings.length} finding(s).`, ...rest } = options
  return text(`${preamble}\n\n${findingsXml(findings)}`, rest)
}

/** The marker OpenCode's built-in title agent puts at the start of its system prompt (1.18.33). */
export const titleSystemMarker = "You are a title generator"

interface Rule {
  match: (request: RecordedRequest) => boolean
  reply: Reply | ((request: RecordedRequest) => Reply | Promise<Reply>)
  remaining: number
}

interface Waiter {
  check(): void
  fail(why: string): void
}

const defaultMessages: Record<number, string> = {
  400: "Bad request",
  401: "Incorrect API key provided",
  403: "Forbidden",
  404: "Model not found",
  429: "Rate limit exceeded",
  500: "Internal server error",
  502: "Bad gateway",
  503: "Service unavailable",
}

const defaultTypes: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  403: "invalid_request_error",
  404: "invalid_request_error",
  429: "rate_limit_error",
}

function recordRequest(id: number, at: number, raw: Buffer, headers: Record<string, string>): RecordedRequest {
  const body = parseJson(raw.toString("utf8"))
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : []
  const system = messages
    .filter((message) => message?.role === "system" || message?.role === "developer")
    .map((message) => contentText(message.content))
    .join("\n")
  const lastUser = contentText(messages.filter((message) => message?.role === "user").at(-1)?.content)
  const tools: string[] = Array.isArray(body?.tools)
    ? body.tools.map((tool: any) => String(tool?.function?.name ?? tool?.name ?? ""))
    : []
  const toolResults = messages
    .filter((message) => message?.role === "tool")
    .map((message) => ({ toolCallId: String(message.tool_call_id ?? ""), content: contentText(message.content) }))
  return {
    id,
    at,
    model: typeof body?.model === "string" ? body.model : "",
    body,
    bytes: raw.byteLength,
    headers,
    system,
    lastUser,
    tools,
    isTitle: system.includes(titleSystemMarker),
    toolResults,
  }
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((part) => (typeof part === "string" ? part : typeof part?.text === "string" ? part.text : ""))
    .filter((part) => part !== "")
    .join("\n")
}

function describeArrivals(
  requests: RecordedRequest[],
  match: (request: RecordedRequest) => boolean,
  wanted: number,
): string {
  const lines = requests.map((request) => `  ${describeRequest(request)}${match(request) ? "" : " (not matching)"}`)
  const seen = requests.filter(match).length
  return `wanted ${wanted} matching request(s), got ${seen}; arrived:\n${lines.join("\n") || "  (none)"}`
}

function describeRequest(request: RecordedRequest): string {
  const last = request.lastUser.replace(/\s+/g, " ").slice(0, 60)
  const reply = request.reply ? request.reply.type : "unscripted (500)"
  const tools = request.tools.length > 0 ? ` tools=[${request.tools.join(",")}]` : ""
  const kind = request.isTitle ? " title" : ""
  return `#${request.id} at ${request.at} ms model=${request.model}${kind}${tools} toolResults=${request.toolResults.length} lastUser="${last}" -> ${reply}`
}

/** Answers `request` with `reply`; `cachedTokens` is what the simulated prompt cache serves of it (0 without one). */
async function respond(
  reply: Reply,
  request: RecordedRequest,
  stream: boolean,
  exchange: Exchange,
  cachedTokens: number,
): Promise<void> {
  switch (reply.type) {
    case "hang":
      // Never answer; the connection ends when the client gives up or the server closes.
      return
    case "status":
      return exchange.json(reply.status, reply.body ?? defaultErrorBody(reply.status), reply.headers ?? {})
    case "reset":
      if (reply.text === undefined) return exchange.reset()
      await startText(exchange, request, reply.text, stream)
      // Let the client read the headers and text first: a reset discards data it has not read yet.
      await sleep(50, exchange.signal)
      return exchange.reset()
    case "stall":
      // Headers and the start of an answer, then silence until the client or close() ends it.
      return startText(exchange, request, reply.text, stream)
    case "text":
    case "length":
    case "tool":
      return stream
        ? streamCompletion(exchange, request, reply, cachedTokens)
        : sendCompletion(exchange, request, reply, cachedTokens)
  }
}

type Completion = Extract<Reply, { type: "text" | "length" | "tool" }>

async function streamCompletion(
  exchange: Exchange,
  request: RecordedRequest,
  reply: Completion,
  cachedTokens: number,
): Promise<void> {
  const chunk = chunker(request)
  const chunkSize = reply.type === "text" ? (reply.chunkSize ?? 16) : 16
  const delayMs = reply.type === "text" ? (reply.delayMs ?? 0) : 0
  const content = reply.type === "tool" ? (reply.text ?? "") : reply.text
  exchange.head(200, sseHeaders)
  await exchange.write(chunk({ role: "assistant", content: "" }, null))
  for (const piece of slices(content, chunkSize)) {
    if (delayMs > 0) await sleep(delayMs, exchange.signal)
    if (exchange.signal.aborted) return
    await exchange.write(chunk({ content: piece }, null))
  }
  if (reply.type === "tool") {
    for (const [index, spec] of callsOf(reply).entries()) {
      const call = {
        index,
        id: toolCallId(request, index),
        type: "function",
        function: { name: spec.name, arguments: "" },
      }
      await exchange.write(chunk({ tool_calls: [call] }, null))
      const args = JSON.stringify(spec.args)
      // The arguments arrive in three pieces, as real providers stream them.
      for (const piece of slices(args, Math.ceil(args.length / 3))) {
        await exchange.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null))
      }
    }
  }
  await exchange.write(chunk({}, finishReason(reply)))
  await exchange.write(sse({ ...envelope(request), choices: [], usage: usageBody(request, reply, cachedTokens) }))
  await exchange.end("data: [DONE]\n\n")
}

function sendCompletion(
  exchange: Exchange,
  request: RecordedRequest,
  reply: Completion,
  cachedTokens: number,
): Promise<void> {
  const content = reply.type === "tool" ? (reply.text ?? null) : reply.text
  const calls =
    reply.type === "tool"
      ? callsOf(reply).map((spec, index) => ({
          id: toolCallId(request, index),
          type: "function",
          function: { name: spec.name, arguments: JSON.stringify(spec.args) },
        }))
      : undefined
  const message = { role: "assistant", content, ...(calls ? { tool_calls: calls } : {}) }
  return exchange.json(200, {
    ...envelope(request),
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: finishReason(reply) }],
    usage: usageBody(request, reply, cachedTokens),
  })
}

/** Sends headers and `content` without finishing: the start of a stall or a reset. */
async function startText(
  exchange: Exchange,
  request: RecordedRequest,
  content: string,
  stream: boolean,
): Promise<void> {
  if (!stream) {
    exchange.head(200, { "content-type": "application/json" })
    const partial = JSON.stringify({
      ...envelope(request),
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content } }],
    })
    return exchange.write(partial.slice(0, Math.ceil(partial.length / 2)))
  }
  const chunk = chunker(request)
  exchange.head(200, sseHeaders)
  await exchange.write(chunk({ role: "assistant", content: "" }, null))
  for (const piece of slices(content, 8)) await exchange.write(chunk({ content: piece }, null))
}

const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" }

function finishReason(reply: Completion): string {
  if (reply.type === "tool") return "tool_calls"
  return reply.type === "length" ? "length" : "stop"
}

function toolCallId(request: RecordedRequest, index: number): string {
  return `call_${request.id}_${index}`
}

function callsOf(reply: Extract<Reply, { type: "tool" }>): ToolCallSpec[] {
  return [{ name: reply.name, args: reply.args }, ...(reply.more ?? [])]
}

function chunker(request: RecordedRequest) {
  return (delta: Record<string, unknown>, finish: string | null) =>
    sse({ ...envelope(request), choices: [{ index: 0, delta, finish_reason: finish }] })
}

function envelope(request: RecordedRequest) {
  return {
    id: `chatcmpl-${request.id}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: request.model || "model-server",
  }
}

/**
 * OpenAI usage, recorded on the request as it is sent. prompt_tokens = input + cacheRead + cacheWrite;
 * OpenCode 1.18.33 reports tokens.input = prompt_tokens - cached_tokens and cache.read = cached_tokens.
 * The openai-compatible provider has no cache-write field, so cacheWrite shows up in tokens.input and
 * cache.write stays 0; `cache_write_tokens` (what @ai-sdk/openai reads) is sent anyway. A scripted
 * `cacheRead` wins; otherwise the simulated cache's `cachedTokens` move out of input (never more than it).
 */
function usageBody(request: RecordedRequest, reply: Completion, cachedTokens: number) {
  const usage = reply.usage ?? {}
  const content =
    reply.type === "tool"
      ? `${reply.text ?? ""}${callsOf(reply)
          .map((spec) => JSON.stringify(spec.args))
          .join("")}`
      : reply.text
  const uncached = usage.input ?? Math.max(1, estimateTokens(request.bytes))
  const output = usage.output ?? Math.max(1, estimateTokens(content.length))
  const cacheRead = usage.cacheRead ?? Math.min(cachedTokens, uncached)
  const input = usage.cacheRead === undefined ? uncached - cacheRead : uncached
  const cacheWrite = usage.cacheWrite ?? 0
  const prompt = input + cacheRead + cacheWrite
  request.promptTokens = prompt
  request.cachedTokens = cacheRead
  request.completionTokens = output
  return {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: prompt + output,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
  }
}

/** Tokens of `bytes` bytes of text, as this server counts them everywhere: one per 4 bytes, rounded up. */
function estimateTokens(bytes: number): number {
  return Math.ceil(bytes / 4)
}

/** What the simulated cache found for one request: `keep()` adds its input to the cache. */
interface CacheMatch {
  /** Bytes of its input shared with the longest matching earlier input of the same model. */
  bytes: number
  /** Those bytes in tokens, rounded down to the block size; 0 below the minimum. */
  tokens: number
  keep(): void
}

/**
 * The input a provider's prompt cache sees, in the order it reads it: the tool definitions, then
 * the messages (OpenCode sends the system message first). Other body fields (model, max_tokens,
 * stream…) are not part of it. Null for a body that did not parse.
 */
export function promptCacheInput(body: unknown): Buffer | null {
  if (body === null || typeof body !== "object") return null
  const { tools, messages } = body as { tools?: unknown; messages?: unknown }
  return Buffer.from(JSON.stringify({ tools, messages }))
}

/**
 * The simulated prompt cache, one list of inputs per model name (a provider caches per model). Each
 * input is serialised once, when its request arrives; a new one is compared with each kept input,
 * and an input that a newer one begins with is dropped, since the newer one matches everything it did.
 */
function createPromptCache(option: ModelServerOptions["promptCache"]) {
  if (!option) return null
  const minTokens = (option === true ? undefined : option.minTokens) ?? 1_024
  const blockTokens = Math.max(1, (option === true ? undefined : option.blockTokens) ?? 128)
  const inputs = new Map<string, Buffer[]>()
  return {
    match(request: RecordedRequest): CacheMatch {
      const input = promptCacheInput(request.body)
      if (input === null) return { bytes: 0, tokens: 0, keep: () => undefined }
      const earlier = inputs.get(request.model) ?? []
      const shared = earlier.map((candidate) => sharedPrefixBytes(input, candidate))
      const bytes = Math.max(0, ...shared)
      const tokens = estimateTokens(bytes)
      return {
        bytes,
        tokens: tokens < minTokens ? 0 : tokens - (tokens % blockTokens),
        keep() {
          if (bytes === input.length) return
          const rest = earlier.filter((candidate, index) => shared[index] !== candidate.length)
          inputs.set(request.model, [...rest, input])
        },
      }
    },
  }
}

/** How many bytes `a` and `b` share at their start: whole blocks compared natively, then the differing block byte by byte. */
function sharedPrefixBytes(a: Buffer, b: Buffer): number {
  const length = Math.min(a.length, b.length)
  const block = 4_096
  let at = 0
  while (at < length) {
    const end = Math.min(at + block, length)
    if (a.compare(b, at, end, at, end) !== 0) break
    at = end
  }
  while (at < length && a[at] === b[at]) at += 1
  return at
}

/** Whether the model read the prompt of a request answered with `reply` (so a provider would have cached it). */
function readsPrompt(reply: Reply): boolean {
  return reply.type !== "status" && reply.type !== "hang" && !(reply.type === "reset" && reply.text === undefined)
}

function defaultErrorBody(status: number, options: { message?: string; type?: string; code?: string | null } = {}) {
  const message = options.message ?? `${defaultMessages[status] ?? "Error"} (model-server ${status})`
  return errorBody(message, options.type ?? defaultTypes[status] ?? "server_error", options.code ?? null)
}

function errorBody(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } }
}

function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\n\n`
}

/** Cuts `content` into pieces of `size` characters (none for ""). */
function slices(content: string, size: number): string[] {
  const step = Math.max(1, Math.floor(size))
  const pieces: string[] = []
  for (let start = 0; start < content.length; start += step) pieces.push(content.slice(start, start + step))
  return pieces
}

function parseJson(raw: string): any {
  try {
    return JSON.parse(raw)
  } catch {
    return null
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms)
    signal.addEventListener("abort", finish, { once: true })
    function finish() {
      clearTimeout(timer)
      signal.removeEventListener("abort", finish)
      resolve()
    }
  })
}

function escapeXml(content: string): string {
  return content.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
}

function escapeAttribute(content: string): string {
  return escapeXml(content).replace(/"/g, "&quot;")
}

// --- A minimal HTTP/1.1 server over node:net -------------------------------------------------
// Bun's node:http neither reports a client that goes away (no "close" event, write callbacks stop)
// nor lets a test stream error into a reset under Bun.serve (the body just ends cleanly), so the
// server speaks HTTP itself: it needs exact control over hangs, stalls and connection resets.

/** One request on a connection and the means to answer it. */
interface Exchange {
  method: string
  path: string
  headers: Record<string, string>
  body: Buffer
  /** Aborts when the connection closes: the client gave up, or the server is closing. */
  signal: AbortSignal
  /** Registers a callback for when the response ends or the connection closes, whichever is first. */
  onFinish(callback: () => void): void
  /** Sends the status line and headers of a chunked response. */
  head(status: number, headers: Record<string, string>): void
  write(data: string): Promise<void>
  end(data?: string): Promise<void>
  json(status: number, body: unknown, headers?: Record<string, string>): Promise<void>
  /** Destroys the connection with a TCP reset. */
  reset(): void
}

interface ParsedRequest {
  method: string
  path: string
  headers: Record<string, string>
  body: Buffer
  consumed: number
}

const maxHeadBytes = 64 * 1024

function serveConnection(socket: Socket, shutdown: AbortSignal, handle: (exchange: Exchange) => Promise<void>): void {
  const closed = new AbortController()
  const signal = AbortSignal.any([closed.signal, shutdown])
  let buffer: Buffer = Buffer.alloc(0)
  let busy = false
  socket.on("error", () => {
    // A peer reset; "close" follows.
  })
  socket.once("close", () => closed.abort())
  socket.on("data", (data: Buffer) => {
    buffer = buffer.length === 0 ? data : Buffer.concat([buffer, data])
    next()
  })

  function next(): void {
    if (busy || socket.destroyed) return
    const parsed = parseRequest(buffer)
    if (parsed === "incomplete") return
    if (parsed === "invalid") {
      socket.end("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
      return
    }
    buffer = buffer.subarray(parsed.consumed)
    busy = true
    const exchange = createExchange(socket, parsed, signal)
    handle(exchange.exchange)
      .catch(async (error: unknown) => {
        if (!exchange.started())
          return exchange.exchange.json(500, errorBody(`model-server crashed: ${String(error)}`, "server_error", null))
        socket.destroy()
      })
      .finally(() => {
        // A hung or stalled response keeps the connection; a finished one frees it for the next request.
        if (!exchange.ended()) return
        busy = false
        if (parsed.headers.connection?.toLowerCase() === "close") return void socket.end()
        next()
      })
  }
}

function createExchange(socket: Socket, request: ParsedRequest, signal: AbortSignal) {
  let started = false
  let ended = false
  const finishers: (() => void)[] = []
  const finish = () => {
    signal.removeEventListener("abort", finish)
    for (const callback of finishers.splice(0)) callback()
  }
  signal.addEventListener("abort", finish, { once: true })
  const send = (data: string | Buffer) =>
    new Promise<void>((resolve) => {
      if (socket.destroyed || signal.aborted) return resolve()
      socket.write(data, () => resolve())
    })
  const statusLine = (status: number, headers: Record<string, string>) => {
    started = true
    const lines = [
      `HTTP/1.1 ${status} ${reasons[status] ?? "Status"}`,
      `date: ${new Date().toUTCString()}`,
      "connection: keep-alive",
    ]
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
    return `${lines.join("\r\n")}\r\n\r\n`
  }
  const exchange: Exchange = {
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body,
    signal,
    onFinish(callback) {
      if (ended || signal.aborted) return callback()
      finishers.push(callback)
    },
    head(status, headers) {
      if (started) return
      socket.write(statusLine(status, { ...headers, "transfer-encoding": "chunked" }))
    },
    write(data) {
      if (data.length === 0) return Promise.resolve()
      const bytes = Buffer.from(data)
      return send(Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]))
    },
    async end(data) {
      if (data) await exchange.write(data)
      ended = true
      await send("0\r\n\r\n")
      finish()
    },
    async json(status, body, headers = {}) {
      const bytes = Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
      const head = statusLine(status, {
        "content-type": "application/json",
        ...headers,
        "content-length": String(bytes.length),
      })
      ended = true
      await send(Buffer.concat([Buffer.from(head), bytes]))
      finish()
    },
    reset() {
      if (typeof socket.resetAndDestroy === "function") socket.resetAndDestroy()
      else socket.destroy()
    },
  }
  return { exchange, started: () => started, ended: () => ended }
}

function parseRequest(buffer: Buffer): ParsedRequest | "incomplete" | "invalid" {
  const headEnd = buffer.indexOf("\r\n\r\n")
  if (headEnd === -1) return buffer.length > maxHeadBytes ? "invalid" : "incomplete"
  const [requestLine = "", ...headerLines] = buffer.subarray(0, headEnd).toString("latin1").split("\r\n")
  const [method, target] = requestLine.split(" ")
  if (!method || !target) return "invalid"
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(":")
    if (colon <= 0) return "invalid"
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`
  }
  const path = target.split("?")[0] ?? target
  const bodyStart = headEnd + 4
  if (headers["transfer-encoding"]?.toLowerCase().includes("chunked"))
    return parseChunked(buffer, bodyStart, method, path, headers)
  const length = Number(headers["content-length"] ?? "0")
  if (!Number.isInteger(length) || length < 0) return "invalid"
  if (buffer.length < bodyStart + length) return "incomplete"
  return { method, path, headers, body: buffer.subarray(bodyStart, bodyStart + length), consumed: bodyStart + length }
}

function parseChunked(
  buffer: Buffer,
  start: number,
  method: string,
  path: string,
  headers: Record<string, string>,
): ParsedRequest | "incomplete" | "invalid" {
  const parts: Buffer[] = []
  let position = start
  while (true) {
    const lineEnd = buffer.indexOf("\r\n", position)
    if (lineEnd === -1) return "incomplete"
    const size = Number.parseInt(buffer.subarray(position, lineEnd).toString("latin1").split(";")[0] ?? "", 16)
    if (Number.isNaN(size)) return "invalid"
    position = lineEnd + 2
    if (size === 0) {
      // Skip trailers up to the empty line.
      const trailerEnd = buffer.indexOf("\r\n", position)
      if (trailerEnd === -1) return "incomplete"
      if (trailerEnd === position) return { method, path, headers, body: Buffer.concat(parts), consumed: position + 2 }
      const blank = buffer.indexOf("\r\n\r\n", position)
      if (blank === -1) return "incomplete"
      return { method, path, headers, body: Buffer.concat(parts), consumed: blank + 4 }
    }
    if (buffer.length < position + size + 2) return "incomplete"
    parts.push(buffer.subarray(position, position + size))
    position += size + 2
  }
}

const reasons: Record<number, string> = {
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  413: "Payload Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
}
