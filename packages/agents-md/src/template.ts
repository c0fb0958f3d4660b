// Fetching the organisation's AGENTS.md template (config `agentsMdTemplateUrl`). A template is a
// reference document, so anything odd about the answer (slow, big, not text) makes the fetch fail;
// the plugin turns that failure into a warning and the review goes on without it.

/** Limits of one template fetch. */
export interface TemplateFetchOptions {
  /** Whole request, body included. Default 3000 ms. */
  timeoutMs?: number
  /** Largest body accepted, in bytes. Default 64 KiB. */
  maxBytes?: number
  signal?: AbortSignal
  fetch?: typeof fetch
}

export const templateDefaults = { timeoutMs: 3000, maxBytes: 64 * 1024 } as const

/** The template could not be used; the message says why in a few words. */
export class TemplateFetchError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = "TemplateFetchError"
  }
}

const textTypes = /^(?:text\/(?:markdown|x-markdown|plain)|application\/octet-stream)\s*(?:;|$)/i

/**
 * GETs the template and returns its text. Throws TemplateFetchError on a non-http(s) URL, a non-2xx
 * status, a content type that is not Markdown or plain text, a body over `maxBytes`, or no complete
 * answer within `timeoutMs`.
 */
export async function fetchTemplate(url: string, options: TemplateFetchOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? templateDefaults.timeoutMs
  const maxBytes = options.maxBytes ?? templateDefaults.maxBytes
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new TemplateFetchError("the URL is not valid")
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new TemplateFetchError(`${parsed.protocol} URLs are not fetched; use http(s)`)

  const timeout = new AbortController()
  const timer = setTimeout(() => timeout.abort(new TemplateFetchError(`no complete answer within ${timeoutMs} ms`)), timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, timeout.signal]) : timeout.signal
  // Whichever comes first: the answer, or the deadline (a body that stalls must not hold the review).
  const deadline = new Promise<never>((_, reject) => {
    const fail = () => reject(signal.reason instanceof TemplateFetchError ? signal.reason : new TemplateFetchError("the fetch was cancelled", { cause: signal.reason }))
    if (signal.aborted) fail()
    else signal.addEventListener("abort", fail, { once: true })
  })
  deadline.catch(() => undefined)
  try {
    return await Promise.race([read(parsed, maxBytes, signal, options.fetch ?? fetch), deadline])
  } finally {
    clearTimeout(timer)
  }
}

async function read(url: URL, maxBytes: number, signal: AbortSignal, fetcher: typeof fetch): Promise<string> {
  let response: Response
  try {
    response = await fetcher(url, { signal, headers: { accept: "text/markdown, text/plain;q=0.9" }, redirect: "follow" })
  } catch (error) {
    if (signal.aborted) throw signal.reason instanceof TemplateFetchError ? signal.reason : new TemplateFetchError("the fetch was cancelled")
    throw new TemplateFetchError(`the request failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined)
    throw new TemplateFetchError(`HTTP ${response.status}`)
  }
  const type = response.headers.get("content-type")
  if (type !== null && type.trim() !== "" && !textTypes.test(type.trim())) {
    await response.body?.cancel().catch(() => undefined)
    throw new TemplateFetchError(`content type ${type.split(";")[0]!.trim()} is not Markdown or plain text`)
  }
  const declared = Number(response.headers.get("content-length") ?? Number.NaN)
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined)
    throw new TemplateFetchError(`the template is ${declared} bytes, over the ${maxBytes}-byte limit`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  if (response.body) {
    const reader = response.body.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined)
        throw new TemplateFetchError(`the template is over the ${maxBytes}-byte limit`)
      }
      chunks.push(value)
    }
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  const text = new TextDecoder().decode(bytes)
  if (text.trim() === "") throw new TemplateFetchError("the template is empty")
  return text
}
