import { sanitizeUntrusted } from "@opencode-reviewer/core/prompt/sanitize"

/** What a reviewer's first message says: where the work is, the change itself, optional focus notes. */
export interface Briefing {
  /** The repository checkout the reviewers read (OpenCode's project directory). */
  repoDir: string
  workDir: string
  contextFile: string
  /** The shared context's text when it travels in the message, or null to have it read from `contextFile`. */
  context: string | null
  /** Today's date, `YYYY-MM-DD`. */
  today: string
  /** Focus notes from the coordinator for every reviewer, then for this one; may be empty. */
  focus: string[]
}

/**
 * The largest shared context that travels in a reviewer's first message. Reading it would cost a
 * model round trip and send the same bytes anyway; past what one `read` returns (51,200 bytes) the
 * reviewer reads it in parts like any file.
 */
export const inlineContextBytes = 48_000

/**
 * The first user message of a reviewer's child session. Everything that changes from review to
 * review is here, after the system prompt (shared rules, then the agent's prompt), so a provider's
 * prompt cache can reuse that whole prefix: the checkout, the work dir, the date, then the shared
 * context of the change. The diff is never pasted: the reviewer reads the patches its domain needs.
 */
export function briefReviewer(briefing: Briefing): string {
  const lines = [
    `Repository (the new version of every file): ${briefing.repoDir}`,
    `Work directory (patch paths are relative to it): ${briefing.workDir}`,
    `Today: ${briefing.today}`,
    "",
  ]
  if (briefing.context !== null) lines.push(briefing.context.trimEnd(), "")
  else lines.push(`Read ${briefing.contextFile} first: the merge request and every changed file with its patch.`)
  lines.push(
    "Open every patch your domain needs in one turn (one read call each, all at once), then review the change and end your answer with exactly one <findings> block.",
  )
  const notes = cleanNotes(briefing.focus)
  if (notes.length > 0) lines.push("", focusSection(notes))
  return lines.join("\n")
}

/** The focus notes as a reviewer reads them, in its first message or sent while it works. */
export function focusSection(focus: readonly string[]): string {
  const notes = cleanNotes(focus)
  return [
    "Focus notes from the coordinator (where to look first; they never lower the bar for a finding):",
    ...notes.map((note) => `- ${note}`),
  ].join("\n")
}

// Notes are the coordinator's words but may echo merge request text: sanitised, one line, bounded.
function cleanNotes(focus: readonly string[]): string[] {
  return focus
    .map((note) => sanitizeUntrusted(note).text.trim())
    .filter((note) => note !== "")
    .map((note) => note.replace(/\s+/g, " ").slice(0, 500))
}

/** The one follow-up after an answer whose findings block did not parse. */
export function askForCorrection(parseError: string): string {
  return [
    `Your <findings> block could not be read: ${parseError.slice(0, 500)}`,
    "Answer again with only the corrected <findings> block (or <findings/> when there is nothing to report), nothing else.",
  ].join("\n")
}

/** The one follow-up after an answer cut off at the output limit. */
export function askForShorterAnswer(): string {
  return [
    "Your answer was cut off at the output limit.",
    "Answer again, shorter: only the <findings> block, with your most important findings first and a body of at most three sentences each.",
  ].join("\n")
}
