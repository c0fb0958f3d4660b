// Fetching the organisation's AGENTS.md template (config `agentsMdTemplateUrl`). A template is a
// reference document, so anything odd about the answer (slow, big, not text) makes the fetch fail;
// the plugin turns that failure into a warning and the review goes on without it. The bounded GET
// itself is core's fetchText; this file is the template's policy on top of it.

import { type FetchTextOptions, fetchText } from "@opencode-reviewer/core/plugin/fetch-text"

/** Limits of one template fetch. */
export interface TemplateFetchOptions {
  /** Whole request, body included. Default 3000 ms. */
  timeoutMs?: number
  /** Largest body accepted, in bytes. Default 64 KiB. */
  maxBytes?: number
  signal?: AbortSignal
  fetch?: FetchTextOptions["fetch"]
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
 * status, a content type that is not Markdown or plain text, a body over `maxBytes`, an empty body,
 * or no complete answer within `timeoutMs`.
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
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:")
    throw new TemplateFetchError(`${parsed.protocol} URLs are not fetched; use http(s)`)

  const fetched = await fetchText(parsed.href, {
    timeoutMs,
    maxBytes,
    accept: "text/markdown, text/plain;q=0.9",
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  })
  if (!fetched.ok) {
    const { problem } = fetched
    switch (problem.kind) {
      case "status":
        throw new TemplateFetchError(`HTTP ${problem.status}`)
      case "too-large":
        // A login page or other HTML says more by its type than by its size.
        refuseType(problem.contentType)
        throw new TemplateFetchError(
          problem.declaredBytes !== undefined
            ? `the template is ${problem.declaredBytes} bytes, over the ${maxBytes}-byte limit`
            : `the template is over the ${maxBytes}-byte limit`,
        )
      case "timeout":
        throw new TemplateFetchError(`no complete answer within ${timeoutMs} ms`)
      case "aborted":
        throw new TemplateFetchError("the fetch was cancelled", { cause: options.signal?.reason })
      case "network":
        throw new TemplateFetchError(`the request failed: ${problem.message}`)
      case "url":
        throw new TemplateFetchError("the URL is not valid")
    }
  }
  refuseType(fetched.contentType)
  if (fetched.text.trim() === "") throw new TemplateFetchError("the template is empty")
  return fetched.text
}

function refuseType(type: string): void {
  if (type.trim() !== "" && !textTypes.test(type.trim()))
    throw new TemplateFetchError(`content type ${type.split(";")[0]!.trim()} is not Markdown or plain text`)
}
