import { boundaryTags, controlCharacters, invisibleCharacters } from "@opencode-reviewer/core"

/**
 * Neutralisation of everything the bot posts on GitLab (summary, finding titles and bodies,
 * answers, text echoed from the merge request). The rules, and why:
 *
 * - Quick actions. GitLab runs `/cmd` only at column 0 outside ``` blocks (it deletes every `\r`
 *   first; `Gitlab::QuickActions::Extractor`). We are stricter: a prose line whose first word after
 *   whitespace, `>`, list, task, heading or table markers starts with `/` + a letter gets that word
 *   wrapped in backticks (`` `/merge` ``), GitLab's own redaction format. Inside a code fence a
 *   column-0 `/word` line gets one leading space, so it is inert even if GitLab's fence regex
 *   (``` only, exact closer) and the Markdown renderer disagree on where the fence ends.
 * - Mentions and references notify people or write "mentioned in" notes on other issues. Every
 *   `@name` (not preceded by an ASCII word character, so `a@b.com` stays) and every issue, MR,
 *   epic, snippet, alert or commit reference (`#12`, `!3`, `&4`, `$5`, `^alert#6`,
 *   `group/project#1`, `project@abc1234`, `[work_item:1]`) outside code is wrapped in backticks.
 *   Labels (`~bug`) and milestones (`%v1`) are left alone: they notify nobody. A mention inside an
 *   http(s) URL is left alone (GitLab autolinks the URL). URLs of other projects' issues are not
 *   rewritten: they stay clickable (known gap: they can still add a cross-reference note).
 * - HTML. Outside code every `<` becomes `&lt;`: no tag, comment (`<!--` hides text from readers
 *   and could forge our markers) or autolink survives. Character references other than
 *   `&lt; &gt; &amp; &quot; &apos; &#39; &#96;` are escaped, since `&#64;all` renders as a live
 *   `@all` and `&#x202E;` as a bidi override; keeping those few makes the function idempotent.
 *   Inside code `<!--` becomes `< !--`, so no posted text ever contains `<!--`.
 * - Invisible characters: zero-width, bidi controls, soft hyphen, Unicode tags and C0/C1 controls
 *   (except tab and newline) are removed everywhere, code included (Trojan Source). Line endings
 *   become `\n`.
 * - Images become links (`\![alt](src)`): an image URL is fetched by every reader's browser, which
 *   leaks data put into the URL.
 * - Code. Fenced blocks and inline code spans are left as written (mentions and HTML are inert
 *   there). To be sure our idea of "code" matches the renderer's, the text is normalised so only
 *   unambiguous code remains: fences are moved to column 0 (their content dedented as CommonMark
 *   does), an unclosed fence is closed, a code span is honoured only when it opens and closes on
 *   one line (and, when the text has a table, holds no `|`); every other backtick becomes `&#96;`.
 *   Constructs that could swallow a backtick and shift the pairing are disarmed: brackets are
 *   escaped except in a plain one-line `[text](url)` link, `$` (math) is escaped, backticks inside
 *   URLs become `&#96;`, `>>>` (multi-line quote), a tilde fence inside a container and a front
 *   matter delimiter on the first line are escaped. These escapes render as the same characters.
 */
export interface Neutralized {
  text: string
  /** What was changed, one entry per kind with a count (`mention @all neutralised (×2)`). */
  changes: string[]
}

/** Makes model-written text safe to post on GitLab; see the module comment for the rules. Idempotent. */
export function neutralizeForGitlab(input: string): Neutralized {
  const log = new ChangeLog()
  const unified = input.replace(/\r\n?|[\u0085\u2028\u2029]/g, "\n")
  if (unified !== input) log.add("line endings normalised")
  const text = unified
    .replace(invisible, () => log.add("invisible or bidi character removed"))
    .replace(controls, () => log.add("control character removed"))

  const lines = text.split("\n")
  const context: Context = { log, tables: lines.some(isDelimiterRow) }
  const out: string[] = []
  let fence: Fence | null = null
  for (const [index, line] of lines.entries()) {
    if (fence) {
      const content = dedent(line, fence.indent)
      if (closesFence(content, fence)) fence = null
      out.push(fence ? codeLine(content, log) : content)
      continue
    }
    fence = openFence(line)
    if (fence) {
      if (fence.indent > 0) log.add("indented code fence moved to column 0")
      out.push(breakComments(line.slice(fence.indent), log))
      continue
    }
    out.push(proseLine(line, index === 0, context))
  }
  if (fence) {
    const closer = fence.char.repeat(fence.length)
    if (out.at(-1) === "") out.splice(out.length - 1, 0, closer)
    else out.push(closer)
    log.add("unclosed code fence closed")
  }
  return { text: out.join("\n"), changes: log.list() }
}

/** `<!-- opencode-reviewer:kind -->` or `<!-- opencode-reviewer:kind=value -->`; add it after neutralising. */
export function hiddenMarker(kind: string, value?: string): string {
  if (!markerKind.test(kind)) throw new RangeError(`marker kind ${JSON.stringify(kind)} must match ${markerKind}`)
  if (value === undefined || value === "") return `<!-- ${markerPrefix}${kind} -->`
  if (!markerValue.test(value)) throw new RangeError(`marker value ${JSON.stringify(value)} must match ${markerValue}`)
  return `<!-- ${markerPrefix}${kind}=${value} -->`
}

/**
 * The value of the last `kind` marker in a note body: "" for a marker without a value, null when
 * there is none. Neutralised text never contains `<!--`, so a marker cannot come from model text.
 */
export function readMarker(body: string, kind: string): string | null {
  if (!markerKind.test(kind)) return null
  const pattern = new RegExp(`<!-- ${markerPrefix}${kind}(?:=([A-Za-z0-9:_-]+))? -->`, "g")
  let found: string | null = null
  for (const match of body.matchAll(pattern)) found = match[1] ?? ""
  return found
}

const markerPrefix = "opencode-reviewer:"
const markerKind = /^[A-Za-z0-9_-]+$/
const markerValue = /^[A-Za-z0-9:_-]+$/

// Zero-width and joiner characters, bidi controls (embeddings, overrides, isolates, marks), soft
// hyphen, Hangul fillers, word joiner and invisible operators, BOM, Unicode tag characters.
const invisible = invisibleCharacters
const controls = controlCharacters

interface Context {
  log: ChangeLog
  /** The text has a table delimiter row: a `|` inside a code span could split a table cell. */
  tables: boolean
}

interface Fence {
  char: string
  length: number
  indent: number
}

/** A piece of an output line; `inserted` marks a code span we added, which must not touch another backtick. */
interface Piece {
  text: string
  inserted: boolean
}

class ChangeLog {
  private readonly counts = new Map<string, number>()

  add(change: string): string {
    this.counts.set(change, (this.counts.get(change) ?? 0) + 1)
    return ""
  }

  list(): string[] {
    return [...this.counts].map(([change, count]) => (count === 1 ? change : `${change} (×${count})`))
  }
}

// ---- blocks ----------------------------------------------------------------------------------

const fenceOpener = /^( {0,3})(`{3,}|~{3,})(.*)$/
const fenceCloser = /^ {0,3}(`{3,}|~{3,})[ \t]*$/

// Only fences indented 0-3 spaces are code for us; they are moved to column 0, where CommonMark
// cannot place them inside a list item or a quote, so the renderer agrees on every line after.
function openFence(line: string): Fence | null {
  const match = fenceOpener.exec(line)
  if (!match) return null
  const marker = match[2] ?? ""
  if (marker.startsWith("`") && (match[3] ?? "").includes("`")) return null
  return { char: marker.charAt(0), length: marker.length, indent: (match[1] ?? "").length }
}

function closesFence(line: string, fence: Fence): boolean {
  const marker = fenceCloser.exec(line)?.[1]
  return marker?.startsWith(fence.char) === true && marker.length >= fence.length
}

function dedent(line: string, indent: number): string {
  let cut = 0
  while (cut < indent && line.charAt(cut) === " ") cut += 1
  return line.slice(cut)
}

function codeLine(line: string, log: ChangeLog): string {
  const command = /^\/([A-Za-z_]\w*)/.exec(line)
  if (command) log.add(`quick action /${command[1]} in a code block indented`)
  return breakComments(command ? ` ${line}` : line, log)
}

function breakComments(text: string, log: ChangeLog): string {
  return text.replace(/<!--/g, () => {
    log.add("'<!--' in code broken up")
    return "< !--"
  })
}

function isDelimiterRow(line: string): boolean {
  if (!line.includes("|") || !line.includes("-")) return false
  return /^[|:\-\s]+$/.test(line.replace(/^(?:[\s>*+]|\d{1,9}[.)])*/, ""))
}

// Whitespace, quote markers, list bullets and numbers, task boxes, heading hashes, table pipes.
const linePrefix = /^(?:[\s>|]|[-*+](?=\s)|\d{1,9}[.)](?=\s)|#{1,6}(?=\s)|\[[ xX]\](?=\s))*/u

function proseLine(line: string, first: boolean, context: Context): string {
  const { log } = context
  let text = line
  if (first && /^(?:-{3}|\+{3}|;{3})/.test(text)) {
    text = `\\${text}`
    log.add("front matter delimiter escaped")
  }
  const quote = /^ {0,3}>{3}/.exec(text)
  if (quote) {
    const at = quote[0].length - 3
    text = `${text.slice(0, at)}\\${text.slice(at)}`
    log.add("multi-line blockquote fence escaped")
  }
  const prefix = linePrefix.exec(text)?.[0] ?? ""
  const pieces: Piece[] = [{ text: prefix, inserted: false }]
  let start = prefix.length
  if (text.startsWith("~~~", start)) {
    pieces.push({ text: "\\", inserted: false })
    log.add("tilde fence inside a container escaped")
  }
  const command = /^\/[A-Za-z_][^\s`|]*/.exec(text.slice(start))
  if (command) {
    pieces.push({ text: `\`${breakComments(command[0], log)}\``, inserted: true })
    log.add(`quick action ${/^\/\w*/.exec(command[0])?.[0]} neutralised`)
    start += command[0].length
  }
  append(pieces, scan(text, start, text.length, context))
  return join(pieces)
}

// A loop, not push(...more): a line with a hundred thousand mentions would overflow the stack.
function append(pieces: Piece[], more: readonly Piece[]): void {
  for (const piece of more) pieces.push(piece)
}

function join(pieces: readonly Piece[]): string {
  const out: string[] = []
  let previous: Piece | null = null
  for (const piece of pieces) {
    if (piece.text === "") continue
    if (previous?.text.endsWith("`") && piece.text.startsWith("`") && (piece.inserted || previous.inserted))
      out.push(" ")
    out.push(piece.text)
    previous = piece
  }
  return out.join("")
}

// ---- inline ----------------------------------------------------------------------------------

// Left to right as CommonMark does: escapes, URLs (an autolink would swallow a backtick), code
// spans, plain one-line links; everything else goes to `plain`, which escapes what is left.
function scan(line: string, start: number, end: number, context: Context): Piece[] {
  const pieces: Piece[] = []
  let chunk = start
  let at = start
  const flush = (to: number) => {
    if (to > chunk) append(pieces, plain(line, chunk, to, "text", context))
  }
  while (at < end) {
    const char = line.charAt(at)
    if (char === "\\" && at + 1 < end && isPunctuation(line.charAt(at + 1))) {
      at += 2
      continue
    }
    const url = urlEnd(line, at, end)
    if (url > at) {
      flush(at)
      append(pieces, urlPieces(line, at, url, context))
      at = chunk = url
      continue
    }
    if (char === "`") {
      const run = runLength(line, at)
      const close = codeSpanEnd(line, at, run, end, context.tables)
      if (close < 0) {
        at += run
        continue
      }
      flush(at)
      pieces.push({ text: breakComments(line.slice(at, close), context.log), inserted: false })
      at = chunk = close
      continue
    }
    if (char === "[") {
      extendedReference.lastIndex = at
      const reference = extendedReference.exec(line)
      if (reference && at + reference[0].length <= end) {
        flush(at)
        pieces.push({ text: `\`${reference[0]}\``, inserted: true })
        context.log.add(`reference ${reference[0]} neutralised`)
        at = chunk = at + reference[0].length
        continue
      }
      const link = plainLink(line, at, end, context)
      if (link) {
        flush(at)
        pieces.push({ text: "[", inserted: false })
        append(pieces, scan(line, at + 1, link.close, context))
        pieces.push({ text: line.slice(link.close, link.end), inserted: false })
        at = chunk = link.end
        continue
      }
    }
    if (char === "!" && line.charAt(at + 1) === "[" && plainLink(line, at + 1, end, context)) {
      flush(at)
      pieces.push({ text: "\\!", inserted: false })
      context.log.add("image made a link")
      at = chunk = at + 1
      continue
    }
    at += 1
  }
  flush(end)
  return pieces
}

// A plain URL is left as it is (GitLab links it, so a mention inside is inert). Any other URL
// that holds a backtick, mention or reference becomes one code span: an autolink could swallow a
// backtick we added, and wrapping only the mention would not survive a second pass.
function urlPieces(line: string, start: number, end: number, context: Context): Piece[] {
  const url = line.slice(start, end)
  if (isPlainUrl(url)) return plain(line, start, end, "url", context)
  const risky =
    url.includes("`") ||
    plain(line, start, end, "text", { ...context, log: new ChangeLog() }).some((piece) => piece.inserted)
  if (!risky || (context.tables && url.includes("|"))) return plain(line, start, end, "text", context)
  context.log.add("url with a backtick, mention or reference shown as code")
  const fence = "`".repeat(Math.max(0, ...[...url.matchAll(/`+/g)].map((run) => run[0].length)) + 1)
  const padding = url.startsWith("`") || url.endsWith("`") ? " " : ""
  return [{ text: `${fence}${padding}${breakComments(url, context.log)}${padding}${fence}`, inserted: true }]
}

type Mode = "text" | "url"

const characterReference = /&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/y
const keptReferences = new Set(["&lt;", "&gt;", "&amp;", "&quot;", "&apos;", "&#39;", "&#96;"])

function plain(line: string, start: number, end: number, mode: Mode, context: Context): Piece[] {
  const { log } = context
  const pieces: Piece[] = []
  let buffer = ""
  const insert = (code: string) => {
    if (buffer) pieces.push({ text: buffer, inserted: false })
    buffer = ""
    pieces.push({ text: `\`${code}\``, inserted: true })
  }
  let at = start
  while (at < end) {
    const char = line.charAt(at)
    if (char === "\\" && at + 1 < end && isPunctuation(line.charAt(at + 1))) {
      // "\@all" renders as "@all": drop the backslash and neutralise what follows instead.
      const reference = mode === "text" ? reach(line, at + 1, end, line.charAt(at - 1), log) : null
      if (reference) {
        insert(reference)
        at += 1 + reference.length
        continue
      }
      buffer += line.slice(at, at + 2)
      at += 2
      continue
    }
    if (char === "`") {
      const run = runLength(line, at)
      buffer += "&#96;".repeat(Math.min(run, end - at))
      log.add("stray backtick escaped")
      at += run
      continue
    }
    if (char === "<") {
      log.add(describeTag(line.slice(at, Math.min(end, at + 60))))
      buffer += "&lt;"
      at += 1
      continue
    }
    if (char === "&") {
      characterReference.lastIndex = at
      const reference = characterReference.exec(line)?.[0]
      if (reference && at + reference.length <= end && keptReferences.has(reference)) {
        buffer += reference
        at += reference.length
        continue
      }
      if (reference && at + reference.length <= end) {
        // Only the ampersand: the rest ("#64;") is scanned again, so "#64" is treated as a reference.
        log.add(`character reference ${reference} escaped`)
        buffer += "&amp;"
        at += 1
        continue
      }
    }
    if (char === "[" || char === "]") {
      buffer += `\\${char}`
      log.add("bracket escaped")
      at += 1
      continue
    }
    const reference = mode === "text" ? reach(line, at, end, line.charAt(at - 1), log) : null
    if (reference) {
      insert(reference)
      at += reference.length
      continue
    }
    if (char === "$") {
      buffer += "\\$"
      log.add("dollar sign escaped")
      at += 1
      continue
    }
    buffer += char
    at += 1
  }
  if (buffer) pieces.push({ text: buffer, inserted: false })
  return pieces
}

const mention = /@[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_.-]+)*/y
const bareReference = /(?:\^alert#|[#!&$])\d+\w*(?:\+s?)?/y
const pathReference =
  /(?:[A-Za-z0-9_.][A-Za-z0-9_.-]*\/)*[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:[#!&$]\d+\w*(?:\+s?)?|@[0-9a-f]{7,40}(?:\.{2,3}[0-9a-f]{7,40})?(?![\w-]|\.\w))/y
const extendedReference = /\[[a-z_]+:[^\]\s`|\\[]+\]/y

// A mention or GitLab reference starting at `at`, judged by the character before it as GitLab's
// own patterns do; null when there is none.
function reach(line: string, at: number, end: number, before: string, log: ChangeLog): string | null {
  const char = line.charAt(at)
  let found: string | null = null
  if (char === "@" && !/[A-Za-z0-9_]/.test(before)) found = sticky(mention, line, at, end)?.replace(/\.+$/, "") ?? null
  else if ("#!&$^".includes(char)) found = sticky(bareReference, line, at, end)
  else if (/[A-Za-z0-9_.]/.test(char) && !/[A-Za-z0-9_./-]/.test(before)) found = sticky(pathReference, line, at, end)
  if (!found || found === "@") return null
  log.add(found.startsWith("@") ? `mention ${found} neutralised` : `reference ${found} neutralised`)
  return found
}

function sticky(pattern: RegExp, line: string, at: number, end: number): string | null {
  pattern.lastIndex = at
  const found = pattern.exec(line)?.[0]
  return found !== undefined && at + found.length <= end ? found : null
}

function describeTag(text: string): string {
  if (text.startsWith("<!--")) return "html comment escaped"
  // Boundary tags are matched as loosely as sanitize.ts removes them; HTML tags as HTML parses them.
  const loose = /^<\s*\/?\s*([A-Za-z][\w-]*)/.exec(text)?.[1]?.toLowerCase()
  if (loose && (boundaryTags as readonly string[]).includes(loose)) return `boundary tag <${loose}> escaped`
  const name = /^<\/?([A-Za-z][\w-]*)/.exec(text)?.[1]?.toLowerCase()
  return name ? `html tag <${name}> escaped` : "'<' escaped"
}

function isPunctuation(char: string): boolean {
  return char !== "" && "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".includes(char)
}

function runLength(line: string, at: number): number {
  let end = at
  while (line.charAt(end) === "`") end += 1
  return end - at
}

// End (exclusive) of the code span opened by the run at `at`, or -1 when the run is literal.
function codeSpanEnd(line: string, at: number, run: number, end: number, tables: boolean): number {
  let search = at + run
  while (search < end) {
    const next = line.indexOf("`", search)
    if (next < 0 || next >= end) return -1
    const length = runLength(line, next)
    if (length === run && next + length <= end) {
      if (tables && /(^|[^\\])\|/.test(line.slice(at + run, next))) return -1
      return next + length
    }
    search = next + length
  }
  return -1
}

// End of a URL starting at `at` (scheme:// or www.), as far as an autolink could reach; else -1.
function urlEnd(line: string, at: number, end: number): number {
  if (at > 0 && /[A-Za-z0-9+.-]/.test(line.charAt(at - 1))) return -1
  if (!sticky(/[A-Za-z][A-Za-z0-9+.-]*:\/\/|www\./iy, line, at, end)) return -1
  let stop = at
  while (stop < end && line.charAt(stop) !== " " && line.charAt(stop) !== "\t") stop += 1
  return stop
}

// An http(s) or www URL without Markdown-active characters: GitLab turns it into a link, so a
// mention or reference inside it is inert and left alone.
function isPlainUrl(url: string): boolean {
  return /^(?:https?:\/\/|www\.)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:[/?#][^\s`<>[\]\\$*]*)?$/i.test(url)
}

const linkTail = /[ \t]*(?:[^\s()<>`[\]\\|]|\([^\s()<>`[\]\\|]*\))*(?:[ \t]+(?:"[^"`\\|<]*"|'[^'`\\|<]*'))?[ \t]*\)/y

// A `[text](destination "title")` on one line whose text holds no bracket, pipe or URL and whose
// destination and title hold no backtick: nothing in it can swallow a backtick, so it stays a link.
function plainLink(line: string, at: number, end: number, context: Context): { close: number; end: number } | null {
  let cursor = at + 1
  while (cursor < end) {
    const char = line.charAt(cursor)
    if (char === "\\" && cursor + 1 < end && isPunctuation(line.charAt(cursor + 1))) {
      cursor += 2
      continue
    }
    if (char === "`") {
      const run = runLength(line, cursor)
      const close = codeSpanEnd(line, cursor, run, end, context.tables)
      cursor = close < 0 ? cursor + run : close
      continue
    }
    if (char === "]") break
    if (char === "[" || char === "|" || urlEnd(line, cursor, end) > cursor) return null
    cursor += 1
  }
  if (cursor >= end || line.charAt(cursor + 1) !== "(") return null
  const tail = sticky(linkTail, line, cursor + 2, end)
  return tail === null ? null : { close: cursor, end: cursor + 2 + tail.length }
}
