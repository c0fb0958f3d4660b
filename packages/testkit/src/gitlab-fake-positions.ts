import { type FakeDiffFile, lineCodeForPosition, traceLine } from "./gitlab-fake-git"
import { coerceInteger, coerceString } from "./gitlab-fake-http"
import type { FakePosition, FakeVersion } from "./gitlab-fake-types"
import type { FakeWorld } from "./gitlab-fake-world"

// DiffNote positions: the `position` param parsed as Grape declares it, validated against the
// stored diff as GitLab's DiffNote validations do, and moved along when the source branch is pushed.

export interface ParsedPosition {
  position: FakePosition
  oldLine: number | null
  newLine: number | null
}

export type FakePositions = ReturnType<typeof createPositions>

export function createPositions(world: FakeWorld) {
  const { git, state, current, positionShas, unfold, maxPatchBytes } = world

  // Grape declarations of `optional :position, type: Hash do ... end` in lib/api/discussions.rb.
  const parsePosition = (raw: unknown, errors: string[]): ParsedPosition | null => {
    if (raw === undefined || raw === null) return null
    if (typeof raw !== "object" || Array.isArray(raw)) {
      errors.push("position is invalid")
      return null
    }
    const input = raw as Record<string, unknown>
    const required = (key: string) => {
      if (!(key in input)) {
        errors.push(`position[${key}] is missing`)
        return ""
      }
      return coerceString(input[key], `position[${key}]`, errors) ?? ""
    }
    const baseSha = required("base_sha")
    const startSha = required("start_sha")
    const headSha = required("head_sha")
    const positionType = required("position_type")
    if ("position_type" in input && positionType !== "" && !["text", "image", "file"].includes(positionType)) {
      errors.push("position[position_type] does not have a valid value")
    } else if ("position_type" in input && positionType === "") {
      errors.push("position[position_type] does not have a valid value")
    }
    const newPath = coerceString(input.new_path, "position[new_path]", errors)
    const newLine = coerceInteger(input.new_line, "position[new_line]", errors)
    const oldPath = coerceString(input.old_path, "position[old_path]", errors)
    const oldLine = coerceInteger(input.old_line, "position[old_line]", errors)
    const width = coerceInteger(input.width, "position[width]", errors)
    const height = coerceInteger(input.height, "position[height]", errors)
    const x = coerceInteger(input.x, "position[x]", errors)
    const y = coerceInteger(input.y, "position[y]", errors)
    let lineRange: unknown = null
    if (input.line_range !== undefined && input.line_range !== null) {
      if (typeof input.line_range !== "object" || Array.isArray(input.line_range))
        errors.push("position[line_range] is invalid")
      else lineRange = parseLineRange(input.line_range as Record<string, unknown>, errors)
    }
    const type = (
      ["text", "image", "file"].includes(positionType) ? positionType : "text"
    ) as FakePosition["position_type"]
    const base = { base_sha: baseSha, start_sha: startSha, head_sha: headSha, old_path: oldPath, new_path: newPath }
    if (type === "file") return { position: { ...base, position_type: "file" }, oldLine, newLine }
    if (type === "image")
      return { position: { ...base, position_type: "image", width, height, x, y }, oldLine, newLine }
    return {
      position: {
        ...base,
        position_type: "text",
        old_line: oldLine,
        new_line: newLine,
        line_range: lineRange,
        ignore_whitespace_change: false,
      },
      oldLine,
      newLine,
    }
  }

  const parseLineRange = (range: Record<string, unknown>, errors: string[]) => {
    const out: Record<string, unknown> = {}
    for (const end of ["start", "end"]) {
      const value = range[end]
      if (value === undefined || value === null) continue
      if (typeof value !== "object" || Array.isArray(value)) {
        errors.push(`position[line_range][${end}] is invalid`)
        continue
      }
      const fields = value as Record<string, unknown>
      const parsed: Record<string, unknown> = {}
      for (const key of ["line_code", "type", "old_line", "new_line"]) {
        if (key in fields) parsed[key] = coerceString(fields[key], `position[line_range][${end}][${key}]`, errors)
      }
      out[end] = parsed
    }
    return out
  }

  const shasAllowed = (position: FakePosition): boolean => {
    if (positionShas === "repository") return true
    const candidates = positionShas === "current" ? [current()] : state.versions
    return candidates.some(
      (version) =>
        version.baseSha === position.base_sha &&
        version.startSha === position.start_sha &&
        version.headSha === position.head_sha,
    )
  }

  // DiffNote validations: set_line_code (via Gitlab::Diff::Position#line_code) and positions_complete.
  const validateDiffNote = (parsed: ParsedPosition): { lineCode: string | null; errors: [string, string[]][] } => {
    const position = parsed.position
    const errors: [string, string[]][] = []
    const filePath = position.new_path || position.old_path
    const shasComplete = position.base_sha !== "" && position.start_sha !== "" && position.head_sha !== ""
    const formatterComplete =
      position.position_type === "text"
        ? parsed.oldLine !== null || parsed.newLine !== null
        : position.position_type === "file"
          ? !!position.new_path && !!position.old_path
          : position.x != null && position.y != null && position.width != null && position.height != null
    const complete = !!filePath && formatterComplete && shasComplete
    let lineCode: string | null = null
    const paths = [...new Set([position.old_path, position.new_path].filter((path): path is string => !!path))]
    const found = shasAllowed(position) ? diffFileFor(position, paths) : null
    // Gitaly prunes a patch over diff_max_patch_bytes (too_large), so it has no lines to comment on.
    const file = found && Buffer.byteLength(found.diff) >= maxPatchBytes ? { ...found, diff: "" } : found
    if (position.position_type === "text") {
      if (file && complete) {
        lineCode = lineCodeFor(file, position.base_sha, parsed)
      }
      if (!lineCode) errors.push(["line_code", ["can't be blank", "must be a valid line code"]])
    } else if (!file && positionShas !== "repository") {
      // Stricter than GitLab (which stores file/image notes on any path): the fake's contract
      // (docs/gitlab.md, "The contract of the GitLab fake") wants the path in the diff.
      errors.push(["line_code", ["can't be blank", "must be a valid line code"]])
    }
    if (!complete) errors.push(["position", ["is incomplete"]])
    return { lineCode, errors }
  }

  const diffFileFor = (position: FakePosition, paths: string[]): FakeDiffFile | null => {
    const base = git.resolveCommit(position.base_sha)
    const head = git.resolveCommit(position.head_sha)
    if (!base || !head || !git.resolveCommit(position.start_sha)) return null
    try {
      return git.diffFiles(base, head, paths)[0] ?? null
    } catch {
      return null
    }
  }

  const lineCodeFor = (
    file: FakeDiffFile,
    baseSha: string,
    parsed: { oldLine: number | null; newLine: number | null },
  ): string | null => {
    const found = lineCodeForPosition(git, file, baseSha, parsed)
    if (!found) return null
    if (found.unfolded && !unfold) return null
    return found.lineCode
  }

  // DiffNote positions follow pushes (Discussions::UpdateDiffPositionService), approximately: a line
  // that git maps unchanged from the old head to the new one, and that is still in the new diff.
  const tracePositions = (previous: FakeVersion, next: FakeVersion) => {
    for (const discussion of state.discussions) {
      const first = discussion.notes[0]
      const position = first?.position
      if (!first || !position || position.position_type !== "text") continue
      if (position.head_sha !== previous.headSha || position.base_sha !== previous.baseSha) continue
      const oldPath = position.old_path ?? position.new_path ?? ""
      const newPath = position.new_path ?? oldPath
      const oldLine = position.old_line ?? null
      const newLine = position.new_line ?? null
      const tracedNew =
        newLine === null ? null : traceLine(git, previous.headSha, next.headSha, newPath, newPath, newLine)
      const tracedOld =
        oldLine === null
          ? null
          : previous.baseSha === next.baseSha
            ? oldLine
            : traceLine(git, previous.baseSha, next.baseSha, oldPath, oldPath, oldLine)
      if ((newLine !== null && tracedNew === null) || (oldLine !== null && tracedOld === null)) continue
      const moved: FakePosition = {
        ...position,
        base_sha: next.baseSha,
        start_sha: next.startSha,
        head_sha: next.headSha,
        old_line: tracedOld,
        new_line: tracedNew,
      }
      const paths = [...new Set([oldPath, newPath].filter(Boolean))]
      const file = diffFileFor(moved, paths)
      const lineCode = file ? lineCodeFor(file, next.baseSha, { oldLine: tracedOld, newLine: tracedNew }) : null
      if (!lineCode) continue
      for (const note of discussion.notes) {
        note.position = moved
        note.lineCode = lineCode
      }
    }
  }

  return { parsePosition, validateDiffNote, tracePositions }
}
