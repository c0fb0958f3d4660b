import type { Finding, Suggestion } from "../model/finding"
import type { DiffFile } from "../plan/diff"

/** A suggestion that may be posted: the diff lines it replaces (new-file numbering) and its text. */
export interface ApplicableSuggestion {
  startLine: number
  endLine: number
  lines: string[]
}

/**
 * Whether a finding's suggestion can be offered as a committable change, and why not. It applies
 * only when every line it replaces, `startLine` to the finding's line, is a line of the new file
 * inside one hunk of the diff (added or context), the replacement is complete (no `...` stand-in
 * for code left out, no code fence that would end the block early) and it changes something.
 */
export function applicableSuggestion(
  finding: Pick<Finding, "file" | "line" | "suggestion">,
  files: readonly DiffFile[],
): { ok: true; suggestion: ApplicableSuggestion } | { ok: false; reason: string } {
  const suggestion: Suggestion | undefined = finding.suggestion
  if (!suggestion) return { ok: false, reason: "no suggestion" }
  if (finding.line === null) return { ok: false, reason: "the finding has no line" }
  const file = files.find((candidate) => candidate.path === finding.file)
  if (!file || file.binary || file.status === "deleted") return { ok: false, reason: "the file has no new side" }
  const hunk = file.hunks.find((candidate) =>
    candidate.lines.some((line) => line.kind !== "remove" && line.newLine === finding.line),
  )
  const replaced = hunk?.lines.filter(
    (line) =>
      line.kind !== "remove" &&
      line.newLine !== null &&
      line.newLine >= suggestion.startLine &&
      line.newLine <= (finding.line as number),
  )
  const span = (finding.line as number) - suggestion.startLine + 1
  if (!replaced || replaced.length !== span)
    return { ok: false, reason: `lines ${suggestion.startLine}-${finding.line} are not all in one hunk of the diff` }
  if (suggestion.lines.some((line) => placeholder.test(line)))
    return { ok: false, reason: "the replacement leaves code out (a `...` line)" }
  if (suggestion.lines.some((line) => /^\s{0,3}(?:`{3,}|~{3,})/.test(line)))
    return { ok: false, reason: "the replacement holds a code fence" }
  if (replaced.map((line) => line.text).join("\n") === suggestion.lines.join("\n"))
    return { ok: false, reason: "the replacement is the code as it is" }
  return { ok: true, suggestion: { startLine: suggestion.startLine, endLine: finding.line, lines: suggestion.lines } }
}

// A line that stands for code the model did not write out: "...", "…", "// ...", "# … rest unchanged".
const placeholder = /^\s*(?:(?:\/\/|#|--|\/\*|\*|<!--)\s*)?(?:\.\.\.|…)(?:\s.*)?$/
