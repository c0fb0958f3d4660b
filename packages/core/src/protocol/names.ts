/**
 * The names the processes of a review agree on: the CLI writes the work dir and starts OpenCode,
 * the runtime plugin (inside OpenCode) runs the reviewers, the comment server records the review.
 * Renaming one here renames it everywhere; nothing else spells them.
 */

/** Environment variable naming the review's work dir, for the runtime plugin and the comment server. */
export const workDirVariable = "OPENCODE_REVIEWER_WORK_DIR"

/** Files in the work dir that cross a process boundary. */
export const workFiles = {
  /** The plan, written by the CLI, read by the runtime plugin and the comment server (`PlanFile`). */
  plan: "plan.json",
  /** The recorded review, written by the comment server (`Submission`). */
  submission: "submission.json",
  /** One JSON line per reviewer start and end, appended by the runtime plugin (`ProgressEvent`). */
  progress: "progress.jsonl",
  /** Written by the runtime plugin when it loads (proof it did, and what it read). */
  sentinel: "runtime-plugin.json",
  /**
   * A directory of finished reviewers' outcomes (`<name>.json`), written by the runtime plugin so a
   * coordinator failback's new OpenCode process carries them over; planning deletes it.
   */
  reviewerResults: "reviewers",
} as const

/** The tools the coordinator is given. */
export const tools = {
  /** The runtime plugin's tool (`SpawnMetadata` is its metadata). */
  spawnReviewers: "spawn_reviewers",
  /** The comment server's MCP server name in opencode.json. */
  commentServer: "review",
  /** The comment server's tool. */
  submitReview: "submit_review",
} as const

/** How OpenCode names an MCP tool for the model: `<server>_<tool>` (docs/opencode.md, MCP). */
export const submitReviewTool = `${tools.commentServer}_${tools.submitReview}`
