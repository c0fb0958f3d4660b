import { createHash } from "node:crypto"
import type { FakeGithubDiffLine, FakeGithubFile, FakeGithubHunk, FakeGithubVersion } from "./github-fake-types"
import { FakeGit } from "./gitlab-fake-git"

// The diff side of the GitHub fake: a `git diff` text parsed into files and hunks, the line/side
// rules a review comment must satisfy (docs/github.md, "Line and side"), the `diff_hunk` GitHub
// returns with a comment, and a line followed from one head to the next.

export const sha1 = (text: string): string => createHash("sha1").update(text).digest("hex")

/** A version read from a repository: `git diff <merge-base> <head>`, base sha = the base ref's tip. */
export function versionFromGit(source: { dir: string; base: string; head: string }): FakeGithubVersion {
  const git = new FakeGit(source.dir)
  const baseSha = git.resolveCommit(source.base)
  const headSha = git.resolveCommit(source.head)
  if (!baseSha || !headSha)
    throw new Error(`github-fake: cannot resolve ${source.base} or ${source.head} in ${source.dir}`)
  const mergeBase = git.mergeBase(baseSha, headSha)
  if (!mergeBase) throw new Error(`github-fake: ${source.base} and ${source.head} have no merge base`)
  const diff = git.rawDiff(mergeBase, headSha)
  return { headSha, baseSha, diff, files: parseDiff(diff) }
}

export function versionFromText(diff: string, headSha: string, baseSha: string): FakeGithubVersion {
  return { headSha, baseSha, diff, files: parseDiff(diff) }
}

/** Parses `git diff` output (with `diff --git` headers) into files, in the order git printed them. */
export function parseDiff(text: string): FakeGithubFile[] {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  const blocks: string[][] = []
  for (const line of lines) {
    if (line.startsWith("diff --git ")) blocks.push([line])
    else if (blocks.length > 0) blocks.at(-1)!.push(line)
    else if (line.trim() !== "") throw new Error(`github-fake: the diff does not start with "diff --git": ${line}`)
  }
  return blocks.map(parseBlock)
}

function parseBlock(block: string[]): FakeGithubFile {
  let oldPath: string | null = null
  let newPath: string | null = null
  let added = false
  let deleted = false
  let renamed = false
  let binary = false
  let index = 1
  for (; index < block.length; index += 1) {
    const line = block[index]!
    if (line.startsWith("@@")) break
    if (line.startsWith("new file mode")) added = true
    else if (line.startsWith("deleted file mode")) deleted = true
    else if (line.startsWith("rename from ")) (renamed = true), (oldPath = unquote(line.slice(12)))
    else if (line.startsWith("rename to ")) (renamed = true), (newPath = unquote(line.slice(10)))
    else if (line.startsWith("--- ")) oldPath = oldPath ?? stripPrefix(unquote(line.slice(4)), "a/")
    else if (line.startsWith("+++ ")) newPath = newPath ?? stripPrefix(unquote(line.slice(4)), "b/")
    else if (line.startsWith("Binary files ") || line === "GIT binary patch") binary = true
  }
  const header = headerPaths(block[0]!)
  if (oldPath === null || oldPath === "/dev/null") oldPath = added ? null : header.old
  if (newPath === null || newPath === "/dev/null") newPath = deleted ? null : header.new
  const filename = newPath ?? oldPath ?? header.new
  const hunks: FakeGithubHunk[] = []
  const patchLines = block.slice(index)
  let oldLine = 0
  let newLine = 0
  for (const line of patchLines) {
    const head = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line)
    if (head) {
      oldLine = Number(head[1])
      newLine = Number(head[2])
      hunks.push({ header: line, oldStart: oldLine, newStart: newLine, lines: [] })
      continue
    }
    const hunk = hunks.at(-1)
    if (!hunk || line.startsWith("\\")) continue
    const marker = line.charAt(0)
    const entry: FakeGithubDiffLine =
      marker === "+"
        ? { kind: "added", new: newLine++, text: line.slice(1) }
        : marker === "-"
          ? { kind: "deleted", old: oldLine++, text: line.slice(1) }
          : { kind: "context", old: oldLine++, new: newLine++, text: line.slice(1) }
    hunk.lines.push(entry)
  }
  const additions = hunks.reduce((sum, hunk) => sum + hunk.lines.filter((line) => line.kind === "added").length, 0)
  const deletions = hunks.reduce((sum, hunk) => sum + hunk.lines.filter((line) => line.kind === "deleted").length, 0)
  const status = added ? "added" : deleted ? "removed" : renamed ? "renamed" : "modified"
  return {
    filename,
    ...(renamed && oldPath ? { previousFilename: oldPath } : {}),
    status,
    additions,
    deletions,
    changes: additions + deletions,
    // GitHub's `patch` starts at the first @@ and does not end in a newline.
    patch: binary ? "" : patchLines.join("\n"),
    binary,
    block: `${block.join("\n")}\n`,
    hunks,
  }
}

function headerPaths(header: string): { old: string; new: string } {
  const rest = header.slice("diff --git ".length)
  const quoted = /^"((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)"$/.exec(rest)
  if (quoted)
    return { old: stripPrefix(unquote(`"${quoted[1]}"`), "a/"), new: stripPrefix(unquote(`"${quoted[2]}"`), "b/") }
  // "a/P b/P": the two halves are equal unless the file was renamed (then rename from/to say it).
  const half = (rest.length - 1) / 2
  if (Number.isInteger(half) && rest.charAt(half) === " ") {
    return { old: stripPrefix(rest.slice(0, half), "a/"), new: stripPrefix(rest.slice(half + 1), "b/") }
  }
  const split = rest.indexOf(" b/")
  return { old: stripPrefix(rest.slice(0, split), "a/"), new: stripPrefix(rest.slice(split + 1), "b/") }
}

const stripPrefix = (path: string, prefix: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : path)

/** git's C-style quoting of unusual paths ("a/t\303\251st"), as core.quotePath writes it. */
function unquote(text: string): string {
  const trimmed = text.replace(/\t.*$/, "")
  if (!trimmed.startsWith('"')) return trimmed
  const bytes: number[] = []
  const body = trimmed.slice(1, -1)
  const escapes: Record<string, number> = { n: 10, t: 9, '"': 34, "\\": 92, a: 7, b: 8, f: 12, r: 13, v: 11 }
  for (let i = 0; i < body.length; i += 1) {
    const char = body.charAt(i)
    if (char !== "\\") {
      bytes.push(...new TextEncoder().encode(char))
      continue
    }
    const next = body.charAt(i + 1)
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8))
      i += 3
    } else {
      bytes.push(escapes[next] ?? next.charCodeAt(0))
      i += 1
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}

/** Where a (side, line) sits in a file's hunks, or null when it is not part of the diff. */
export function resolveLine(
  file: FakeGithubFile,
  side: "LEFT" | "RIGHT",
  line: number,
): { hunk: number; index: number; text: string } | null {
  for (const [hunkIndex, hunk] of file.hunks.entries()) {
    for (const [index, entry] of hunk.lines.entries()) {
      const matches =
        side === "RIGHT" ? entry.kind !== "deleted" && entry.new === line : entry.kind !== "added" && entry.old === line
      if (matches) return { hunk: hunkIndex, index, text: entry.text }
    }
  }
  return null
}

/** GitHub's `diff_hunk` of a comment: the enclosing hunk's header and lines up to the commented one. */
export function diffHunk(file: FakeGithubFile, at: { hunk: number; index: number }): string {
  const hunk = file.hunks[at.hunk]!
  const prefix = { context: " ", added: "+", deleted: "-" } as const
  return [hunk.header, ...hunk.lines.slice(0, at.index + 1).map((line) => prefix[line.kind] + line.text)].join("\n")
}

/**
 * Follows a commented line to the next head: the same line number with the same text stays; else
 * the one line of the new diff on that side with the same text; else null (the thread is outdated).
 */
export function followLine(
  previous: FakeGithubVersion,
  next: FakeGithubVersion,
  path: string,
  side: "LEFT" | "RIGHT",
  line: number,
): number | null {
  const before = previous.files.find((file) => file.filename === path)
  const after = next.files.find((file) => file.filename === path)
  if (!before || !after) return null
  const anchor = resolveLine(before, side, line)
  if (!anchor) return null
  const same = resolveLine(after, side, line)
  if (same && same.text === anchor.text) return line
  const candidates = after.hunks
    .flatMap((hunk) => hunk.lines)
    .filter(
      (entry) => entry.text === anchor.text && (side === "RIGHT" ? entry.kind !== "deleted" : entry.kind !== "added"),
    )
  if (candidates.length !== 1) return null
  return (side === "RIGHT" ? candidates[0]!.new : candidates[0]!.old) ?? null
}
