// The diff library loads with the first trace: planning, which loads this module through core's
// index, traces nothing.
let diffArrays: typeof import("diff")["diffArrays"] | undefined

/** Where a line of an earlier version of a file is now, and whether the code around it changed. */
export interface LineTrace {
  /** The line's number in the newer version; null when the line itself is gone. */
  line: number | null
  /** True when a line within the window around it was edited, removed or inserted. */
  changed: boolean
}

/**
 * How many lines on each side of a finding's line count as "its code": a fix one line away from
 * where the finding was anchored (the condition above a call, the argument below) still counts.
 */
export const fixWindowLines = 2

// Beyond this many edited lines the diff gives up rather than burning seconds on a rewritten file;
// a file rewritten that much has changed at every finding's line anyway.
const maxEditLength = 20_000

/**
 * Traces `line` (1-based) of `before` into `after` by a line diff, and tells whether the code at
 * and around it (± `window` lines) changed. A line past the end of `before` traces to nothing.
 */
export function traceLine(before: string, after: string, line: number, window = fixWindowLines): LineTrace {
  const oldLines = splitLines(before)
  const newLines = splitLines(after)
  if (line < 1 || line > oldLines.length) return { line: null, changed: true }
  diffArrays ??= (require("diff") as typeof import("diff")).diffArrays
  const changes = diffArrays(oldLines, newLines, { maxEditLength })
  if (changes === undefined) return { line: null, changed: true }
  const from = Math.max(1, line - window)
  const to = Math.min(oldLines.length, line + window)
  let oldPos = 1
  let newPos = 1
  let mapped: number | null = null
  let changed = false
  for (const change of changes) {
    const count = change.count
    if (change.added) {
      // Inserted after old line oldPos - 1: inside the window when that gap lies between two window lines.
      if (oldPos - 1 >= from && oldPos - 1 < to) changed = true
      newPos += count
      continue
    }
    if (change.removed) {
      if (oldPos <= to && oldPos + count - 1 >= from) changed = true
      oldPos += count
      continue
    }
    if (line >= oldPos && line < oldPos + count) mapped = newPos + (line - oldPos)
    oldPos += count
    newPos += count
  }
  return { line: mapped, changed: changed || mapped === null }
}

// Lines without their terminators; a final newline does not make an extra empty line.
function splitLines(text: string): string[] {
  if (text === "") return []
  const lines = text.split(/\r?\n/)
  if (lines.at(-1) === "") lines.pop()
  return lines
}
