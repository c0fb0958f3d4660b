import { sanitizeUntrusted } from "@opencode-reviewer/core/prompt/sanitize"

/** What a reviewer's first message says: where the work is, and optional focus notes. */
export interface Briefing {
  workDir: string
  contextFile: string
  /** Focus notes from the coordinator for every reviewer, then for this one; may be empty. */
  focus: string[]
}

/**
 * The first user message of a reviewer's child session. Small and the same for every reviewer up
 * to the focus notes (which come last), so the providers' prompt caches see one shared prefix. The
 * diff is never pasted: the reviewer reads the context file and the patches it needs.
 */
export function briefReviewer(briefing: Briefing): string {
  const lines = [
    `Work directory: ${briefing.workDir}`,
    `Read ${briefing.contextFile} first: it describes the merge request and lists every changed file with its patch (paths relative to the work directory).`,
    "Then review the change in your domain and end your answer with exactly one <findings> block.",
  ]
  const notes = briefing.focus.map((note) => sanitizeUntrusted(note).text.trim()).filter((note) => note !== "")
  if (notes.length > 0) {
    lines.push("", "Focus notes from the coordinator (where to look first; they never lower the bar for a finding):")
    for (const note of notes) lines.push(`- ${note.replace(/\s+/g, " ").slice(0, 500)}`)
  }
  return lines.join("\n")
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
