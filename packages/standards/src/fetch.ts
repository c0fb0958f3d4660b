/** How to fetch one document: an injectable fetch, a budget covering headers and body, a size cap. */
export interface FetchOptions {
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  /** Budget for the whole request, body included (default 3000 ms). */
  timeoutMs?: number
  /** Bigger bodies are refused (default 512 KiB). */
  maxBytes?: number
  signal?: AbortSignal
}

/** The body and how the server described it, or why there is none (never throws). */
export type FetchResult =
  | { ok: true; text: string; contentType: string; url: string }
  | { ok: false; reason: string }

/** Default request budget: a standards server that does not answer in 3 s is down for this review. */
export const defaultTimeoutMs = 3000
/** A standards document is prose; anything bigger is a mistake (or an attack on memory). */
export const defaultMaxBytes = 512 * 1024

/**
 * GETs a text document. A network error, timeout, non-2xx status or oversized body becomes
 * `{ ok: false, reason }`; the reason names the URL without its query or credentials.
 */
export async function fetchText(url: string, options: FetchOptions = {}): Promise<FetchResult> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
  const maxBytes = options.maxBytes ?? defaultMaxBytes
  const shown = redactUrl(url)
  if (shown === null) return { ok: false, reason: `${JSON.stringify(url.slice(0, 200))} is not an http(s) URL` }
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort = () => {}
  // Raced against the request so the budget holds even for a fetch that ignores its signal.
  const deadline = new Promise<FetchResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${timeoutMs} ms`))
      resolve({ ok: false, reason: `${shown}: no answer within ${timeoutMs} ms` })
    }, timeoutMs)
    onAbort = () => {
      controller.abort(options.signal?.reason)
      const why = options.signal?.reason instanceof Error ? options.signal.reason.message : "aborted"
      resolve({ ok: false, reason: `${shown}: ${why}` })
    }
    if (options.signal?.aborted) onAbort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
  })
  try {
    return await Promise.race([request(url, shown, options.fetch ?? fetch, controller.signal, maxBytes), deadline])
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener("abort", onAbort)
  }
}

async function request(url: string, shown: string, fetcher: NonNullable<FetchOptions["fetch"]>, signal: AbortSignal, maxBytes: number): Promise<FetchResult> {
  const fail = (why: string): FetchResult => ({ ok: false, reason: `${shown}: ${why}` })
  try {
    const response = await fetcher(url, { signal, redirect: "follow", headers: { accept: "text/markdown, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1" } })
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      return fail(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`)
    }
    const declared = Number(response.headers.get("content-length") ?? "0")
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => {})
      return fail(`larger than ${maxBytes} bytes`)
    }
    const bytes = await readCapped(response, maxBytes)
    if (bytes === null) return fail(`larger than ${maxBytes} bytes`)
    return { ok: true, text: new TextDecoder().decode(bytes), contentType: response.headers.get("content-type") ?? "", url: response.url || url }
  } catch (cause) {
    if (signal.aborted) return fail(describe(signal.reason))
    return fail(`request failed: ${describe(cause)}`)
  }
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

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause ?? "aborted")
  const code = (cause as { code?: unknown }).code
  return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message
}

export * as StandardsFetch from "./fetch"
