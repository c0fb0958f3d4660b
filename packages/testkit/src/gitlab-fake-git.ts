import { createHash } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

// The git side of the GitLab fake: what Gitaly would compute for a merge request, read from a real
// repository. Semantics follow GitLab's source (lib/gitlab/git/diff.rb, lib/gitlab/diff/parser.rb,
// lib/gitlab/diff/lines_unfolder.rb, Gitaly's CommitDiff which runs `git diff --find-renames=30%`).

/** One changed file as GitLab stores it for a merge request diff version. */
export interface FakeDiffFile {
  oldPath: string
  newPath: string
  /** Octal mode strings; "0" for the missing side of an added or deleted file (GitLab's `to_s(8)`). */
  aMode: string
  bMode: string
  newFile: boolean
  renamedFile: boolean
  deletedFile: boolean
  /** Hunk text from the first `@@` on (no `diff --git`/`---`/`+++` header), or git's "Binary files … differ" line. */
  diff: string
  binary: boolean
}

/** One commit between the merge base and the head, newest first. */
export interface FakeCommit {
  sha: string
  parentIds: string[]
  authorName: string
  authorEmail: string
  authoredDate: string
  committerName: string
  committerEmail: string
  committedDate: string
  message: string
}

/** A line of a parsed diff, as Gitlab::Diff::Parser yields it. */
export interface DiffLine {
  /** "match" (hunk header), "new" (+), "old" (-), null (context), "<context>-nonewline" (`\ No newline…`). */
  type: string | null
  oldPos: number
  newPos: number
  index: number
}

const fixedConfig = [
  "-c",
  "core.quotePath=false",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "diff.relative=false",
  "-c",
  "diff.external=",
  "-c",
  "diff.orderFile=/dev/null",
  "-c",
  "color.ui=false",
  "-c",
  "core.pager=cat",
  "--literal-pathspecs",
]

/** The environment the fakes run git in: no user or system configuration, no prompts, no locks. */
export function isolatedGitEnv(dir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_OPTIONAL_LOCKS: "0",
    LC_ALL: "C",
  }
}

/** Runs git in the fake's repository with no user or system configuration. */
export class FakeGit {
  private readonly env: Record<string, string>
  private readonly cache = new Map<string, unknown>()

  constructor(readonly dir: string) {
    this.env = isolatedGitEnv(dir)
  }

  run(args: string[], options: { input?: string | Uint8Array; env?: Record<string, string> } = {}) {
    // spawnSync on purpose (AGENTS.md): Bun's async pipe reader holds many times the output in memory.
    const child = Bun.spawnSync(["git", ...fixedConfig, ...args], {
      cwd: this.dir,
      env: { ...this.env, ...options.env },
      stdin:
        options.input === undefined
          ? "ignore"
          : typeof options.input === "string"
            ? new TextEncoder().encode(options.input)
            : options.input,
      stdout: "pipe",
      stderr: "pipe",
    })
    return { code: child.exitCode ?? 128, stdout: child.stdout.toString(), stderr: child.stderr.toString() }
  }

  text(args: string[]): string {
    const result = this.run(args)
    if (result.code !== 0) throw new Error(`gitlab-fake: git ${args.join(" ")} failed: ${result.stderr.trim()}`)
    return result.stdout
  }

  /** The commit a ref or sha names, or null when it does not resolve to a commit. */
  resolveCommit(ref: string): string | null {
    if (ref === "" || ref.startsWith("-")) return null
    const result = this.run(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])
    return result.code === 0 ? result.stdout.trim() : null
  }

  mergeBase(a: string, b: string): string | null {
    const result = this.run(["merge-base", a, b])
    return result.code === 0 ? result.stdout.trim() : null
  }

  /** Changed files between two commits, limited to `paths` when given (a literal pathspec, as Gitaly passes it). */
  diffFiles(base: string, head: string, paths?: string[]): FakeDiffFile[] {
    const key = `diff\0${base}\0${head}\0${(paths ?? []).join("\0")}`
    const cached = this.cache.get(key)
    if (cached) return cached as FakeDiffFile[]
    const pathArgs = paths && paths.length > 0 ? ["--", ...paths] : []
    const raw = this.run(["diff", "--raw", "-z", "--no-abbrev", "--find-renames=30%", base, head, ...pathArgs])
    if (raw.code !== 0) throw new Error(`gitlab-fake: git diff --raw ${base} ${head} failed: ${raw.stderr.trim()}`)
    const entries = parseRaw(raw.stdout)
    const patch = this.run([
      "diff",
      "-p",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--full-index",
      "--find-renames=30%",
      base,
      head,
      ...pathArgs,
    ])
    if (patch.code !== 0) throw new Error(`gitlab-fake: git diff -p ${base} ${head} failed: ${patch.stderr.trim()}`)
    const chunks = splitPatch(patch.stdout)
    if (chunks.length !== entries.length) {
      throw new Error(`gitlab-fake: git diff gave ${entries.length} raw entries but ${chunks.length} patches`)
    }
    const files = entries.map((entry, index) => {
      const body = patchBody(chunks[index] ?? "")
      return {
        oldPath: entry.oldPath,
        newPath: entry.newPath,
        aMode: octal(entry.oldMode),
        bMode: octal(entry.newMode),
        newFile: entry.status === "A",
        renamedFile: entry.oldPath !== entry.newPath,
        deletedFile: entry.status === "D",
        diff: body.text,
        binary: body.binary,
      }
    })
    this.cache.set(key, files)
    return files
  }

  /** The plain `git diff` text between two commits, as `/raw_diffs` returns it. */
  rawDiff(base: string, head: string): string {
    return this.text(["diff", "-p", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames=30%", base, head])
  }

  /** Commits reachable from head but not from base, newest first. */
  commits(base: string, head: string): FakeCommit[] {
    const format = ["%H", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"].join("%x00") + "%x1e"
    const out = this.text(["log", `--format=${format}`, `${base}..${head}`])
    return out
      .split("\x1e")
      .map((record) => record.replace(/^\n/, ""))
      .filter((record) => record.length > 0)
      .map((record) => {
        const [
          sha = "",
          parents = "",
          authorName = "",
          authorEmail = "",
          authoredDate = "",
          committerName = "",
          committerEmail = "",
          committedDate = "",
          message = "",
        ] = record.split("\x00")
        return {
          sha,
          parentIds: parents.split(" ").filter(Boolean),
          authorName,
          authorEmail,
          authoredDate: gitlabTime(authoredDate),
          committerName,
          committerEmail,
          committedDate: gitlabTime(committedDate),
          message,
        }
      })
  }

  /** `git patch-id --stable` of the whole diff, which GitLab stores as the version's patch_id_sha. */
  patchId(base: string, head: string): string | null {
    const diff = this.run(["diff", "-p", "--no-color", "--no-ext-diff", "--full-index", base, head])
    if (diff.code !== 0 || diff.stdout === "") return null
    const id = this.run(["patch-id", "--stable"], { input: diff.stdout })
    return id.stdout.trim().split(/\s+/)[0] || null
  }

  /** Number of lines of a blob (Ruby's `data.lines.size`), or null when the path is not in that commit. */
  blobLineCount(commit: string, path: string): number | null {
    const key = `lines\0${commit}\0${path}`
    if (this.cache.has(key)) return this.cache.get(key) as number | null
    const result = this.run(["cat-file", "blob", `${commit}:${path}`])
    const count =
      result.code !== 0
        ? null
        : result.stdout === ""
          ? 0
          : result.stdout.split("\n").length - (result.stdout.endsWith("\n") ? 1 : 0)
    this.cache.set(key, count)
    return count
  }

  /** True when merging head into target would conflict (`git merge-tree --write-tree`, git >= 2.38). */
  hasConflicts(target: string, head: string): boolean {
    const result = this.run(["merge-tree", "--write-tree", "--name-only", "--no-messages", target, head])
    return result.code === 1
  }

  /** Paths marked `gitlab-generated` or `linguist-generated` by the .gitattributes of `commit`. */
  generatedByAttributes(commit: string, paths: string[]): Set<string> {
    const generated = new Set<string>()
    if (paths.length === 0) return generated
    // `git check-attr --source` needs git 2.40; a throwaway index of the commit works everywhere.
    const scratch = mkdtempSync(join(tmpdir(), "gitlab-fake-index-"))
    try {
      const env = { GIT_INDEX_FILE: join(scratch, "index") }
      if (this.run(["read-tree", commit], { env }).code !== 0) return generated
      const result = this.run(
        ["check-attr", "--cached", "-z", "gitlab-generated", "linguist-generated", "--", ...paths],
        { env },
      )
      const fields = result.stdout.split("\0")
      for (let i = 0; i + 2 < fields.length; i += 3) {
        const [path, , value] = [fields[i] ?? "", fields[i + 1], fields[i + 2]]
        if (value === "set" || value === "true") generated.add(path)
      }
      return generated
    } finally {
      rmSync(scratch, { recursive: true, force: true })
    }
  }
}

interface RawEntry {
  oldMode: string
  newMode: string
  status: string
  oldPath: string
  newPath: string
}

function parseRaw(text: string): RawEntry[] {
  const fields = text.split("\0")
  const entries: RawEntry[] = []
  let i = 0
  while (i < fields.length) {
    const meta = fields[i] ?? ""
    if (!meta.startsWith(":")) {
      i += 1
      continue
    }
    const [oldMode = "0", newMode = "0", , , statusField = ""] = meta.slice(1).split(" ")
    const status = statusField.charAt(0)
    const first = fields[i + 1] ?? ""
    if (status === "R" || status === "C") {
      entries.push({ oldMode, newMode, status, oldPath: first, newPath: fields[i + 2] ?? "" })
      i += 3
      continue
    }
    entries.push({ oldMode, newMode, status, oldPath: first, newPath: first })
    i += 2
  }
  return entries
}

function splitPatch(text: string): string[] {
  if (text === "") return []
  const starts: number[] = []
  const pattern = /^diff --git /gm
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) starts.push(match.index)
  return starts.map((start, index) => text.slice(start, starts[index + 1] ?? text.length))
}

function patchBody(chunk: string): { text: string; binary: boolean } {
  const hunk = chunk.search(/^@@ /m)
  if (hunk >= 0) return { text: chunk.slice(hunk), binary: false }
  const binary = /^Binary files .* differ$/m.exec(chunk)
  if (binary) return { text: `${binary[0]}\n`, binary: true }
  if (/^GIT binary patch$/m.test(chunk)) return { text: "", binary: true }
  return { text: "", binary: false }
}

function octal(mode: string): string {
  const value = Number.parseInt(mode, 8)
  return Number.isNaN(value) ? mode : value.toString(8)
}

/** git's strict ISO date ("2026-01-01T00:00:00+00:00") in GitLab's rendering ("2026-01-01T00:00:00.000+00:00"). */
function gitlabTime(iso: string): string {
  return iso.replace(/(T\d\d:\d\d:\d\d)([+-Z])/, "$1.000$2")
}

/** Parses hunk text exactly like Gitlab::Diff::Parser (quirks included: a `--- a…` line right after context is skipped). */
export function parseDiffLines(diff: string): DiffLine[] {
  if (diff === "" || diff.startsWith("Binary files ")) return []
  const lines: DiffLine[] = []
  let index = 0
  let oldPos = 1
  let newPos = 1
  let type: string | null = null
  let context: string | null = null
  const raw = diff.split(/(?<=\n)/)
  for (const line of raw) {
    if (isFilenameLine(line) && type === null) continue
    if (/^@@ -/.test(line)) {
      type = "match"
      oldPos = Math.abs(Number.parseInt(/-[0-9]*/.exec(line)?.[0] ?? "0", 10)) || 0
      newPos = Math.abs(Number.parseInt(/\+[0-9]*/.exec(line)?.[0] ?? "0", 10)) || 0
      if (oldPos <= 1 && newPos <= 1) continue
      lines.push({ type, oldPos, newPos, index: index++ })
      continue
    }
    if (line.startsWith("\\")) {
      type = `${context ?? ""}-nonewline`
      lines.push({ type, oldPos, newPos, index: index++ })
    } else {
      type = line.startsWith("+") ? "new" : line.startsWith("-") ? "old" : null
      lines.push({ type, oldPos, newPos, index: index++ })
    }
    if (line.startsWith("+")) {
      newPos += 1
      context = "new"
    } else if (line.startsWith("-")) {
      oldPos += 1
      context = "old"
    } else if (!line.startsWith("\\")) {
      newPos += 1
      oldPos += 1
    }
  }
  return lines
}

function isFilenameLine(line: string): boolean {
  return ["--- /dev/null", "+++ /dev/null", "--- a", "+++ b", "--- /tmp/diffy", "+++ /tmp/diffy"].some((prefix) =>
    line.startsWith(prefix),
  )
}

const added = (line: DiffLine) => line.type === "new" || line.type === "new-nonewline"
const removed = (line: DiffLine) => line.type === "old" || line.type === "old-nonewline"
const meta = (line: DiffLine) => line.type === "match" || line.type === "new-nonewline" || line.type === "old-nonewline"

/** Gitlab::Diff::Line#old_line: the old line number, or null for added and meta lines. */
export function oldLineOf(line: DiffLine): number | null {
  return added(line) || meta(line) ? null : line.oldPos
}

/** Gitlab::Diff::Line#new_line: the new line number, or null for removed and meta lines. */
export function newLineOf(line: DiffLine): number | null {
  return removed(line) || meta(line) ? null : line.newPos
}

/** What a text position resolves to in one diff file: the line code GitLab would store, or null (→ HTTP 400). */
export function lineCodeForPosition(
  git: FakeGit,
  file: FakeDiffFile,
  baseSha: string,
  position: { oldLine: number | null; newLine: number | null },
): { lineCode: string; unfolded: boolean } | null {
  const filePath = file.newPath || file.oldPath
  const hash = createHash("sha1").update(filePath).digest("hex")
  const lines = parseDiffLines(file.diff)
  // DiffFile#line_for_position: the last line whose old_line and new_line both equal the position's.
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = lines[i]!
    if (oldLineOf(line) === position.oldLine && newLineOf(line) === position.newLine) {
      return { lineCode: `${hash}_${line.oldPos}_${line.newPos}`, unfolded: false }
    }
  }
  const unfolded = unfoldedLine(git, file, baseSha, lines, position)
  return unfolded ? { lineCode: `${hash}_${unfolded.oldPos}_${unfolded.newPos}`, unfolded: true } : null
}

// Gitlab::Diff::LinesUnfolder: an unchanged line outside the hunks (both old_line and new_line given)
// is accepted when new_line = old_line + the offset GitLab derives from the neighbouring hunk header.
function unfoldedLine(
  git: FakeGit,
  file: FakeDiffFile,
  baseSha: string,
  lines: DiffLine[],
  position: { oldLine: number | null; newLine: number | null },
): { oldPos: number; newPos: number } | null {
  const { oldLine, newLine } = position
  if (oldLine === null || newLine === null) return null
  if (file.binary || file.newFile || file.deletedFile || lines.length === 0) return null
  const blobLines = git.blobLineCount(baseSha, file.oldPath)
  if (blobLines === null || oldLine > blobLines) return null
  const last = lines[lines.length - 1]!
  const bottom = oldLine > last.oldPos
  const unfoldLine = bottom ? last : lines.find((line) => line.oldPos > oldLine && line.type === "match")
  if (!unfoldLine) return null
  const offset = unfoldLine.newPos - unfoldLine.oldPos
  const before = unfoldLine.index > 0 ? lines[unfoldLine.index - 1] : undefined
  const previous = bottom ? undefined : before
  // The unfolded blob lines span (line before the gap, next hunk header); the comment must fall inside.
  if (previous && oldLine <= previous.oldPos) return null
  if (!bottom && oldLine >= unfoldLine.oldPos) return null
  if (newLine !== oldLine + offset) return null
  return { oldPos: oldLine, newPos: newLine }
}

/** Maps a line of `from`'s version of a file to `to`'s, through `git diff from to`; null if the line changed. */
export function traceLine(
  git: FakeGit,
  from: string,
  to: string,
  oldPath: string,
  newPath: string,
  line: number,
): number | null {
  const files = git.diffFiles(from, to, [...new Set([oldPath, newPath])])
  const file = files.find((candidate) => candidate.oldPath === oldPath) ?? files[0]
  if (!file) return line
  if (file.deletedFile || file.binary) return null
  let offset = 0
  for (const hunk of file.diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    const oldStart = Number(hunk[1])
    const oldCount = hunk[2] === undefined ? 1 : Number(hunk[2])
    const newCount = hunk[4] === undefined ? 1 : Number(hunk[4])
    const oldEnd = oldCount === 0 ? oldStart : oldStart + oldCount - 1
    if (line < (oldCount === 0 ? oldStart + 1 : oldStart)) break
    if (line <= oldEnd && oldCount > 0) {
      const mapped = lineInsideHunk(file.diff, hunk.index ?? 0, line)
      return mapped
    }
    offset += newCount - oldCount
  }
  return line + offset
}

function lineInsideHunk(diff: string, hunkIndex: number, line: number): number | null {
  const rest = diff.slice(hunkIndex).split("\n")
  const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(rest[0] ?? "")
  if (!header) return null
  let oldPos = Number(header[1])
  let newPos = Number(header[2])
  for (const text of rest.slice(1)) {
    if (text.startsWith("@@") || text === "") break
    if (text.startsWith("\\")) continue
    if (text.startsWith("+")) {
      newPos += 1
      continue
    }
    if (text.startsWith("-")) {
      if (oldPos === line) return null
      oldPos += 1
      continue
    }
    if (oldPos === line) return newPos
    oldPos += 1
    newPos += 1
  }
  return null
}
