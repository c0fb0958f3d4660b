// Standards documents come through core's bounded fetch; what is standards-specific is the types it
// asks for (Markdown first, JSON for an index) and its defaults.
import {
  type FetchTextOptions,
  type FetchTextResult,
  fetchText as fetchBounded,
  fetchTextDefaults,
} from "@opencode-reviewer/core/plugin/fetch-text"

export { redactUrl } from "@opencode-reviewer/core/plugin/fetch-text"

/** How to fetch one document: an injectable fetch, a budget covering headers and body, a size cap. */
export type FetchOptions = Omit<FetchTextOptions, "accept">

/** The body and how the server described it, or why there is none (never throws). */
export type FetchResult = FetchTextResult

/** Default request budget: a standards server that does not answer in 3 s is down for this review. */
export const defaultTimeoutMs = fetchTextDefaults.timeoutMs
/** A standards document is prose; anything bigger is a mistake (or an attack on memory). */
export const defaultMaxBytes = fetchTextDefaults.maxBytes

const accept = "text/markdown, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1"

/** GETs a standards document or index; failures are `{ ok: false, reason }` naming the URL without its query. */
export function fetchText(url: string, options: FetchOptions = {}): Promise<FetchResult> {
  return fetchBounded(url, { ...options, accept })
}
