import { type FetchTextOptions, fetchText, redactUrl } from "@opencode-reviewer/core/plugin/fetch-text"
import { parseReviewerConfig, type ReviewerConfigDocument } from "./document"

/** How to fetch the document: an injectable fetch, a timeout covering headers and body, a caller's abort. */
export type FetchOptions = Pick<FetchTextOptions, "fetch" | "timeoutMs" | "signal">

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
  const shown = redactUrl(url)
  if (shown === null)
    return { ok: false, warning: "remote reviewer config ignored: the URL is not a valid http(s) URL" }
  const fail = (why: string) => ignored(shown, why)
  const fetched = await fetchText(url, {
    ...options,
    timeoutMs: options.timeoutMs ?? defaultTimeoutMs,
    maxBytes: maxDocumentBytes,
    accept: "application/json",
  })
  if (!fetched.ok) {
    if (fetched.problem.kind === "aborted") return fail("aborted")
    if (fetched.problem.kind === "too-large") return fail(`the document is larger than ${maxDocumentBytes} bytes`)
    return fail(fetched.detail)
  }
  const json = parseJson(fetched.text)
  if (!json.ok) return fail(`not valid JSON: ${json.message}`)
  const parsed = parseReviewerConfig(json.value)
  if (!parsed.ok) return fail(`invalid document: ${parsed.problems.join("; ")}`)
  return {
    ok: true,
    document: parsed.document,
    warnings: parsed.warnings.map((warning) => `remote reviewer config (${shown}): ${warning}`),
  }
}

function ignored(shown: string, why: string): FetchResult {
  return { ok: false, warning: `remote reviewer config ignored (${shown}): ${why}` }
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (cause) {
    return { ok: false, message: cause instanceof Error ? cause.message : String(cause) }
  }
}
