import type { DiffFile } from "@opencode-reviewer/core"

/** The SHAs of one merge request diff version (`diff_refs`). */
export interface DiffRefs {
  baseSha: string
  startSha: string
  headSha: string
}

/** A DiffNote position as GitLab's discussions API takes it (snake_case, sent as JSON). */
export interface TextPosition {
  position_type: "text"
  base_sha: string
  start_sha: string
  head_sha: string
  old_path: string
  new_path: string
  old_line?: number
  new_line?: number
}

/** Where a finding goes: an inline position, or the reason it can only be listed in the summary. */
export type Anchor =
  | { ok: true; position: TextPosition; kind: "add" | "remove" | "context" }
  | { ok: false; reason: string }

/**
 * Anchors a finding (file + line) on the diff by GitLab's rules: an added line gets `new_line`
 * only, a removed line `old_line` only, a context line both; `old_path`/`new_path` always. Lines
 * are read in the new file's numbering; only a deleted file is read in the old one. A line outside
 * the hunks is not anchored (GitLab answers 400), and never guessed onto a nearby line.
 */
export function anchorFinding(
  files: readonly DiffFile[],
  finding: { file: string; line: number | null },
  refs: DiffRefs,
): Anchor {
  if (finding.line === null) return { ok: false, reason: "no line given" }
  const file =
    files.find((candidate) => candidate.path === finding.file) ??
    files.find((candidate) => candidate.oldPath === finding.file)
  if (!file) return { ok: false, reason: "file not in the diff" }
  if (file.binary) return { ok: false, reason: "binary file" }
  const base = {
    position_type: "text" as const,
    base_sha: refs.baseSha,
    start_sha: refs.startSha,
    head_sha: refs.headSha,
    old_path: file.oldPath,
    new_path: file.path,
  }
  const lines = file.hunks.flatMap((hunk) => hunk.lines)
  if (file.status === "deleted") {
    const removed = lines.find((line) => line.kind === "remove" && line.oldLine === finding.line)
    if (!removed) return { ok: false, reason: `line ${finding.line} is not in the diff` }
    return { ok: true, kind: "remove", position: { ...base, old_line: removed.oldLine as number } }
  }
  const line = lines.find((candidate) => candidate.kind !== "remove" && candidate.newLine === finding.line)
  if (!line) return { ok: false, reason: `line ${finding.line} is not in the diff` }
  if (line.kind === "add") return { ok: true, kind: "add", position: { ...base, new_line: line.newLine as number } }
  return {
    ok: true,
    kind: "context",
    position: { ...base, old_line: line.oldLine as number, new_line: line.newLine as number },
  }
}
