import { createHash } from "node:crypto"
import { mkdir, writeFile } from "node:fs/promises"
import { dirname, isAbsolute, relative, resolve, sep } from "node:path"
import { DiffPatchPathError } from "../model/errors"

/** How a file changed between the two sides of a diff. */
export type FileStatus = "added" | "modified" | "deleted" | "renamed" | "copied"

/** One line of a hunk; `oldLine`/`newLine` are 1-based and null on the side the line is absent from. */
export interface DiffLine {
  kind: "add" | "remove" | "context"
  oldLine: number | null
  newLine: number | null
  text: string
  noNewlineAtEnd: boolean
}

/** One `@@ -a,b +c,d @@ section` block with its lines in diff order. */
export interface Hunk {
  oldStart: number
  oldLines: number
  newStart: number
  newLines: number
  section: string
  lines: DiffLine[]
}

/**
 * The git diff this parser is built for, and every part of the system agrees on: fixed prefixes,
 * renames and copies detected, no external diff drivers or textconv filters (they run
 * repository-controlled programs). Append the revisions and "--".
 */
export const gitDiffArgs: readonly string[] = [
  "diff",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "-M",
  "-C",
  "--submodule=short",
]

/** One file of a unified git diff; `added`/`removed` match `git diff --numstat` (0 for binary). */
export interface DiffFile {
  path: string
  oldPath: string
  status: FileStatus
  binary: boolean
  added: number
  removed: number
  /** File mode such as "100644"; null on the side that does not exist or when the diff does not state it (pure renames). */
  oldMode: string | null
  newMode: string | null
  submodule: boolean
  similarity: number | null
  hunks: Hunk[]
  /** This file's section of the diff text, from its `diff --git` line up to the next file. */
  patch: string
  /** The same section as raw bytes, present when the input was bytes; `patch` is its UTF-8 decoding. */
  patchBytes?: Uint8Array
}

/** Files parsed so far plus notes on anything that could not be understood; parsing never throws. */
export interface DiffParseResult {
  files: DiffFile[]
  problems: string[]
}

/** Parses `git diff`/`git format-patch` output into files; a string is taken as already decoded text, bytes as raw git output. */
export function parseDiff(input: string | Uint8Array): DiffParseResult {
  const parser = new Parser(readSource(input))
  return parser.run()
}

/** The patch file name for a path: `diff/<path with "/" as "__">.patch`, one safe file name component under `diff/`. */
export function patchFileName(path: string): string {
  return `diff/${fileName(path, "")}`
}

/** Unique patch file names for paths; names that collide (also case- or normalization-only) all get a hash suffix. Deterministic. */
export function assignPatchFiles(paths: string[]): Map<string, string> {
  const names = new Map<string, string>()
  for (const path of paths) names.set(path, patchFileName(path))
  for (const length of [8, 16, 64]) {
    const colliding = collisions(names)
    if (colliding.length === 0) return names
    for (const path of colliding) names.set(path, `diff/${fileName(path, `~${hashOf(path).slice(0, length)}`)}`)
  }
  return names
}

/** Writes each file's patch to `<dir>/<patchFile>` byte-exact, creating folders; rejects names that leave `dir`. */
export async function writePatchFiles(dir: string, files: Array<{ file: DiffFile; patchFile: string }>): Promise<void> {
  const root = resolve(dir)
  const targets = files.map(({ file, patchFile }) => {
    const target = resolve(root, patchFile)
    const inside = relative(root, target)
    if (inside === "" || inside.split(sep)[0] === ".." || isAbsolute(inside)) throw new DiffPatchPathError(patchFile)
    return { target, content: file.patchBytes ?? file.patch }
  })
  const folders = new Set(targets.map(({ target }) => dirname(target)))
  await Promise.all([...folders].map((folder) => mkdir(folder, { recursive: true })))
  // A bounded pool: thousands of concurrent writes can run out of file descriptors, and a batch
  // would wait for its slowest write before starting the next.
  let next = 0
  const writer = async () => {
    while (next < targets.length) {
      const { target, content } = targets[next++]!
      await writeFile(target, content)
    }
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_WRITES, targets.length) }, writer))
}

const CONCURRENT_WRITES = 64
const SNIPPET = 60
const MAX_NAME_BYTES = 240
const PATCH_EXTENSION = ".patch"

const SPACE = 0x20
const PLUS = 0x2b
const MINUS = 0x2d
const BACKSLASH = 0x5c
const QUOTE = 0x22

const utf8 = new TextDecoder()
const highByte = /[^\x00-\x7f]/

/**
 * The text being parsed. For byte input `text` holds one char per byte (latin1) so offsets are byte
 * offsets and slices are byte-exact; anything shown to people is then decoded from the bytes as UTF-8.
 * Bytes that are not valid UTF-8 (e.g. a latin-1 0xE9 in a file name) decode to U+FFFD, the WHATWG
 * replacement, which is deterministic but can make two distinct raw names decode to the same string.
 */
interface Source {
  text: string
  bytes: Uint8Array | null
  /** No slice of `text` needs decoding: string input, or byte input that is all ASCII. */
  plain: boolean
}

type State = "preamble" | "header" | "hunk" | "binary" | "after" | "skip"

/** The file section being read, before its paths are resolved. */
interface Section {
  start: number
  end: number
  line: number
  gitOld: string | null
  gitNew: string | null
  prefixes: [string, string]
  minus: string | null
  plus: string | null
  minusNull: boolean
  plusNull: boolean
  renameFrom: string | null
  renameTo: string | null
  copyFrom: string | null
  copyTo: string | null
  newFile: boolean
  deletedFile: boolean
  oldMode: string | null
  newMode: string | null
  indexMode: string | null
  similarity: number | null
  binary: boolean
  hunks: Hunk[]
  added: number
  removed: number
  unknownHeader: boolean
}

function readSource(input: string | Uint8Array): Source {
  if (typeof input === "string") return { text: input, bytes: null, plain: true }
  const text = Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString("latin1")
  return { text, bytes: input, plain: !highByte.test(text) }
}

class Parser {
  private readonly files: DiffFile[] = []
  private readonly problems: string[] = []
  private readonly ranges: Array<{ start: number; end: number }> = []
  private state: State = "preamble"
  private section: Section | null = null
  private hunk: Hunk | null = null
  private oldLeft = 0
  private newLeft = 0
  private oldNext = 0
  private newNext = 0
  private lineNumber = 0

  constructor(private readonly source: Source) {}

  run(): DiffParseResult {
    const text = this.source.text
    const length = text.length
    let start = 0
    while (start < length) {
      const newline = text.indexOf("\n", start)
      const end = newline === -1 ? length : newline
      const next = newline === -1 ? length : newline + 1
      this.lineNumber += 1
      while (!this.step(start, end, next)) {
        // the line changed the state and is read again in the new one
      }
      start = next
    }
    if (this.state === "hunk" && (this.oldLeft > 0 || this.newLeft > 0)) {
      this.problem(`hunk truncated at end of input: ${this.oldLeft} old and ${this.newLeft} new lines missing`)
    }
    this.closeSection()
    if (this.files.length === 0 && this.problems.length === 0 && text.trim() !== "") {
      this.problems.push('no "diff --git" section found')
    }
    return { files: this.files, problems: this.problems }
  }

  /** Handles one line; false means the state changed and the line must be handled again. */
  private step(start: number, end: number, next: number): boolean {
    switch (this.state) {
      case "hunk":
        return this.stepHunk(start, end, next)
      case "header":
        return this.stepHeader(start, end, next)
      case "binary":
        return this.stepBinary(start, end, next)
      case "after":
        return this.stepAfter(start, end, next)
      case "skip":
        return this.stepSkip(start, end, next)
      case "preamble":
        return this.stepPreamble(start, end, next)
    }
  }

  private stepPreamble(start: number, end: number, next: number): boolean {
    const text = this.source.text
    if (text.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    if (text.startsWith("diff --cc ", start) || text.startsWith("diff --combined ", start)) {
      this.problem("combined diffs are not supported; section skipped")
    }
    return true
  }

  private stepHunk(start: number, end: number, next: number): boolean {
    const text = this.source.text
    const section = this.section as Section
    const hunk = this.hunk as Hunk
    const code = start < end ? text.charCodeAt(start) : -1
    if (code === BACKSLASH) {
      const last = hunk.lines[hunk.lines.length - 1]
      if (last === undefined) this.problem('"\\" marker before any hunk line')
      if (last !== undefined) last.noNewlineAtEnd = true
      section.end = next
      return true
    }
    if (this.oldLeft === 0 && this.newLeft === 0) {
      this.hunk = null
      this.state = "after"
      return false
    }
    // An empty line is an empty context line whose leading space was stripped (as `git apply` accepts).
    if (code === SPACE || code === -1) {
      if (this.oldLeft === 0 || this.newLeft === 0) return this.mismatch(next)
      hunk.lines.push(
        line("context", this.oldNext++, this.newNext++, this.decode(code === -1 ? start : start + 1, end)),
      )
      this.oldLeft -= 1
      this.newLeft -= 1
      section.end = next
      return true
    }
    if (code === MINUS) {
      if (this.oldLeft === 0) return this.mismatch(next)
      hunk.lines.push(line("remove", this.oldNext++, null, this.decode(start + 1, end)))
      this.oldLeft -= 1
      section.removed += 1
      section.end = next
      return true
    }
    if (code === PLUS) {
      if (this.newLeft === 0) return this.mismatch(next)
      hunk.lines.push(line("add", null, this.newNext++, this.decode(start + 1, end)))
      this.newLeft -= 1
      section.added += 1
      section.end = next
      return true
    }
    this.problem(`hunk ended early: ${this.oldLeft} old and ${this.newLeft} new lines missing`)
    this.hunk = null
    this.state = "after"
    return false
  }

  private mismatch(next: number): boolean {
    this.problem(`hunk line does not fit the counts in its header (${this.oldLeft} old, ${this.newLeft} new left)`)
    this.hunk = null
    this.state = "skip"
    ;(this.section as Section).end = next
    return true
  }

  private stepHeader(start: number, end: number, next: number): boolean {
    const text = this.source.text
    const section = this.section as Section
    if (text.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (text.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    if (start === end || isSignature(text, start, end)) return this.endSection()
    section.end = next
    const header = this.headerLine(start, end)
    if (header.startsWith("--- ")) {
      const path = markerPath(header.slice(4))
      section.minusNull = path === null
      section.minus = path === null ? null : stripPrefix(path, section.prefixes[0])
      return true
    }
    if (header.startsWith("+++ ")) {
      const path = markerPath(header.slice(4))
      section.plusNull = path === null
      section.plus = path === null ? null : stripPrefix(path, section.prefixes[1])
      return true
    }
    if (header.startsWith("index ")) {
      const space = header.indexOf(" ", 6)
      section.indexMode = space === -1 ? null : header.slice(space + 1)
      return true
    }
    if (header.startsWith("old mode ")) {
      section.oldMode = header.slice(9)
      return true
    }
    if (header.startsWith("new mode ")) {
      section.newMode = header.slice(9)
      return true
    }
    if (header.startsWith("new file mode ")) {
      section.newFile = true
      section.newMode = header.slice(14)
      return true
    }
    if (header.startsWith("deleted file mode ")) {
      section.deletedFile = true
      section.oldMode = header.slice(18)
      return true
    }
    if (header.startsWith("similarity index ")) {
      section.similarity = percent(header.slice(17))
      return true
    }
    if (header.startsWith("dissimilarity index ")) return true
    // `rename old`/`rename new` are what git before 1.5 printed.
    if (header.startsWith("rename from ")) {
      section.renameFrom = namePath(header.slice(12))
      return true
    }
    if (header.startsWith("rename old ")) {
      section.renameFrom = namePath(header.slice(11))
      return true
    }
    if (header.startsWith("rename to ")) {
      section.renameTo = namePath(header.slice(10))
      return true
    }
    if (header.startsWith("rename new ")) {
      section.renameTo = namePath(header.slice(11))
      return true
    }
    if (header.startsWith("copy from ")) {
      section.copyFrom = namePath(header.slice(10))
      return true
    }
    if (header.startsWith("copy to ")) {
      section.copyTo = namePath(header.slice(8))
      return true
    }
    if (header.startsWith("Binary files ") && header.endsWith(" differ")) {
      section.binary = true
      return true
    }
    if (header === "GIT binary patch") {
      section.binary = true
      this.state = "binary"
      return true
    }
    if (!section.unknownHeader) this.problem(`unknown header line ${this.snippet(start, end)}`)
    section.unknownHeader = true
    return true
  }

  private stepBinary(start: number, end: number, next: number): boolean {
    const text = this.source.text
    if (
      start === end ||
      text.startsWith("literal ", start) ||
      text.startsWith("delta ", start) ||
      isBase85(text, start, end)
    ) {
      ;(this.section as Section).end = next
      return true
    }
    this.state = "after"
    return false
  }

  private stepAfter(start: number, end: number, next: number): boolean {
    const text = this.source.text
    if (text.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (text.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    // A blank line or the `-- ` signature of `git format-patch` ends the file quietly.
    if (start !== end && !isSignature(text, start, end))
      this.problem(`unexpected line after hunk ${this.snippet(start, end)}; section ended`)
    return this.endSection()
  }

  private stepSkip(start: number, end: number, next: number): boolean {
    const text = this.source.text
    if (text.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (text.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    ;(this.section as Section).end = next
    return true
  }

  private openSection(start: number, end: number, next: number): boolean {
    this.closeSection()
    const names = splitGitNames(this.headerLine(start, end).slice(11))
    if (names === null) this.problem(`cannot read the file names of ${this.snippet(start, end)}`)
    const prefixes = names === null ? (["", ""] as [string, string]) : prefixesOf(names[0], names[1])
    this.section = {
      start,
      end: next,
      line: this.lineNumber,
      gitOld: names === null ? null : stripPrefix(names[0], prefixes[0]),
      gitNew: names === null ? null : stripPrefix(names[1], prefixes[1]),
      prefixes,
      minus: null,
      plus: null,
      minusNull: false,
      plusNull: false,
      renameFrom: null,
      renameTo: null,
      copyFrom: null,
      copyTo: null,
      newFile: false,
      deletedFile: false,
      oldMode: null,
      newMode: null,
      indexMode: null,
      similarity: null,
      binary: false,
      hunks: [],
      added: 0,
      removed: 0,
      unknownHeader: false,
    }
    this.state = "header"
    return true
  }

  private openHunk(start: number, end: number, next: number): boolean {
    const section = this.section as Section
    section.end = next
    const header = parseHunkHeader(this.source.text, start, end)
    if (header === null) {
      this.problem(`malformed hunk header ${this.snippet(start, end)}; lines skipped until the next hunk`)
      this.state = "skip"
      return true
    }
    const hunk: Hunk = {
      oldStart: header.oldStart,
      oldLines: header.oldLines,
      newStart: header.newStart,
      newLines: header.newLines,
      section: this.decode(header.sectionStart, header.sectionEnd),
      lines: [],
    }
    section.hunks.push(hunk)
    this.hunk = hunk
    this.oldLeft = header.oldLines
    this.newLeft = header.newLines
    this.oldNext = header.oldStart
    this.newNext = header.newStart
    this.state = "hunk"
    return true
  }

  private endSection(): boolean {
    this.closeSection()
    this.state = "preamble"
    return true
  }

  private closeSection(): void {
    const section = this.section
    this.section = null
    this.hunk = null
    if (section === null) return
    const file = this.toFile(section)
    if (file === null) return
    const previous = this.files[this.files.length - 1]
    const range = this.ranges[this.ranges.length - 1]
    // A type change (file <-> symlink <-> submodule) is printed as a deletion then an addition of the
    // same path; `git diff --numstat` and `--raw` report it as one modified file, and so do we.
    const typeChange =
      previous !== undefined &&
      range !== undefined &&
      previous.status === "deleted" &&
      file.status === "added" &&
      previous.path === file.path &&
      range.end === section.start
    if (typeChange) {
      this.files[this.files.length - 1] = this.merge(previous, file, range.start, section.end)
      range.end = section.end
      return
    }
    this.files.push(file)
    this.ranges.push({ start: section.start, end: section.end })
  }

  private merge(deleted: DiffFile, added: DiffFile, start: number, end: number): DiffFile {
    const binary = deleted.binary || added.binary
    return {
      path: added.path,
      oldPath: added.path,
      status: "modified",
      binary,
      added: binary ? 0 : deleted.added + added.added,
      removed: binary ? 0 : deleted.removed + added.removed,
      oldMode: deleted.oldMode,
      newMode: added.newMode,
      submodule: deleted.submodule || added.submodule,
      similarity: null,
      hunks: [...deleted.hunks, ...added.hunks],
      ...this.patchOf(start, end),
    }
  }

  private toFile(section: Section): DiffFile | null {
    const oldName = section.renameFrom ?? section.copyFrom ?? section.minus ?? section.gitOld
    const newName = section.renameTo ?? section.copyTo ?? section.plus ?? section.gitNew
    const status = statusOf(section)
    const path = status === "deleted" ? (oldName ?? newName) : (newName ?? oldName)
    if (path === null) {
      this.problems.push(`line ${section.line}: section has no file name; skipped`)
      return null
    }
    const moved = status === "renamed" || status === "copied"
    const oldMode = section.oldMode ?? (section.newFile ? null : section.indexMode)
    const newMode = section.newMode ?? (section.deletedFile ? null : section.indexMode)
    return {
      path: fromBytes(path),
      oldPath: fromBytes(moved ? (oldName ?? path) : path),
      status,
      binary: section.binary,
      added: section.binary ? 0 : section.added,
      removed: section.binary ? 0 : section.removed,
      oldMode,
      newMode,
      submodule: oldMode === GITLINK || newMode === GITLINK,
      similarity: section.similarity,
      hunks: section.hunks,
      ...this.patchOf(section.start, section.end),
    }
  }

  private patchOf(start: number, end: number): { patch: string; patchBytes?: Uint8Array } {
    const bytes = this.source.bytes
    if (bytes === null) return { patch: this.source.text.slice(start, end) }
    return { patch: this.decode(start, end), patchBytes: bytes.subarray(start, end) }
  }

  /** Text for people: the slice decoded as UTF-8 when the input was bytes. */
  private decode(start: number, end: number): string {
    const raw = this.source.text.slice(start, end)
    const bytes = this.source.bytes
    if (this.source.plain || bytes === null || !highByte.test(raw)) return raw
    return utf8.decode(bytes.subarray(start, end))
  }

  /** A header line as a byte string (one char per byte) without a trailing CR, for path parsing. */
  private headerLine(start: number, end: number): string {
    const stop = end > start && this.source.text.charCodeAt(end - 1) === 0x0d ? end - 1 : end
    const raw = this.source.text.slice(start, stop)
    if (this.source.bytes !== null || !highByte.test(raw)) return raw
    return Buffer.from(raw, "utf8").toString("latin1")
  }

  /** A line quoted for a problem note, cut to keep notes short. */
  private snippet(start: number, end: number): string {
    return JSON.stringify(this.decode(start, Math.min(end, start + SNIPPET)))
  }

  private problem(message: string): void {
    this.problems.push(`line ${this.lineNumber}: ${message}`)
  }
}

const GITLINK = "160000"

function line(kind: DiffLine["kind"], oldLine: number | null, newLine: number | null, text: string): DiffLine {
  return { kind, oldLine, newLine, text, noNewlineAtEnd: false }
}

function statusOf(section: Section): FileStatus {
  if (section.renameFrom !== null || section.renameTo !== null) return "renamed"
  if (section.copyFrom !== null || section.copyTo !== null) return "copied"
  if (section.newFile || section.minusNull) return "added"
  if (section.deletedFile || section.plusNull) return "deleted"
  return "modified"
}

function isSignature(text: string, start: number, end: number): boolean {
  return end - start === 3 && text.startsWith("-- ", start)
}

/** A line of base85 data in a `GIT binary patch` block: a length letter then base85, which has no space. */
function isBase85(text: string, start: number, end: number): boolean {
  if (end - start > 70) return false
  const first = text.charCodeAt(start)
  const letter = (first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a)
  if (!letter) return false
  for (let index = start + 1; index < end; index += 1) {
    const code = text.charCodeAt(index)
    if (code <= SPACE || code > 0x7e) return false
  }
  return true
}

interface HunkHeader {
  oldStart: number
  oldLines: number
  newStart: number
  newLines: number
  sectionStart: number
  sectionEnd: number
}

/** Reads `@@ -a[,b] +c[,d] @@[ section]`; a missing count means 1. */
function parseHunkHeader(text: string, start: number, end: number): HunkHeader | null {
  let index = start + 3
  if (text.charCodeAt(index) !== MINUS) return null
  const oldStart = readNumber(text, index + 1, end)
  if (oldStart === null) return null
  index = oldStart.end
  const oldLines = text.charCodeAt(index) === 0x2c ? readNumber(text, index + 1, end) : { value: 1, end: index }
  if (oldLines === null) return null
  index = oldLines.end
  if (text.charCodeAt(index) !== SPACE || text.charCodeAt(index + 1) !== PLUS) return null
  const newStart = readNumber(text, index + 2, end)
  if (newStart === null) return null
  index = newStart.end
  const newLines = text.charCodeAt(index) === 0x2c ? readNumber(text, index + 1, end) : { value: 1, end: index }
  if (newLines === null) return null
  index = newLines.end
  if (!text.startsWith(" @@", index) || index + 3 > end) return null
  index += 3
  const sectionStart = text.charCodeAt(index) === SPACE && index < end ? index + 1 : index
  const sectionEnd = end > sectionStart && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end
  return {
    oldStart: oldStart.value,
    oldLines: oldLines.value,
    newStart: newStart.value,
    newLines: newLines.value,
    sectionStart,
    sectionEnd: Math.max(sectionStart, sectionEnd),
  }
}

function readNumber(text: string, start: number, end: number): { value: number; end: number } | null {
  let value = 0
  let index = start
  while (index < end) {
    const code = text.charCodeAt(index)
    if (code < 0x30 || code > 0x39) break
    value = value * 10 + (code - 0x30)
    index += 1
  }
  if (index === start || index - start > 15) return null
  return { value, end: index }
}

function percent(text: string): number | null {
  const value = Number.parseInt(text, 10)
  return Number.isNaN(value) ? null : value
}

/** Splits the names of `diff --git <a> <b>` (byte strings); unquoted names with spaces are split in the middle when both halves name the same file. */
function splitGitNames(rest: string): [string, string] | null {
  if (rest.charCodeAt(0) === QUOTE) {
    const first = unquote(rest, 0)
    if (first === null || rest.charCodeAt(first.end) !== SPACE) return null
    const index = first.end + 1
    if (rest.charCodeAt(index) !== QUOTE) return [first.value, rest.slice(index)]
    const second = unquote(rest, index)
    if (second === null) return null
    return [first.value, second.value]
  }
  if (rest.endsWith('"')) {
    for (let index = rest.indexOf(' "'); index !== -1; index = rest.indexOf(' "', index + 1)) {
      const second = unquote(rest, index + 1)
      if (second !== null && second.end === rest.length) return [rest.slice(0, index), second.value]
    }
  }
  const middle = (rest.length - 1) / 2
  if (Number.isInteger(middle) && rest.charCodeAt(middle) === SPACE) {
    const first = rest.slice(0, middle)
    const second = rest.slice(middle + 1)
    const [oldPrefix, newPrefix] = prefixesOf(first, second)
    if (first.slice(oldPrefix.length) === second.slice(newPrefix.length)) return [first, second]
  }
  const split = rest.startsWith("a/") ? rest.indexOf(" b/") : -1
  const space = split === -1 ? rest.indexOf(" ") : split
  if (space === -1) return null
  return [rest.slice(0, space), rest.slice(space + 1)]
}

const MNEMONIC = "ciwo"

/** The source/destination prefixes of a `diff --git` pair: `a/` `b/`, git's mnemonic ones (`c/` `w/`, …) or none. */
function prefixesOf(first: string, second: string): [string, string] {
  if (first.startsWith("a/") && second.startsWith("b/")) return ["a/", "b/"]
  const oldLetter = first.charAt(0)
  const newLetter = second.charAt(0)
  const mnemonic =
    first.charAt(1) === "/" &&
    second.charAt(1) === "/" &&
    oldLetter !== newLetter &&
    MNEMONIC.includes(oldLetter) &&
    MNEMONIC.includes(newLetter)
  if (mnemonic) return [`${oldLetter}/`, `${newLetter}/`]
  return ["", ""]
}

function stripPrefix(path: string, prefix: string): string {
  return prefix !== "" && path.startsWith(prefix) ? path.slice(prefix.length) : path
}

/** The path of a `---`/`+++` line (byte string); null for /dev/null. Unquoted names end at a tab (git adds one after names with spaces). */
function markerPath(rest: string): string | null {
  if (rest === "/dev/null") return null
  if (rest.charCodeAt(0) === QUOTE) {
    const quoted = unquote(rest, 0)
    if (quoted !== null) return quoted.value
  }
  const tab = rest.indexOf("\t")
  const path = tab === -1 ? rest : rest.slice(0, tab)
  return path === "/dev/null" ? null : path
}

/** The path of a `rename from`/`copy to`… line (byte string). */
function namePath(rest: string): string {
  if (rest.charCodeAt(0) !== QUOTE) return rest
  return unquote(rest, 0)?.value ?? rest
}

const ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  '"': '"',
  "\\": "\\",
}

/** Reads git's C-style quoted name starting at the quote at `start`; works on byte strings and yields one. */
function unquote(text: string, start: number): { value: string; end: number } | null {
  const parts: string[] = []
  let index = start + 1
  let run = index
  while (index < text.length) {
    const code = text.charCodeAt(index)
    if (code === QUOTE) {
      parts.push(text.slice(run, index))
      return { value: parts.join(""), end: index + 1 }
    }
    if (code !== BACKSLASH) {
      index += 1
      continue
    }
    parts.push(text.slice(run, index))
    const escaped = text.charAt(index + 1)
    if (escaped >= "0" && escaped <= "7") {
      let value = 0
      let digits = 0
      while (digits < 3 && index + 1 + digits < text.length) {
        const digit = text.charCodeAt(index + 1 + digits) - 0x30
        if (digit < 0 || digit > 7) break
        value = value * 8 + digit
        digits += 1
      }
      parts.push(String.fromCharCode(value & 0xff))
      index += 1 + digits
      run = index
      continue
    }
    const mapped = ESCAPES[escaped]
    if (mapped === undefined) return null
    parts.push(mapped)
    index += 2
    run = index
  }
  return null
}

/** Decodes a byte string (one char per byte) as UTF-8, with U+FFFD for invalid bytes. */
function fromBytes(value: string): string {
  if (!highByte.test(value)) return value
  return utf8.decode(Buffer.from(value, "latin1"))
}

function fileName(path: string, suffix: string): string {
  const stem = path.replaceAll("/", "__").replaceAll("\0", "_")
  const tail = `${suffix}${PATCH_EXTENSION}`
  if (byteLength(stem) + tail.length <= MAX_NAME_BYTES) return `${stem}${tail}`
  const hashed = suffix === "" ? `~${hashOf(path).slice(0, 8)}` : suffix
  return `${truncateBytes(stem, MAX_NAME_BYTES - hashed.length - PATCH_EXTENSION.length)}${hashed}${PATCH_EXTENSION}`
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, "utf8")
}

/** The longest prefix of `text` whose UTF-8 encoding fits in `limit` bytes, never splitting a code point. */
function truncateBytes(text: string, limit: number): string {
  let bytes = 0
  let index = 0
  for (const char of text) {
    const size = byteLength(char)
    if (bytes + size > limit) break
    bytes += size
    index += char.length
  }
  return text.slice(0, index)
}

function hashOf(path: string): string {
  return createHash("sha256").update(path).digest("hex")
}

/** Paths whose names clash on a case-insensitive, normalization-insensitive file system. */
function collisions(names: Map<string, string>): string[] {
  const groups = new Map<string, string[]>()
  for (const [path, name] of names) {
    const key = name.normalize("NFC").toLowerCase()
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [path])
    if (group !== undefined) group.push(path)
  }
  return [...groups.values()].filter((group) => group.length > 1).flat()
}
