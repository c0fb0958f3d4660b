import { type RequestFailure, ReviewError } from "@opencode-reviewer/core"

/**
 * The job does not run in a GitLab merge request pipeline, or a CI variable the provider needs is
 * missing. `unrelated`: a triggered pipeline whose event is not a note on a merge request (a push
 * webhook, a note on an issue), so there is nothing to review rather than something wrong.
 */
export class GitlabContextError extends ReviewError<{ missing: string[]; hint: string; unrelated?: boolean }> {
  constructor(message: string, data: { missing: string[]; hint: string; unrelated?: boolean }, cause?: unknown) {
    super("GitlabContextError", message, data, { cause })
  }
}

/** No usable token: missing, only `CI_JOB_TOKEN`, or rejected by GitLab. The message says what to do. */
export class GitlabAuthError extends ReviewError<{
  reason: "missing" | "job-token" | "rejected"
  status: number | null
  hint: string
}> {
  constructor(
    message: string,
    data: { reason: "missing" | "job-token" | "rejected"; status: number | null; hint: string },
    cause?: unknown,
  ) {
    super("GitlabAuthError", message, data, { cause })
  }
}

/** Structured facts of a failed GitLab request (core's `RequestFailure`). */
export type GitlabRequestFailure = RequestFailure

/** A GitLab API request failed; `retryable` says whether the same request could succeed later. */
export class GitlabRequestError extends ReviewError<GitlabRequestFailure> {
  constructor(data: GitlabRequestFailure, options: { cause?: unknown; retryable?: boolean } = {}) {
    const status = data.status === null ? "no response" : `HTTP ${data.status}`
    super(
      "GitlabRequestError",
      `GitLab ${data.method} ${data.path} failed (${status}): ${data.description}`,
      data,
      options,
    )
  }

  get status(): number | null {
    return this.data.status
  }
}

/** GitLab's answer did not have the shape we rely on (a field missing, a wrong type). */
export class GitlabResponseError extends ReviewError<{ what: string; issues: string[] }> {
  constructor(what: string, issues: string[]) {
    super("GitlabResponseError", `unexpected GitLab response for ${what}: ${issues.join("; ")}`, { what, issues })
  }
}
