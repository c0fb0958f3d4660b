import { isAscii } from "node:buffer"
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

/** One `@@ -a,b +c,d @@ section` block with its lines in diff order (built when `lines` is first read). */
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
  /** This file's section of the diff text, from its `diff --git` line up to the next file (decoded when first read). */
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

/** `file.patch.length`, without decoding a patch whose bytes are ASCII. */
export function patchLength(file: DiffFile): number {
  return file.patchBytes !== undefined && isAscii(file.patchBytes) ? file.patchBytes.length : file.patch.length
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
 * The text being parsed, read by offset. Byte input is read as bytes, so offsets are byte offsets and
 * slices are byte-exact, and nothing is decoded until someone reads it: header lines become byte
 * strings (one char per byte) for path parsing, anything shown to people is decoded as UTF-8. Bytes
 * that are not valid UTF-8 (e.g. a latin-1 0xE9 in a file name) decode to U+FFFD, the WHATWG
 * replacement, which is deterministic but can make two distinct raw names decode to the same string.
 * String input is taken as already decoded text.
 */
interface Source {
  readonly length: number
  readonly bytes: Uint8Array | null
  /** The char code (string) or byte (bytes) at `index`, which is below `length`. */
  code(index: number): number
  /** The offset of the next "\n" at or after `start`, or `length`. */
  lineEnd(start: number): number
  /** Whether the ASCII `prefix` starts at `start`. */
  startsWith(prefix: string, start: number): boolean
  /** A slice as a byte string (one char per byte), for path parsing. */
  byteString(start: number, end: number): string
  /** A slice as text for people. */
  decode(start: number, end: number): string
  /** Whether the whole input is whitespace, as `String.prototype.trim` sees it. */
  blank(): boolean
}

class TextSource implements Source {
  readonly bytes = null
  readonly length: number

  constructor(private readonly text: string) {
    this.length = text.length
  }

  code(index: number): number {
    return this.text.charCodeAt(index)
  }

  lineEnd(start: number): number {
    const newline = this.text.indexOf("\n", start)
    return newline === -1 ? this.length : newline
  }

  startsWith(prefix: string, start: number): boolean {
    return this.text.startsWith(prefix, start)
  }

  byteString(start: number, end: number): string {
    const raw = this.text.slice(start, end)
    return highByte.test(raw) ? Buffer.from(raw, "utf8").toString("latin1") : raw
  }

  decode(start: number, end: number): string {
    return this.text.slice(start, end)
  }

  blank(): boolean {
    return this.text.trim() === ""
  }
}

class ByteSource implements Source {
  readonly length: number
  private readonly buffer: Buffer

  constructor(readonly bytes: Uint8Array) {
    this.length = bytes.length
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  }

  code(index: number): number {
    return this.bytes[index]!
  }

  lineEnd(start: number): number {
    const newline = this.bytes.indexOf(0x0a, start)
    return newline === -1 ? this.length : newline
  }

  startsWith(prefix: string, start: number): boolean {
    if (start + prefix.length > this.length) return false
    for (let index = 0; index < prefix.length; index += 1)
      if (this.bytes[start + index] !== prefix.charCodeAt(index)) return false
    return true
  }

  byteString(start: number, end: number): string {
    return this.buffer.toString("latin1", start, end)
  }

  // ASCII reads the same as latin1, which is cheaper to make.
  decode(start: number, end: number): string {
    if (start === end) return ""
    const bytes = this.bytes
    let ascii = true
    if (end - start > 64) ascii = isAscii(bytes.subarray(start, end))
    else for (let index = start; index < end && ascii; index += 1) ascii = bytes[index]! < 0x80
    return ascii ? this.buffer.toString("latin1", start, end) : utf8.decode(bytes.subarray(start, end))
  }

  // What `trim` removes from a string of one char per byte: tab to CR, space and NBSP.
  blank(): boolean {
    for (const byte of this.bytes)
      if (!((byte >= 0x09 && byte <= 0x0d) || byte === SPACE || byte === 0xa0)) return false
    return true
  }
}

function readSource(input: string | Uint8Array): Source {
  return typeof input === "string" ? new TextSource(input) : new ByteSource(input)
}

/**
 * Where a hunk's lines are in the input: its lines are built from there when first read, since
 * most hunks of a big change are only counted, never read line by line.
 */
interface HunkSource {
  source: Source
  /** The offset of its first line and the end of its last (a "\" marker line included). */
  start: number
  end: number
  oldStart: number
  newStart: number
  /** The longest line, its prefix included: no line's text is longer, in UTF-16 units. */
  longest: number
  lines: DiffLine[] | null
}

const hunkSources = new WeakMap<Hunk, HunkSource>()

function hunkOf(header: Omit<Hunk, "lines">, origin: HunkSource): Hunk {
  const hunk: Hunk = {
    oldStart: header.oldStart,
    oldLines: header.oldLines,
    newStart: header.newStart,
    newLines: header.newLines,
    section: header.section,
    get lines() {
      origin.lines ??= readLines(origin)
      return origin.lines
    },
  }
  hunkSources.set(hunk, origin)
  return hunk
}

// The parser accepted every line between `start` and `end` as a line of this hunk.
function readLines(origin: HunkSource): DiffLine[] {
  const { source, end: stop } = origin
  const lines: DiffLine[] = []
  let oldNext = origin.oldStart
  let newNext = origin.newStart
  let start = origin.start
  while (start < stop) {
    const end = source.lineEnd(start)
    const code = start < end ? source.code(start) : -1
    if (code === BACKSLASH) {
      const last = lines[lines.length - 1]
      if (last !== undefined) last.noNewlineAtEnd = true
    } else if (code === SPACE || code === -1)
      lines.push(line("context", oldNext++, newNext++, source.decode(code === -1 ? start : start + 1, end)))
    else if (code === MINUS) lines.push(line("remove", oldNext++, null, source.decode(start + 1, end)))
    else lines.push(line("add", null, newNext++, source.decode(start + 1, end)))
    start = end + 1
  }
  return lines
}

/**
 * The text of the first `count` lines of a hunk that are not of kind `skip`, read from the input
 * when the hunk's lines were not built yet (the same texts `hunk.lines` holds).
 */
export function leadingLines(hunk: Hunk, count: number, skip: DiffLine["kind"]): string[] {
  const origin = hunkSources.get(hunk)
  const texts: string[] = []
  if (origin === undefined || origin.lines !== null) {
    for (const line of hunk.lines) {
      if (texts.length === count) break
      if (line.kind !== skip) texts.push(line.text)
    }
    return texts
  }
  const { source, end: stop } = origin
  let start = origin.start
  while (start < stop && texts.length < count) {
    const end = source.lineEnd(start)
    const code = start < end ? source.code(start) : -1
    const kind = code === SPACE || code === -1 ? "context" : code === MINUS ? "remove" : code === PLUS ? "add" : null
    if (kind !== null && kind !== skip) texts.push(source.decode(code === -1 ? start : start + 1, end))
    start = end + 1
  }
  return texts
}

/**
 * False when `pattern`, which never matches across a line break, matches none of the texts
 * {@link leadingLines} would return: the input those lines come from is searched in one piece,
 * without building them. True otherwise (or when the hunk's lines are built already).
 */
export function leadingLinesMayMatch(hunk: Hunk, count: number, skip: DiffLine["kind"], pattern: RegExp): boolean {
  const origin = hunkSources.get(hunk)
  if (origin === undefined || origin.lines !== null) return true
  const { source, end: stop } = origin
  let start = origin.start
  let kept = 0
  while (start < stop && kept < count) {
    const end = source.lineEnd(start)
    const code = start < end ? source.code(start) : -1
    if ((code === SPACE || code === -1 ? "context" : code === MINUS ? "remove" : code === PLUS ? "add" : skip) !== skip)
      kept += 1
    start = end + 1
  }
  return pattern.test(source.decode(origin.start, Math.min(start, stop)))
}

/** A length no line text of the hunk exceeds (in UTF-16 units), known without building its lines. */
export function longestLine(hunk: Hunk): number {
  const origin = hunkSources.get(hunk)
  if (origin !== undefined && origin.lines === null) return origin.longest
  let longest = 0
  for (const line of hunk.lines) longest = Math.max(longest, line.text.length)
  return longest
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

class Parser {
  private readonly files: DiffFile[] = []
  private readonly problems: string[] = []
  private readonly ranges: Array<{ start: number; end: number }> = []
  private state: State = "preamble"
  private section: Section | null = null
  /** The hunk being read; its lines so far (without "\" markers) in `hunkLines`. */
  private hunk: HunkSource | null = null
  private hunkLines = 0
  private oldLeft = 0
  private newLeft = 0
  private lineNumber = 0

  constructor(private readonly source: Source) {}

  run(): DiffParseResult {
    const source = this.source
    const length = source.length
    const bytes = source.bytes
    let start = 0
    while (start < length) {
      // Most lines are hunk lines: read in one tight loop, which the JIT compiles early.
      if (this.state === "hunk" && bytes !== null) start = this.countHunkLines(bytes, start)
      if (start >= length) break
      const end = source.lineEnd(start)
      const next = end === length ? length : end + 1
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
    if (this.files.length === 0 && this.problems.length === 0 && !source.blank()) {
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
    const source = this.source
    if (source.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    if (source.startsWith("diff --cc ", start) || source.startsWith("diff --combined ", start)) {
      this.problem("combined diffs are not supported; section skipped")
    }
    return true
  }

  // Only counted here: the hunk's lines are built from the input when someone reads them.
  private stepHunk(start: number, end: number, next: number): boolean {
    const section = this.section as Section
    const hunk = this.hunk as HunkSource
    const code = start < end ? this.source.code(start) : -1
    if (code === BACKSLASH) {
      if (this.hunkLines === 0) this.problem('"\\" marker before any hunk line')
      hunk.end = next
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
      this.oldLeft -= 1
      this.newLeft -= 1
    } else if (code === MINUS) {
      if (this.oldLeft === 0) return this.mismatch(next)
      this.oldLeft -= 1
      section.removed += 1
    } else if (code === PLUS) {
      if (this.newLeft === 0) return this.mismatch(next)
      this.newLeft -= 1
      section.added += 1
    } else {
      this.problem(`hunk ended early: ${this.oldLeft} old and ${this.newLeft} new lines missing`)
      this.hunk = null
      this.state = "after"
      return false
    }
    this.hunkLines += 1
    if (end - start > hunk.longest) hunk.longest = end - start
    hunk.end = next
    section.end = next
    return true
  }

  /**
   * Counts the hunk lines from `start` as {@link stepHunk} would, up to the first line it would do
   * anything else with (the end of the hunk, a line that does not fit), which is left to it; returns
   * where that line starts.
   */
  private countHunkLines(bytes: Uint8Array, start: number): number {
    const section = this.section as Section
    const hunk = this.hunk as HunkSource
    const length = bytes.length
    let oldLeft = this.oldLeft
    let newLeft = this.newLeft
    let added = 0
    let removed = 0
    let lines = 0
    let read = 0
    let longest = hunk.longest
    let at = start
    while (at < length) {
      let end = bytes.indexOf(0x0a, at)
      if (end === -1) end = length
      const code = at < end ? bytes[at]! : -1
      if (code === BACKSLASH) {
        if (this.hunkLines + lines === 0) break
      } else if (oldLeft === 0 && newLeft === 0) break
      else if (code === SPACE || code === -1) {
        if (oldLeft === 0 || newLeft === 0) break
        oldLeft -= 1
        newLeft -= 1
      } else if (code === MINUS) {
        if (oldLeft === 0) break
        oldLeft -= 1
        removed += 1
      } else if (code === PLUS) {
        if (newLeft === 0) break
        newLeft -= 1
        added += 1
      } else break
      if (code !== BACKSLASH) {
        lines += 1
        if (end - at > longest) longest = end - at
      }
      read += 1
      at = end === length ? length : end + 1
    }
    if (at > start) {
      this.lineNumber += read
      this.oldLeft = oldLeft
      this.newLeft = newLeft
      this.hunkLines += lines
      hunk.longest = longest
      hunk.end = at
      section.added += added
      section.removed += removed
      section.end = at
    }
    return at
  }

  private mismatch(next: number): boolean {
    this.problem(`hunk line does not fit the counts in its header (${this.oldLeft} old, ${this.newLeft} new left)`)
    this.hunk = null
    this.state = "skip"
    ;(this.section as Section).end = next
    return true
  }

  private stepHeader(start: number, end: number, next: number): boolean {
    const source = this.source
    const section = this.section as Section
    if (source.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (source.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    if (start === end || isSignature(source, start, end)) return this.endSection()
    section.end = next
    // Dispatched on the raw line; only the part after the keyword becomes a string.
    const after = (keyword: string) => this.after(keyword, start, end)
    let rest: string | null
    if ((rest = after("--- ")) !== null) {
      const path = markerPath(rest)
      section.minusNull = path === null
      section.minus = path === null ? null : stripPrefix(path, section.prefixes[0])
      return true
    }
    if ((rest = after("+++ ")) !== null) {
      const path = markerPath(rest)
      section.plusNull = path === null
      section.plus = path === null ? null : stripPrefix(path, section.prefixes[1])
      return true
    }
    if ((rest = after("index ")) !== null) {
      const space = rest.indexOf(" ")
      section.indexMode = space === -1 ? null : rest.slice(space + 1)
      return true
    }
    if ((rest = after("old mode ")) !== null) {
      section.oldMode = rest
      return true
    }
    if ((rest = after("new mode ")) !== null) {
      section.newMode = rest
      return true
    }
    if ((rest = after("new file mode ")) !== null) {
      section.newFile = true
      section.newMode = rest
      return true
    }
    if ((rest = after("deleted file mode ")) !== null) {
      section.deletedFile = true
      section.oldMode = rest
      return true
    }
    if ((rest = after("similarity index ")) !== null) {
      section.similarity = percent(rest)
      return true
    }
    if (source.startsWith("dissimilarity index ", start)) return true
    // `rename old`/`rename new` are what git before 1.5 printed.
    if ((rest = after("rename from ") ?? after("rename old ")) !== null) {
      section.renameFrom = namePath(rest)
      return true
    }
    if ((rest = after("rename to ") ?? after("rename new ")) !== null) {
      section.renameTo = namePath(rest)
      return true
    }
    if ((rest = after("copy from ")) !== null) {
      section.copyFrom = namePath(rest)
      return true
    }
    if ((rest = after("copy to ")) !== null) {
      section.copyTo = namePath(rest)
      return true
    }
    const stop = this.lineStop(start, end)
    if (source.startsWith("Binary files ", start) && stop - start >= 7 && source.startsWith(" differ", stop - 7)) {
      section.binary = true
      return true
    }
    if (stop - start === 16 && source.startsWith("GIT binary patch", start)) {
      section.binary = true
      this.state = "binary"
      return true
    }
    if (!section.unknownHeader) this.problem(`unknown header line ${this.snippet(start, end)}`)
    section.unknownHeader = true
    return true
  }

  private stepBinary(start: number, end: number, next: number): boolean {
    const source = this.source
    if (
      start === end ||
      source.startsWith("literal ", start) ||
      source.startsWith("delta ", start) ||
      isBase85(source, start, end)
    ) {
      ;(this.section as Section).end = next
      return true
    }
    this.state = "after"
    return false
  }

  private stepAfter(start: number, end: number, next: number): boolean {
    const source = this.source
    if (source.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (source.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    // A blank line or the `-- ` signature of `git format-patch` ends the file quietly.
    if (start !== end && !isSignature(source, start, end))
      this.problem(`unexpected line after hunk ${this.snippet(start, end)}; section ended`)
    return this.endSection()
  }

  private stepSkip(start: number, end: number, next: number): boolean {
    const source = this.source
    if (source.startsWith("@@ ", start)) return this.openHunk(start, end, next)
    if (source.startsWith("diff --git ", start)) return this.openSection(start, end, next)
    ;(this.section as Section).end = next
    return true
  }

  private openSection(start: number, end: number, next: number): boolean {
    this.closeSection()
    const names = splitGitNames(this.headerLine(start + 11, end))
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
    const header = parseHunkHeader(this.source, start, end)
    if (header === null) {
      this.problem(`malformed hunk header ${this.snippet(start, end)}; lines skipped until the next hunk`)
      this.state = "skip"
      return true
    }
    const origin: HunkSource = {
      source: this.source,
      start: next,
      end: next,
      oldStart: header.oldStart,
      newStart: header.newStart,
      longest: 0,
      lines: null,
    }
    section.hunks.push(
      hunkOf(
        {
          oldStart: header.oldStart,
          oldLines: header.oldLines,
          newStart: header.newStart,
          newLines: header.newLines,
          section: this.source.decode(header.sectionStart, header.sectionEnd),
        },
        origin,
      ),
    )
    this.hunk = origin
    this.hunkLines = 0
    this.oldLeft = header.oldLines
    this.newLeft = header.newLines
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
    const source = this.source
    let patch: string | null = null
    const file: DiffFile = {
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
      // Decoded when first read: writing the patch out and counting need only its bytes.
      get patch() {
        patch ??= source.decode(start, end)
        return patch
      },
    }
    if (source.bytes !== null) file.patchBytes = source.bytes.subarray(start, end)
    return file
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
    const { source } = this
    const { start, end } = section
    let patch: string | null = null
    const file: DiffFile = {
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
      // Decoded when first read: writing the patch out and counting need only its bytes.
      get patch() {
        patch ??= source.decode(start, end)
        return patch
      },
    }
    if (source.bytes !== null) file.patchBytes = source.bytes.subarray(start, end)
    return file
  }

  /** The rest of a header line after `keyword` (see {@link headerLine}), or null when it does not start so. */
  private after(keyword: string, start: number, end: number): string | null {
    return this.source.startsWith(keyword, start) ? this.headerLine(start + keyword.length, end) : null
  }

  /** A header line (from `start`) as a byte string (one char per byte) without a trailing CR, for path parsing. */
  private headerLine(start: number, end: number): string {
    return this.source.byteString(start, Math.max(start, this.lineStop(start, end)))
  }

  /** The end of a line without its trailing CR. */
  private lineStop(start: number, end: number): number {
    return end > start && this.source.code(end - 1) === 0x0d ? end - 1 : end
  }

  /** A line quoted for a problem note, cut to keep notes short. */
  private snippet(start: number, end: number): string {
    return JSON.stringify(this.source.decode(start, Math.min(end, start + SNIPPET)))
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

function isSignature(source: Source, start: number, end: number): boolean {
  return end - start === 3 && source.startsWith("-- ", start)
}

/** A line of base85 data in a `GIT binary patch` block: a length letter then base85, which has no space. */
function isBase85(source: Source, start: number, end: number): boolean {
  if (end - start > 70) return false
  const first = source.code(start)
  const letter = (first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a)
  if (!letter) return false
  for (let index = start + 1; index < end; index += 1) {
    const code = source.code(index)
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
function parseHunkHeader(source: Source, start: number, end: number): HunkHeader | null {
  const at = (index: number) => (index < source.length ? source.code(index) : -1)
  let index = start + 3
  if (at(index) !== MINUS || (index = readNumber(source, index + 1, end)) < 0) return null
  const oldStart = numberRead
  let oldLines = 1
  if (at(index) === 0x2c) {
    if ((index = readNumber(source, index + 1, end)) < 0) return null
    oldLines = numberRead
  }
  if (at(index) !== SPACE || at(index + 1) !== PLUS || (index = readNumber(source, index + 2, end)) < 0) return null
  const newStart = numberRead
  let newLines = 1
  if (at(index) === 0x2c) {
    if ((index = readNumber(source, index + 1, end)) < 0) return null
    newLines = numberRead
  }
  if (!source.startsWith(" @@", index) || index + 3 > end) return null
  index += 3
  const sectionStart = at(index) === SPACE && index < end ? index + 1 : index
  const sectionEnd = end > sectionStart && at(end - 1) === 0x0d ? end - 1 : end
  return { oldStart, oldLines, newStart, newLines, sectionStart, sectionEnd: Math.max(sectionStart, sectionEnd) }
}

// The value of the last number readNumber read.
let numberRead = 0

/** Reads a decimal number at `start` into `numberRead` and returns where it ends, or -1 when there is none. */
function readNumber(source: Source, start: number, end: number): number {
  let value = 0
  let index = start
  while (index < end) {
    const code = source.code(index)
    if (code < 0x30 || code > 0x39) break
    value = value * 10 + (code - 0x30)
    index += 1
  }
  if (index === start || index - start > 15) return -1
  numberRead = value
  return index
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
    const prefixes = prefixesOf(first, second)
    if (first.slice(prefixes[0].length) === second.slice(prefixes[1].length)) return [first, second]
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
  // A UTF-16 unit is at most 3 UTF-8 bytes: a short name needs no counting.
  if (stem.length * 3 + tail.length <= MAX_NAME_BYTES || byteLength(stem) + tail.length <= MAX_NAME_BYTES)
    return `${stem}${tail}`
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
  // The first path of each name, and a group only for a name taken twice: thousands of paths rarely clash.
  const first = new Map<string, string>()
  const groups = new Map<string, string[]>()
  for (const [path, name] of names) {
    // ASCII is its own normal form.
    const key = (highByte.test(name) ? name.normalize("NFC") : name).toLowerCase()
    const taken = first.get(key)
    if (taken === undefined) first.set(key, path)
    else if (groups.has(key)) groups.get(key)!.push(path)
    else groups.set(key, [taken, path])
  }
  return [...groups.values()].flat()
}
