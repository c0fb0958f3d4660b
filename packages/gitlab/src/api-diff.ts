import * as z from "zod"

/**
 * One file of `GET /merge_requests/:iid/diffs`. gitbeaker's schema lacks `collapsed`, `too_large`
 * and `generated_file` (docs/gitlab.md#diffs-and-their-limits), so this is our own, with everything newer optional.
 */
export const ApiDiffFile = z.object({
  old_path: z.string(),
  new_path: z.string(),
  a_mode: z.string().nullish(),
  b_mode: z.string().nullish(),
  diff: z.string().nullish(),
  new_file: z.boolean().nullish(),
  renamed_file: z.boolean().nullish(),
  deleted_file: z.boolean().nullish(),
  generated_file: z.boolean().nullish(),
  collapsed: z.boolean().nullish(),
  too_large: z.boolean().nullish(),
})
export type ApiDiffFile = z.infer<typeof ApiDiffFile>

/** A changed file whose content the review did not see, and why. */
export interface UnreviewedFile {
  path: string
  reason: string
  /** How many changed files the entry stands for: 1 when absent, null when unknown (past GitLab's diff limits). */
  files?: number | null
}

/** The unified git diff rebuilt from GitLab's per-file diffs, and the files GitLab sent no content for. */
export interface AssembledDiff {
  diff: string
  unreviewed: UnreviewedFile[]
}

/**
 * Rebuilds a unified git diff (the shape `git diff -M` prints, which core's `parseDiff` reads) from
 * `/diffs` entries. A file whose `diff` is empty although its content changed (collapsed, too large,
 * over GitLab's diff limits) is left out and listed as unreviewed: an empty diff never means "unchanged".
 */
export function assembleDiff(files: readonly ApiDiffFile[]): AssembledDiff {
  const sections: string[] = []
  const unreviewed: UnreviewedFile[] = []
  for (const file of files) {
    const omitted = omission(file)
    if (omitted !== null) {
      unreviewed.push({ path: file.new_path || file.old_path, reason: omitted })
      continue
    }
    sections.push(section(file))
  }
  return { diff: sections.join(""), unreviewed }
}

/**
 * The changed files `/diffs` did not list, as one unreviewed entry, or null when it listed them all.
 * GitLab stores at most its "Maximum diff files" (`diff_max_files`, default 1000) and "Maximum diff
 * lines" per version; past them it drops the rest silently, and only the merge request's
 * `changes_count` ("1000+") shows it. Their names are unknown, so the entry names the range.
 */
export function unlistedFiles(changesCount: unknown, listed: number): UnreviewedFile | null {
  const match = /^(\d+)(\+?)$/.exec(
    typeof changesCount === "string" || typeof changesCount === "number" ? String(changesCount).trim() : "",
  )
  if (!match) return null
  const total = Number(match[1])
  const overflow = match[2] === "+"
  if (!overflow && total <= listed) return null
  const count = (value: number) => value.toLocaleString("en-US")
  const of = overflow ? `more than ${count(total)}` : count(total)
  return {
    files: overflow ? null : total - listed,
    path: `every changed file after the first ${count(listed)}`,
    reason: `GitLab's /diffs stops at its diff limits, listing ${count(listed)} of ${of} changed files, changes_count "${match[0]}"; fetch the merge request's commits, GIT_DEPTH: 0, so git reads the whole diff`,
  }
}

// Why GitLab's answer holds no reviewable content for a file, or null when it is complete.
function omission(file: ApiDiffFile): string | null {
  if (file.too_large) return "too large: GitLab returned no diff content"
  if (file.collapsed) return "collapsed: GitLab returned no diff content (over its diff limits)"
  const text = file.diff ?? ""
  if (text.trim() !== "") return null
  const modeChange =
    !file.new_file && !file.deleted_file && !!file.a_mode && !!file.b_mode && file.a_mode !== file.b_mode
  if (file.renamed_file || modeChange) return null
  return file.new_file || file.deleted_file
    ? "GitLab returned no diff content (an empty file, or content over its diff limits)"
    : "GitLab returned no diff content (over its diff limits)"
}

function section(file: ApiDiffFile): string {
  const text = file.diff ?? ""
  // `unidiff=true` answers already carry git's own header.
  if (text.startsWith("diff --git ")) return ensureNewline(text)
  const oldName = quote(`a/${file.old_path}`)
  const newName = quote(`b/${file.new_path}`)
  const lines = [`diff --git ${oldName} ${newName}`]
  if (file.new_file) lines.push(`new file mode ${file.b_mode || "100644"}`)
  else if (file.deleted_file) lines.push(`deleted file mode ${file.a_mode || "100644"}`)
  else if (file.a_mode && file.b_mode && file.a_mode !== file.b_mode)
    lines.push(`old mode ${file.a_mode}`, `new mode ${file.b_mode}`)
  if (file.renamed_file) lines.push(`rename from ${quote(file.old_path)}`, `rename to ${quote(file.new_path)}`)
  if (text.trim() === "") return lines.join("\n") + "\n"
  if (text.startsWith("Binary files ")) return lines.join("\n") + "\n" + ensureNewline(text)
  lines.push(
    `--- ${file.new_file ? "/dev/null" : marker(oldName)}`,
    `+++ ${file.deleted_file ? "/dev/null" : marker(newName)}`,
  )
  return lines.join("\n") + "\n" + ensureNewline(text)
}

// git ends a ---/+++ name that holds a space with a tab, so the name's end is unambiguous.
function marker(name: string): string {
  return name.includes(" ") && !name.startsWith('"') ? `${name}\t` : name
}

/** A path as git prints it with core.quotePath=true: C-quoted when it holds quotes, backslashes, controls or non-ASCII. */
export function quote(path: string): string {
  if (!/["\\\x00-\x1f\x7f-\uffff]/.test(path)) return path
  let out = '"'
  for (const byte of new TextEncoder().encode(path)) {
    if (byte === 0x22) out += '\\"'
    else if (byte === 0x5c) out += "\\\\"
    else if (byte === 0x09) out += "\\t"
    else if (byte === 0x0a) out += "\\n"
    else if (byte === 0x0d) out += "\\r"
    else if (byte < 0x20 || byte >= 0x7f) out += `\\${byte.toString(8).padStart(3, "0")}`
    else out += String.fromCharCode(byte)
  }
  return `${out}"`
}

function ensureNewline(text: string): string {
  return text.endsWith("\n") ? text : `${text}\n`
}
