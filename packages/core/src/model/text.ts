import { type Severity, severityOrder } from "./finding"

/** Formatting shared by the review renderers (terminal, markdown, GitLab summary). */

/** "42s" under a minute, else "3m 09s". */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`
}

/** A count with thousands separators: 24,872. */
export function formatNumber(value: number): string {
  return value.toLocaleString("en-US")
}

/** The text on one line: newlines and the whitespace around them become one space. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim()
}

/** Markdown inline code that survives backticks in the text (a file name may hold any character). */
export function inlineCode(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length))
  const fence = "`".repeat(longest + 1)
  const pad = text.startsWith("`") || text.endsWith("`") ? " " : ""
  return `${fence}${pad}${oneLine(text)}${pad}${fence}`
}

/** Where a finding points: "file:line", or the file alone when it has no line. */
export function findingLocation(finding: { file: string; line: number | null }): string {
  return finding.line === null ? finding.file : `${finding.file}:${finding.line}`
}

/** Text as findings are compared: case, runs of spaces and trailing punctuation do not count. */
export function comparableText(text: string): string {
  return text
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!?;:,]+$/, "")
}

/** "1 file", "3 files". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`
}

/** "no findings", or "3 findings (1 critical, 2 suggestion)". */
export function countFindings(findings: readonly { severity: Severity }[]): string {
  if (findings.length === 0) return "no findings"
  const parts = severityOrder
    .map((severity) => [severity, findings.filter((finding) => finding.severity === severity).length] as const)
    .filter(([, count]) => count > 0)
    .map(([severity, count]) => `${count} ${severity}`)
  return `${plural(findings.length, "finding")} (${parts.join(", ")})`
}

/**
 * Whether a review must read as incomplete: too much of it did not run (coverage.complete false),
 * unless a human broke the glass, which approves on purpose (the warnings still say what did not run).
 */
export function reviewIncomplete(record: { coverage: { complete: boolean }; breakGlass: boolean }): boolean {
  return !record.coverage.complete && !record.breakGlass
}

/**
 * Characters that render as nothing or reorder text (zero-width, bidi controls, soft hyphen, Unicode
 * tags: Trojan Source): removed from everything we post or report. Variation selectors stay (they
 * pick an emoji's presentation). Global: use with `replace`.
 */
export const invisibleCharacters =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each listed character is matched alone on purpose (U+034F is a combining joiner we strip)
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFEFF\uFFA0]|[\u{E0000}-\u{E007F}]/gu

/** C0 and C1 controls except tab and line feed (carriage returns are line breaks by then). Global. */
export const controlCharacters = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

/** Removes invisible and control characters (tab and line breaks stay). */
export function removeInvisible(text: string): string {
  return text.replace(invisibleCharacters, "").replace(controlCharacters, "")
}
