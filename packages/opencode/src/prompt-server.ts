import { createServer } from "node:net"
import { opencodeQuietEnv } from "./binary"
import { isSessionError, type SessionError } from "./errors"
import type { TokenUsage } from "./events"
import { splitModelId } from "./model-id"

// One-shot prompts (a system text, a user text, no tools) through a real `opencode serve`, over its
// HTTP API as the v2 SDK 1.18.33 calls it (docs/opencode.md, "Server mode for one-shot prompts").
// The routes are called with fetch: this adapter's boundary test allows OpenCode's packages in
// plugin.ts only. Each prompt is a new session answered by the synchronous `POST
// /session/{id}/message`, which returns the finished assistant message (or its error).

/** The agent added to the config for one-shot prompts: every tool denied, temperature 0. */
export const promptAgentName = "one_shot_prompt"

// An agent's prompt replaces OpenCode's long default system prompt, but only when it is not empty
// (an empty one brings the default back); the caller's system text follows as a system part.
const promptAgentPrompt = "Answer the message below as the instructions that follow say. You have no tools."
const promptAgentWithTools =
  "Answer the message below as the instructions that follow say. Use the tools you have to read what you need first."

// Every permission denied: OpenCode then offers the model no tools at all (denied tools are removed).
const denyEverything = [{ permission: "*", pattern: "*", action: "deny" }]

/** How to start the server: the binary, the project directory, the caller's isolated environment and config. */
export interface PromptServerOptions {
  /** The `opencode` binary (see findOpencodeBinary). */
  binary: string
  /** The project directory: the process's cwd, its PWD and the directory of every request. */
  cwd: string
  /** The server's environment before the config, PWD and the quiet settings are added (XDG homes and the like). */
  env: Record<string, string>
  /** An opencode.json (providers and models); the prompt agent is added to its `agent` block. */
  config: object
  /**
   * The prompt agent's tools as an opencode.json `permission` block, e.g. read-only with `.git/*`
   * denied; by default every tool is denied (then the model is offered none, and each session also
   * carries a deny-all rule). With tools, one prompt is a whole turn: the model may read and search
   * before its answer, and the answer is its last message's text.
   */
  permission?: Record<string, unknown>
  /** How long to wait for the listening line; 30 s by default. */
  startupTimeoutMs?: number
  /** Receives each line the server prints on stdout and stderr. */
  log?: (line: string) => void
}

/** One prompt: the model as `provider/model`, the system and user texts, and an optional abort. */
export interface PromptInput {
  model: string
  system: string
  user: string
  signal?: AbortSignal
}

/** The model's answer: its text parts joined by newlines, the finish reason, its tokens and cost in USD. */
export interface PromptAnswer {
  text: string
  /** `stop`, `length` (cut off at the model's output limit) and so on; null when OpenCode gave none. */
  finish: string | null
  tokens: TokenUsage
  costUsd: number
  sessionID: string
}

/** A running `opencode serve`; prompts may run concurrently; `close` always ends the process. */
export interface PromptServer {
  /** The server's base URL, e.g. http://127.0.0.1:PORT. */
  readonly url: string
  /** The server's process id (the leader of its own process group). */
  readonly pid: number
  /** Asks the model once in a new session; rejects with PromptModelError when the provider failed. */
  prompt(input: PromptInput): Promise<PromptAnswer>
  /** Ends the server and everything it started (SIGTERM to its process group, SIGKILL after 3 s). */
  close(): Promise<void>
}

/** `opencode serve` exited or did not start listening in time; carries the tail of its output. */
export class PromptServerStartError extends Error {
  readonly data: { reason: "exited" | "timeout" | "unhealthy"; exitCode: number | null; output: string }

  constructor(data: PromptServerStartError["data"], message: string) {
    super(`${message}${data.output ? `\n--- opencode serve output (tail) ---\n${data.output}` : ""}`)
    this.name = "PromptServerStartError"
    this.data = data
  }
}

/** The model's turn ended in an error (OpenCode's `AssistantMessage.error`, after its own retries). */
export class PromptModelError extends Error {
  readonly data: { sessionID: string; error: SessionError; statusCode: number | null; retryable: boolean }

  constructor(sessionID: string, error: SessionError) {
    const message = typeof error.data?.message === "string" ? error.data.message : ""
    const statusCode = typeof error.data?.statusCode === "number" ? error.data.statusCode : null
    super(
      `${error.name}${statusCode === null ? "" : ` ${statusCode}`}: ${message || "no message"} (session ${sessionID})`,
    )
    this.name = "PromptModelError"
    this.data = { sessionID, error, statusCode, retryable: error.data?.isRetryable === true }
  }
}

/** A call to the server's HTTP API failed (a status other than 2xx, or a broken connection). */
export class PromptRequestError extends Error {
  readonly data: { operation: string; status: number | null }

  constructor(operation: string, status: number | null, detail: string, cause?: unknown) {
    super(`${operation} failed: ${detail}`, cause === undefined ? undefined : { cause })
    this.name = "PromptRequestError"
    this.data = { operation, status }
  }
}

/** The config the server gets: the caller's, plus the prompt agent and no snapshots unless set. */
export function promptServerConfig(input: object, permission?: Record<string, unknown>): Record<string, unknown> {
  const config = input as Record<string, unknown>
  const agents = isRecord(config.agent) ? config.agent : {}
  return {
    ...config,
    // A snapshot is a git copy of the worktree per step: useless for prompts that touch no file.
    snapshot: config.snapshot ?? false,
    agent: {
      ...agents,
      [promptAgentName]: {
        mode: "primary",
        description: permission ? "One-shot prompts with the tools allowed below" : "One-shot prompts without tools",
        prompt: permission ? promptAgentWithTools : promptAgentPrompt,
        // Sent only for models whose config says `temperature: true` (models.dev does for most).
        temperature: 0,
        permission: permission ?? { "*": "deny" },
      },
    },
  }
}

/** The environment of `opencode serve`: `env`, then PWD, the config and the quiet settings. */
export function promptServerEnv(options: Pick<PromptServerOptions, "cwd" | "config" | "env" | "permission">) {
  return {
    ...options.env,
    // OpenCode takes the project directory from PWD, not from the process's cwd (docs/opencode.md, pitfall 1).
    PWD: options.cwd,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(promptServerConfig(options.config, options.permission)),
    ...opencodeQuietEnv,
    BUN_JSC_forceRAMSize: options.env.BUN_JSC_forceRAMSize ?? String(2 * 1024 ** 3),
  }
}

/**
 * Starts `opencode serve` on 127.0.0.1 and a free port picked here (`--port 0` would take 4096 when
 * free: docs/opencode.md, pitfall 17), and resolves once it printed its listening line and answers
 * `/global/health`. Rejects with PromptServerStartError (and kills it) if it exits or times out first.
 */
export async function startPromptServer(options: PromptServerOptions): Promise<PromptServer> {
  const port = await freePort()
  const output = new OutputTail()
  const child = Bun.spawn([options.binary, "serve", "--hostname", "127.0.0.1", "--port", String(port)], {
    cwd: options.cwd,
    env: promptServerEnv(options),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    // Its own process group, so that close() can end whatever it starts (MCP servers and the like).
    detached: true,
  })
  const closing = closer(child)
  let listening: (url: string) => void = () => {}
  const listened = new Promise<string>((resolve) => {
    listening = resolve
  })
  const onLine = (line: string) => {
    output.push(line)
    options.log?.(line)
    const url = /opencode server listening on (http:\/\/\S+)/.exec(line)?.[1]
    if (url) listening(url.replace(/\/+$/, ""))
  }
  void readLines(child.stdout, onLine)
  void readLines(child.stderr, onLine)

  const timeoutMs = options.startupTimeoutMs ?? 30_000
  let timer: ReturnType<typeof setTimeout> | undefined
  const outcome = await Promise.race([
    listened.then((url) => ({ type: "listening" as const, url })),
    child.exited.then((code) => ({ type: "exited" as const, code })),
    new Promise<{ type: "timeout" }>((resolve) => {
      timer = setTimeout(() => resolve({ type: "timeout" }), timeoutMs)
    }),
  ])
  clearTimeout(timer)
  if (outcome.type !== "listening") {
    await closing()
    const exited = outcome.type === "exited"
    throw new PromptServerStartError(
      { reason: outcome.type, exitCode: exited ? outcome.code : null, output: output.text() },
      exited
        ? `opencode serve exited with code ${outcome.code} before listening`
        : `opencode serve did not start listening within ${timeoutMs} ms`,
    )
  }
  const health = await fetchJson(`${outcome.url}/global/health`, { signal: AbortSignal.timeout(5_000) }).catch(
    (error: unknown) => ({ error }),
  )
  if (!isRecord(health) || health.healthy !== true) {
    await closing()
    throw new PromptServerStartError(
      { reason: "unhealthy", exitCode: child.exitCode, output: output.text() },
      `opencode serve at ${outcome.url} is not healthy: ${describe(health)}`,
    )
  }
  return {
    url: outcome.url,
    pid: child.pid,
    prompt: (input) => prompt(outcome.url, options.cwd, input, options.permission === undefined),
    close: closing,
  }
}

async function prompt(url: string, directory: string, input: PromptInput, noTools: boolean): Promise<PromptAnswer> {
  input.signal?.throwIfAborted()
  const { provider, model } = splitModelId(input.model)
  if (!provider) throw new PromptRequestError("prompt", null, `model "${input.model}" is not <provider>/<model>`)
  const headers = { "content-type": "application/json", "x-opencode-directory": encodeURIComponent(directory) }
  const call = (operation: string, path: string, body: unknown, signal?: AbortSignal) =>
    fetchJson(`${url}${path}`, { method: "POST", headers, body: JSON.stringify(body), signal }, operation)

  // A title given means no title request to the small model (docs/opencode.md, pitfall 15); the
  // session's own deny-all rule backs up the agent's.
  const session = await call("session.create", "/session", {
    title: "one-shot prompt",
    ...(noTools ? { permission: denyEverything } : {}),
  })
  const sessionID = isRecord(session) && typeof session.id === "string" ? session.id : null
  if (!sessionID) throw new PromptRequestError("session.create", null, `no session id in ${describe(session)}`)

  const answer = call(`session.prompt ${sessionID}`, `/session/${sessionID}/message`, {
    agent: promptAgentName,
    model: { providerID: provider, modelID: model },
    system: input.system,
    parts: [{ type: "text", text: input.user }],
  })
  const signal = input.signal
  if (!signal) return answerOf(sessionID, await answer)
  let onAbort: () => void = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => {
      // The pending request then ends with MessageAbortedError; nobody is waiting for it any more.
      answer.catch(() => {})
      call(`session.abort ${sessionID}`, `/session/${sessionID}/abort`, {}).catch(() => {})
      reject(signal.reason)
    }
  })
  signal.addEventListener("abort", onAbort, { once: true })
  try {
    return answerOf(sessionID, await Promise.race([answer, aborted]))
  } finally {
    signal.removeEventListener("abort", onAbort)
  }
}

/** The reply of `POST /session/{id}/message`: `{ info: AssistantMessage, parts: Part[] }`. */
function answerOf(sessionID: string, reply: unknown): PromptAnswer {
  const info = isRecord(reply) && isRecord(reply.info) ? reply.info : null
  if (!info) throw new PromptRequestError(`session.prompt ${sessionID}`, null, `no message in ${describe(reply)}`)
  if (isSessionError(info.error)) throw new PromptModelError(sessionID, info.error)
  const parts = isRecord(reply) && Array.isArray(reply.parts) ? reply.parts : []
  const text = parts
    .filter((part) => isRecord(part) && part.type === "text" && typeof part.text === "string" && !part.synthetic)
    .map((part) => (part as { text: string }).text)
    .join("\n")
  const tokens = isRecord(info.tokens) ? info.tokens : {}
  const cache = isRecord(tokens.cache) ? tokens.cache : {}
  return {
    text,
    finish: typeof info.finish === "string" ? info.finish : null,
    tokens: {
      input: numberOf(tokens.input),
      output: numberOf(tokens.output),
      reasoning: numberOf(tokens.reasoning),
      cacheRead: numberOf(cache.read),
      cacheWrite: numberOf(cache.write),
    },
    costUsd: numberOf(info.cost),
    sessionID,
  }
}

async function fetchJson(url: string, init: RequestInit, operation = "request"): Promise<unknown> {
  let response: Response
  try {
    response = await fetch(url, init)
  } catch (error) {
    throw new PromptRequestError(operation, null, error instanceof Error ? error.message : String(error), error)
  }
  const body = await response.text()
  if (!response.ok)
    throw new PromptRequestError(operation, response.status, `HTTP ${response.status}: ${body.slice(0, 500)}`)
  try {
    return body === "" ? null : JSON.parse(body)
  } catch (error) {
    throw new PromptRequestError(operation, response.status, `not JSON: ${body.slice(0, 200)}`, error)
  }
}

/** SIGTERM to the server's process group, SIGKILL after 3 s; resolves once the server exited. */
function closer(child: Bun.Subprocess): () => Promise<void> {
  let closed: Promise<void> | undefined
  const signal = (name: "SIGTERM" | "SIGKILL") => {
    try {
      process.kill(-child.pid, name)
    } catch {
      // the group is gone already
    }
  }
  return () => {
    closed ??= (async () => {
      signal("SIGTERM")
      const killer = setTimeout(() => signal("SIGKILL"), 3_000)
      await child.exited
      clearTimeout(killer)
      // Whatever the server started and left behind in its group.
      signal("SIGKILL")
    })()
    return closed
  }
}

/** A port that was free a moment ago on 127.0.0.1 (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address ? address.port : 0
      server.close(() => (port ? resolve(port) : reject(new Error("no port assigned"))))
    })
  })
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder()
  let pending = ""
  try {
    for await (const chunk of stream) {
      pending += decoder.decode(chunk, { stream: true })
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) onLine(line.replace(/\r$/, ""))
    }
  } catch {
    // the process was killed mid-read
  }
  if (pending) onLine(pending)
}

/** The last lines a process printed, at most about 4 KB. */
class OutputTail {
  private lines: string[] = []
  private size = 0

  push(line: string): void {
    this.lines.push(line)
    this.size += line.length + 1
    while (this.size > 4096 && this.lines.length > 1) this.size -= (this.lines.shift() ?? "").length + 1
  }

  text(): string {
    return this.lines.join("\n")
  }
}

function describe(value: unknown): string {
  if (isRecord(value) && value.error instanceof Error) return value.error.message
  return JSON.stringify(value)?.slice(0, 300) ?? String(value)
}

function numberOf(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
