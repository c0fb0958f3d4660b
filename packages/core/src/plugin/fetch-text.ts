// One bounded GET for the plugins that read a document from a URL (standards, the remote reviewer
// config, the AGENTS.md template). Each caller keeps its own policy (what it accepts, how it words a
// failure); this module only guarantees the request cannot hang, cannot fill memory and cannot leak
// a token from the URL into a message.

/** How to fetch one document: an injectable fetch, a budget covering headers and body, a size cap. */
export interface FetchTextOptions {
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  /** Budget for the whole request, body included (default 3000 ms). */
  timeoutMs?: number
  /** Bigger bodies are refused (default 512 KiB). */
  maxBytes?: number
  /** The caller's cancellation: the request stops and the result says so. */
  signal?: AbortSignal
  /** The `accept` header (default any type). */
  accept?: string
}

/** Why a fetch gave nothing, for callers that word their own messages. */
export type FetchTextProblem =
  | { kind: "url" }
  | { kind: "timeout"; timeoutMs: number }
  | { kind: "aborted" }
  | { kind: "status"; status: number; statusText: string }
  /** `declaredBytes` when the content-length said so before any byte was read. */
  | { kind: "too-large"; maxBytes: number; declaredBytes?: number; contentType: string }
  /** `message`: the error the fetch threw (with its code when it has one). */
  | { kind: "network"; message: string }

/**
 * The body and how the server described it, or why there is none (never throws). `reason` is
 * `<origin+path>: <detail>`; `detail` is the same without the URL.
 */
export type FetchTextResult =
  | { ok: true; text: string; contentType: string; url: string }
  | { ok: false; reason: string; detail: string; problem: FetchTextProblem }

export type FetchTextFailure = Extract<FetchTextResult, { ok: false }>

export const fetchTextDefaults = { timeoutMs: 3000, maxBytes: 512 * 1024 } as const

/**
 * GETs a text document. A bad URL, network error, timeout, abort, non-2xx status or oversized body
 * becomes `{ ok: false, ... }`; messages name the URL without its query or credentials.
 */
export async function fetchText(url: string, options: FetchTextOptions = {}): Promise<FetchTextResult> {
  const timeoutMs = options.timeoutMs ?? fetchTextDefaults.timeoutMs
  const maxBytes = options.maxBytes ?? fetchTextDefaults.maxBytes
  const shown = redactUrl(url)
  if (shown === null) {
    const detail = `${JSON.stringify(url.slice(0, 200))} is not an http(s) URL`
    return { ok: false, reason: detail, detail, problem: { kind: "url" } }
  }
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort = () => {}
  // A plain timer raced against the request: the budget holds even for a fetch that ignores its
  // signal (and AbortSignal.timeout is not used: under Bun 1.3 it can fail to fire once its last
  // listener was removed and another added).
  const deadline = new Promise<FetchTextResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${timeoutMs} ms`))
      resolve(failure(shown, `no answer within ${timeoutMs} ms`, { kind: "timeout", timeoutMs }))
    }, timeoutMs)
    onAbort = () => {
      controller.abort(options.signal?.reason)
      const why = options.signal?.reason instanceof Error ? options.signal.reason.message : "aborted"
      resolve(failure(shown, why, { kind: "aborted" }))
    }
    if (options.signal?.aborted) onAbort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
  })
  try {
    const fetcher = options.fetch ?? fetch
    return await Promise.race([
      request(url, shown, fetcher, controller.signal, maxBytes, options.accept ?? "*/*"),
      deadline,
    ])
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener("abort", onAbort)
  }
}

async function request(
  url: string,
  shown: string,
  fetcher: NonNullable<FetchTextOptions["fetch"]>,
  signal: AbortSignal,
  maxBytes: number,
  accept: string,
): Promise<FetchTextResult> {
  try {
    const response = await fetcher(url, { signal, redirect: "follow", headers: { accept } })
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      const { status, statusText } = response
      return failure(shown, `HTTP ${status}${statusText ? ` ${statusText}` : ""}`, {
        kind: "status",
        status,
        statusText,
      })
    }
    const contentType = response.headers.get("content-type") ?? ""
    const declared = Number(response.headers.get("content-length") ?? "0")
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => {})
      return failure(shown, `larger than ${maxBytes} bytes`, {
        kind: "too-large",
        maxBytes,
        declaredBytes: declared,
        contentType,
      })
    }
    const bytes = await readCapped(response, maxBytes)
    if (bytes === null)
      return failure(shown, `larger than ${maxBytes} bytes`, { kind: "too-large", maxBytes, contentType })
    return { ok: true, text: new TextDecoder().decode(bytes), contentType, url: response.url || url }
  } catch (cause) {
    if (signal.aborted) return failure(shown, describeCause(signal.reason), { kind: "aborted" })
    const message = describeCause(cause)
    return failure(shown, `request failed: ${message}`, { kind: "network", message })
  }
}

function failure(shown: string, detail: string, problem: FetchTextProblem): FetchTextFailure {
  return { ok: false, reason: `${shown}: ${detail}`, detail, problem }
}

// Reads the body chunk by chunk and stops at the cap, so a lying or absent content-length cannot
// make us buffer an endless stream.
async function readCapped(response: Response, maxBytes: number): Promise<Uint8Array | null> {
  if (!response.body) return new Uint8Array()
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/** Origin and path only: a URL may carry a token in its query or its credentials. Null if not http(s). */
export function redactUrl(url: string): string | null {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return null
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause ?? "aborted")
  const code = (cause as { code?: unknown }).code
  return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message
}
