import { parseReviewerConfig, type ReviewerConfigDocument } from "./document"

/** How to fetch the document: an injectable fetch, a timeout covering headers and body, a caller's abort. */
export interface FetchOptions {
  fetch?: (input: string, init: RequestInit) => Promise<Response>
  /** Budget for the whole request, body included (default 3000 ms). */
  timeoutMs?: number
  signal?: AbortSignal
}

/** A usable document (with unknown-key warnings), or one warning saying why none was used. */
export type FetchResult =
  | { ok: true; document: ReviewerConfigDocument; warnings: string[] }
  | { ok: false; warning: string }

/** Default request budget: the document is a hint, not worth delaying a review for. */
export const defaultTimeoutMs = 3000
/** Bigger answers are not a reviewer config; the cap keeps a misbehaving server from costing memory. */
export const maxDocumentBytes = 1024 * 1024

/**
 * Fetches and validates the remote reviewer-config document. Never throws: a network error,
 * timeout, non-2xx status, non-JSON body or schema violation becomes `{ ok: false, warning }`.
 */
export async function fetchReviewerConfig(url: string, options: FetchOptions = {}): Promise<FetchResult> {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
  const shown = redact(url)
  if (shown === null) return { ok: false, warning: "remote reviewer config ignored: the URL is not a valid http(s) URL" }
  const fail = (why: string) => ignored(shown, why)

  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  let onAbort = () => {}
  // Raced against the request so the budget holds even for a fetch that ignores its signal.
  const deadline = new Promise<FetchResult>((resolve) => {
    timer = setTimeout(() => {
      controller.abort(new Error(`no answer within ${timeoutMs} ms`))
      resolve(fail(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
    onAbort = () => {
      controller.abort(options.signal?.reason)
      resolve(fail("aborted"))
    }
    if (options.signal?.aborted) onAbort()
    options.signal?.addEventListener("abort", onAbort, { once: true })
  })
  try {
    return await Promise.race([request(url, options.fetch ?? fetch, controller.signal, shown), deadline])
  } finally {
    clearTimeout(timer)
    options.signal?.removeEventListener("abort", onAbort)
  }
}

async function request(
  url: string,
  fetcher: NonNullable<FetchOptions["fetch"]>,
  signal: AbortSignal,
  shown: string,
): Promise<FetchResult> {
  const fail = (why: string) => ignored(shown, why)
  try {
    const response = await fetcher(url, { signal, headers: { accept: "application/json" }, redirect: "follow" })
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      return fail(`HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`)
    }
    const declared = Number(response.headers.get("content-length") ?? "0")
    if (declared > maxDocumentBytes) {
      await response.body?.cancel().catch(() => {})
      return fail(`the document is larger than ${maxDocumentBytes} bytes`)
    }
    const text = await response.text()
    if (text.length > maxDocumentBytes) return fail(`the document is larger than ${maxDocumentBytes} bytes`)
    const json = parseJson(text)
    if (!json.ok) return fail(`not valid JSON: ${json.message}`)
    const parsed = parseReviewerConfig(json.value)
    if (!parsed.ok) return fail(`invalid document: ${parsed.problems.join("; ")}`)
    return { ok: true, document: parsed.document, warnings: parsed.warnings.map((warning) => `remote reviewer config (${shown}): ${warning}`) }
  } catch (cause) {
    if (signal.aborted) return fail(reason(signal.reason))
    return fail(`request failed: ${reason(cause)}`)
  }
}

function ignored(shown: string, why: string): FetchResult {
  return { ok: false, warning: `remote reviewer config ignored (${shown}): ${why}` }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (cause) {
    return { ok: false, message: reason(cause) }
  }
}

function reason(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause ?? "aborted")
  const code = (cause as { code?: unknown }).code
  return typeof code === "string" && !cause.message.includes(code) ? `${code}: ${cause.message}` : cause.message
}

// The URL may carry a token in its query or credentials: warnings show origin and path only.
function redact(url: string): string | null {
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return null
  }
}

export * as RemoteFetch from "./fetch"
