import type { Config } from "../config/config"
import type { UnreadFile } from "../judge/coverage"
import type { PreviousFinding, ReviewRecord } from "../judge/review-record"
import type { MergeRequestComment, MergeRequestInfo, PreviousReview } from "../prompt/prompt"
import type { BreakGlassOutcome } from "./access"

export type { UnreadFile } from "../judge/coverage"

/** Where a provider's local outputs go and how it talks to the person running it. */
export interface PublishOptions {
  /** Directory for review.json and reports. */
  outputDir: string
  /** The human-readable rendering (the CLI passes stdout). */
  write(text: string): void
}

/** A change to review, as a VCS provider (or a patch file) delivers it. */
export interface Change {
  /** Where the diff came from, for messages ("git diff abc..def in /repo", "patch file x.diff"). */
  source: string
  /** A unified git diff, byte-exact. */
  diff: Uint8Array
  mergeRequest: MergeRequestInfo
  comments: MergeRequestComment[]
  previousReview: PreviousReview | null
  /** Review instructions from the target branch (trusted more than the MR, still sanitised). */
  customInstructions: string | null
  /** First lines of files at the head revision, for generated-file detection; absent paths are unknown. */
  readHeads(paths: readonly string[]): Promise<Map<string, string>>
  /**
   * The whole text of a file at the head of the change (the version under review, so untrusted),
   * or null when it does not exist there or the provider cannot read it (a bare patch).
   */
  readHeadFile?(path: string): Promise<string | null>
  /** Changed files the provider could not deliver (collapsed, too large): listed, never called reviewed. */
  unreviewed?: UnreadFile[]
  /** The bot's findings from its previous review, for new / persisting / resolved. */
  previousFindings?: PreviousFinding[]
  /** What the person whose comment started this run asked for; absent for a run not started by a comment. */
  request?: ChangeRequest
}

/** What a comment asked of the bot (review/request.ts reads it). */
export interface ChangeRequest {
  /** `review`: `/review`; `full`: `/review full`; `question`: a question addressed to the bot. */
  kind: "review" | "full" | "question"
  /** Who asked (a person with at least developer / write access; the provider checked). */
  by: string
  /** The comment's text: untrusted, like every comment. */
  body: string
}

/** Whether a comment event starts a run, and why not when it does not. */
export type RequestOutcome = { run: true; request: ChangeRequest } | { run: false; reason: string }

/** What a provider did with a review, for any caller to print: files it wrote, and one line per fact. */
export interface PublishReport {
  /** Files the provider wrote itself (the CLI writes review.json and the reports). */
  files: string[]
  /** What was posted and what could not be done, one terminal line each, without a trailing newline. */
  lines: string[]
}

/** Where changes come from and where reviews go: local git, GitLab, a patch file. */
export interface VcsProvider {
  readonly name: string
  /** Reads the change under review; throws ChangeReadError with a hint the user can act on. */
  readChange(signal?: AbortSignal): Promise<Change>
  /**
   * A file as it is on the target branch (never from the change under review), or null when it does
   * not exist there. Configuration and review instructions are read through this.
   */
  readTrustedFile(path: string): Promise<string | null>
  /**
   * Every regular file (no symlinks, no submodules) under `dir` on the target branch, recursively,
   * as repository-relative paths for `readTrustedFile`; null when `dir` is not a folder there.
   * Optional: a provider without it cannot serve folder-shaped trusted inputs (the standards).
   */
  listTrustedFiles?(dir: string): Promise<string[] | null>
  /**
   * Publishes the finished review on the merge request (notes, threads, approval). The CLI itself
   * writes review.json and the local reports; a provider without a merge request does nothing here.
   */
  publish(record: ReviewRecord, options: PublishOptions): Promise<PublishReport>
  /**
   * Says on the merge request that no review could run (after readChange; the CLI has already
   * written the local outputs), revoking anything that vouched for the change. Never throws;
   * returns lines for the terminal. Optional: a provider without a merge request has nowhere to say it.
   */
  publishFailure?(failure: { message: string; hint: string | null }): Promise<string[]>
  /**
   * For a run started by a comment (a GitHub comment event, a GitLab note webhook): whether it asks
   * something of the bot, from someone allowed to. Null when the run was not started by a comment.
   * Called before readChange; a run that is not asked for stops there, before any model runs.
   */
  readRequest?(): Promise<RequestOutcome | null>
  /**
   * The merge request's break-glass requests (people's comments containing `glass.phrase`), decided
   * by the platform's answer on each author's access (review/access.ts `decideBreakGlass`): who
   * broke the glass, and whose requests did not count and why. Call after readChange.
   */
  breakGlass?(glass: Config["breakGlass"]): Promise<BreakGlassOutcome>
}

/** Metadata for a change that has none of its own (a bare patch). */
export function anonymousMergeRequest(title: string, description = ""): MergeRequestInfo {
  return {
    title,
    description,
    author: null,
    sourceBranch: null,
    targetBranch: null,
    baseSha: null,
    headSha: null,
    url: null,
  }
}
