import { ReviewError, type ReviewRecord } from "@opencode-reviewer/core"

/** The command line itself is wrong; the message says what to type instead. */
export class CliUsageError extends ReviewError<{ command: string | null }> {
  constructor(message: string, command: string | null) {
    super("CliUsageError", message, { command })
  }
}

/**
 * A comment started the run but asks nothing of the bot, or comes from someone who may not ask (an
 * outside contributor, a bot): nothing was reviewed, on purpose, and that is a success (exit 0).
 */
export class NothingToDo extends ReviewError<{ reason: string }> {
  constructor(reason: string) {
    super("NothingToDo", `nothing to do: ${reason}`, { reason })
  }
}

/** Exit code for anything thrown out of a command: every failure to review is 1; nothing to do is 0. */
export function exitCodeFor(error: unknown): number {
  return error instanceof NothingToDo ? 0 : 1
}

/** The text a person sees for an error: what happened, then what they can do about it. */
export function formatError(error: unknown): string {
  if (error instanceof NothingToDo) return `opencode-reviewer: ${error.message}\n`
  if (error instanceof CliUsageError) {
    const help = error.data.command ? `opencode-reviewer ${error.data.command} --help` : "opencode-reviewer --help"
    return `error: ${error.message}\nrun "${help}" for usage\n`
  }
  if (error instanceof ReviewError) {
    const hint = typeof error.data.hint === "string" ? `\nhint: ${error.data.hint}` : ""
    return `error: ${error.message}${hint}\n`
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
  return `error: internal error, please report it with the output below\n${detail}\n`
}

/** The review ran and was published as not approved, but too much of it did not run to count. */
export class ReviewIncompleteError extends ReviewError<{ missing: { name: string; error: string }[]; hint: string }> {
  constructor(record: ReviewRecord) {
    const missing = record.coverage.failedReviewers
    const reasons = record.reasons.filter((reason) => reason.startsWith("the review is incomplete"))
    super(
      "ReviewIncompleteError",
      `${reasons[0] ?? "the review is incomplete"}; review.json and review.md say what ran`,
      { missing, hint: incompleteHint(missing) },
    )
  }
}

// The runtime reports a reviewer's error as describeError formats it ("APIError 401: …"); a status
// there is the one fact a person can act on.
function incompleteHint(missing: readonly { error: string }[]): string {
  const statuses = missing
    .map((reviewer) => /^\w+ (\d{3})\b/.exec(reviewer.error)?.[1])
    .filter((status) => status !== undefined)
  if (statuses.some((status) => status === "401" || status === "403")) {
    return "a provider refused the credentials (HTTP 401/403): check the API key your provider block references (or the provider's usual key variable, e.g. ANTHROPIC_API_KEY) and that it may use the reviewers' models"
  }
  if (missing.some((reviewer) => reviewer.error === "did not run")) {
    return "the coordinator did not run every planned reviewer; re-run the job, and run with --verbose to see the coordinator's tool calls"
  }
  return "re-run the job once the providers answer again; the failing reviewers and their errors are listed in review.md"
}

/** The review was done, but publishing it on the merge request failed; review.json has it. */
export class ReviewPublishError extends ReviewError<{ hint: string }> {
  constructor(cause: unknown) {
    super(
      "ReviewPublishError",
      `the review was done but could not be published: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        hint: "review.json, review.md and the reports in the output dir hold the review; re-run the job to publish it",
      },
      { cause },
    )
  }
}

/** The review could not be produced; the message names every attempt. */
export class ReviewRunError extends ReviewError<{ attempts: string[]; hint: string | null }> {
  constructor(message: string, attempts: string[], hint: string | null = null) {
    super("ReviewRunError", message, { attempts, hint })
  }
}
