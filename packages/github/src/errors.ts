import { type RequestFailure, ReviewError } from "@opencode-reviewer/core"

/**
 * The job does not run in a GitHub Actions pull request workflow the review supports, or an
 * environment variable or the event payload it needs is missing or malformed. Never carries the token.
 */
export class GithubContextError extends ReviewError<{ missing: string[]; hint: string }> {
  constructor(message: string, data: { missing: string[]; hint: string }, cause?: unknown) {
    super("GithubContextError", message, data, { cause })
  }
}

/** Structured facts of a GitHub request our request layer gave up on (core's `RequestFailure`). */
export type GithubRequestFailure = RequestFailure

/**
 * The request layer gave up on a GitHub request: retries exhausted on 502/503/504 or network errors,
 * or a create whose outcome is unknown. (A 4xx or a 500 is passed to octokit, which throws its own
 * `RequestError` with GitHub's message.) `retryable` says whether the same request could succeed later.
 */
export class GithubRequestError extends ReviewError<GithubRequestFailure> {
  constructor(data: GithubRequestFailure, options: { cause?: unknown; retryable?: boolean } = {}) {
    const status = data.status === null ? "no response" : `HTTP ${data.status}`
    const outcome = data.ambiguous ? "; it may have been stored, so it was not sent again" : ""
    super(
      "GithubRequestError",
      `GitHub ${data.method} ${data.path} failed (${status}, ${data.attempts} attempt${data.attempts === 1 ? "" : "s"}): ${data.description}${outcome}`,
      data,
      options,
    )
  }

  get status(): number | null {
    return this.data.status
  }
}

/** What a rate-limit answer said, for `GithubRateLimitError`. */
export interface GithubRateLimitFailure extends Record<string, unknown> {
  method: string
  path: string
  status: number
  /** `primary`: `x-ratelimit-remaining: 0`; `secondary`: GitHub's abuse/secondary limit. */
  kind: "primary" | "secondary"
  /** `x-ratelimit-resource` (`core`, `graphql`, `search`, …), when GitHub sent it. */
  resource: string | null
  /** When GitHub said the request may be repeated (ISO 8601), from `retry-after` or `x-ratelimit-reset`. */
  retryAt: string
  /** How long that is from when we were told, in ms. */
  waitMs: number
  /** What was left of this request's wait budget, in ms. */
  budgetMs: number
  attempts: number
}

/** A GitHub rate limit asks for a longer wait than the request may spend; the message says when it resets. */
export class GithubRateLimitError extends ReviewError<GithubRateLimitFailure> {
  constructor(data: GithubRateLimitFailure) {
    const resource = data.resource ? `, resource ${data.resource}` : ""
    super(
      "GithubRateLimitError",
      `GitHub ${data.kind} rate limit (HTTP ${data.status}${resource}) on ${data.method} ${data.path}: ` +
        `it may be retried at ${data.retryAt} (in ${Math.ceil(data.waitMs / 1000)} s), longer than the ` +
        `${Math.floor(data.budgetMs / 1000)} s this request may still wait; run the review again after that time` +
        (data.kind === "primary" ? ", or use a token with a higher limit (a GitHub App installation token)" : ""),
      data,
      { retryable: true },
    )
  }
}

/**
 * A create answered 502/503/504 or was cut off, and the `landed` check found it stored: it was not
 * sent again. The caller holds the created object (its `landed` check found it); nothing failed.
 */
export class GithubCreateLandedError extends ReviewError<{
  method: string
  path: string
  status: number | null
  attempts: number
}> {
  constructor(data: { method: string; path: string; status: number | null; attempts: number }) {
    const status = data.status === null ? "no response" : `HTTP ${data.status}`
    super(
      "GithubCreateLandedError",
      `GitHub ${data.method} ${data.path} answered ${status}, but the landed check found it stored; not sent again`,
      data,
    )
  }
}

/** GitHub refused the token, or hides the repository or pull request from it. Never carries the token. */
export class GithubAccessError extends ReviewError<{ status: number; path: string; hint: string }> {
  constructor(message: string, data: { status: number; path: string; hint: string }, cause?: unknown) {
    super("GithubAccessError", message, data, { cause })
  }
}
