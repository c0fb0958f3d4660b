import { controlCharacters, invisibleCharacters } from "../model/text"
import { boundaryTags } from "../prompt/sanitize"

/**
 * Neutralisation of everything the bot posts on GitLab or GitHub (summary, finding titles and
 * bodies, answers, text echoed from the change). Both render CommonMark with GitHub's extensions,
 * so one scanner serves both; the platform decides only what else counts as a reference or a
 * link to rewrite. The rules, and why:
 *
 * - Commands. GitLab runs `/cmd` only at column 0 outside ``` blocks (it deletes every `\r`
 *   first; `Gitlab::QuickActions::Extractor`). GitHub has no quick actions, but the bots installed
 *   on a repository read comments: Prow takes a command that stands on its own line
 *   (kubernetes/test-infra `commands.md`), cncf/prow-github-actions acted on commands inside code
 *   fences until its PR #139, and our own bot answers `/review`. So both platforms get the same
 *   rule, stricter than GitLab's: a prose line whose first word after whitespace, `>`, list, task,
 *   heading or table markers starts with `/` + a letter gets that word wrapped in backticks
 *   (`` `/merge` ``, GitLab's own redaction format). Inside a code fence a column-0 `/word` line
 *   gets one leading space, so it is inert even if a fence regex (GitLab's: ``` only, exact closer;
 *   a bot's) and the Markdown renderer disagree on where the fence ends.
 * - Mentions notify people. Every `@name` and `@group/name` (`@org/team` on GitHub) not preceded by
 *   an ASCII word character, so `a@b.com` stays (GitHub's boundary too: html-pipeline's
 *   `MentionFilter` wants a non-word character before the `@`), is wrapped in backticks outside
 *   code. A mention inside an http(s) URL is left alone: both platforms autolink the URL and
 *   neither looks for mentions inside a link.
 * - References write a "mentioned in" note (GitLab) or a cross-reference event (GitHub) on the
 *   issue or change they name. Outside code these are wrapped in backticks: GitLab's issue, MR,
 *   epic, snippet, alert and commit references (`#12`, `!3`, `&4`, `$5`, `^alert#6`,
 *   `group/project#1`, `project@abc1234`, `[work_item:1]`), and on GitHub also `GH-12` in any case
 *   (GitHub docs, "Autolinked references and URLs": `#12`, `GH-12`, `owner/repo#12`, `user@sha`,
 *   `owner/repo@sha`; all but `GH-` already have GitLab's shape). GitHub gets the GitLab-only forms
 *   wrapped as well, though GitHub links none of them: it costs a pair of backticks on a rare
 *   token, keeps one grammar, and makes GitHub's output a fixed point of the GitLab rules too, so
 *   text carried from one platform to the other (a mirror, a quoted comment) stays inert. Labels
 *   (`~bug`) and milestones (`%v1`) are left alone: they notify nobody. A bare SHA is left alone:
 *   GitHub links it to a commit, which has no timeline to write on.
 * - Links to issues. GitLab: URLs of other projects' issues are not rewritten; they stay clickable
 *   (known gap: they can still add a cross-reference note). GitHub writes a backlink on the target
 *   for a link to an issue, pull request or discussion, autolinked or `[text](url)` alike, and
 *   documents `redirect.github.com` as the host that reaches the same page without one (GitHub docs,
 *   same page; renovate's `massage-markdown-links.ts` does this for its release notes). So on GitHub
 *   a github.com URL of that shape, bare or as a link destination, gets that host. Known gap: GitHub
 *   Enterprise Server and ghe.com hosts (this function does not know them, and the redirect does not
 *   serve ghe.com), and relative link destinations, are left as written.
 * - HTML. Outside code every `<` becomes `&lt;`: no tag, comment (`<!--` hides text from readers
 *   and could forge our markers) or autolink survives. GitHub renders a subset of HTML
 *   (html-pipeline's `SanitizationFilter`: `details`, `summary`, `img`, `a`, `sub`, `sup`, `div`,
 *   …), enough to hide text or fake our layout, so the rule is the same there. Character references
 *   other than `&lt; &gt; &amp; &quot; &apos; &#39; &#96;` are escaped, since `&#64;all` renders as
 *   a live `@all` and `&#x202E;` as a bidi override; keeping those few makes the function
 *   idempotent. Inside code `<!--` becomes `< !--`, so no posted text ever contains `<!--`.
 * - Invisible characters: zero-width, bidi controls, soft hyphen, Unicode tags and C0/C1 controls
 *   (except tab and newline) are removed everywhere, code included (Trojan Source). Line endings
 *   become `\n`.
 * - Images become links (`\![alt](src)`): an image URL is fetched for every reader, which leaks
 *   what was put into the URL and when the page was read. GitHub fetches it through its camo proxy
 *   (atmos/camo), which hides the reader's address but still requests the URL.
 * - Code. Fenced blocks and inline code spans are left as written (mentions, references and HTML
 *   are inert there; a ```` ```suggestion ```` block comes through byte for byte unless it holds an
 *   invisible character, `<!--` or a column-0 `/word`). To be sure our idea of "code" matches the
 *   renderer's, the text is normalised so only unambiguous code remains: fences are moved to
 *   column 0 (their content dedented as CommonMark does), an unclosed fence is closed, a code span
 *   is honoured only when it opens and closes on one line (and, when the text has a table, holds
 *   no `|`); every other backtick becomes `&#96;`. Constructs that could swallow a backtick and
 *   shift the pairing are disarmed: brackets are escaped except in a plain one-line `[text](url)`
 *   link, `$` is escaped (both render `$…$` as math; GitHub docs, "Writing mathematical
 *   expressions"), backticks inside URLs become `&#96;`, `>>>` (GitLab's multi-line quote), a
 *   tilde fence inside a container and a front matter delimiter on the first line are escaped.
 *   These escapes render as the same characters.
 */
export interface Neutralized {
  text: string
  /** What was changed, one entry per kind with a count (`mention @all neutralised (×2)`). */
  changes: string[]
}

/** Where a text will be posted: the platform whose Markdown rules apply. */
export type PlatformName = "gitlab" | "github"

/** Makes model-written text safe to post on `platform`; see the module comment for the rules. Idempotent. */
export function neutralizeMarkdown(input: string, platform: PlatformName): Neutralized {
  if (platform !== "gitlab" && platform !== "github")
    throw new RangeError(`unknown platform ${JSON.stringify(platform)}`)
  const log = new ChangeLog()
  const unified = input.replace(/\r\n?|[\u0085\u2028\u2029]/g, "\n")
  if (unified !== input) log.add("line endings normalised")
  const text = unified
    .replace(invisible, () => log.add("invisible or bidi character removed"))
    .replace(controls, () => log.add("control character removed"))

  const lines = text.split("\n")
  const context: Context = { log, tables: lines.some(isDelimiterRow), platform }
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

/** Makes model-written text safe to post on GitLab. Idempotent. */
export function neutralizeForGitlab(input: string): Neutralized {
  return neutralizeMarkdown(input, "gitlab")
}

/**
 * Makes model-written text safe to post on GitHub: GitLab's rules plus `GH-12` references and
 * github.com issue links sent through redirect.github.com. Idempotent; its output is also left
 * unchanged by {@link neutralizeForGitlab}.
 */
export function neutralizeForGithub(input: string): Neutralized {
  return neutralizeMarkdown(input, "github")
}

// Zero-width and joiner characters, bidi controls (embeddings, overrides, isolates, marks), soft
// hyphen, Hangul fillers, word joiner and invisible operators, BOM, Unicode tag characters.
const invisible = invisibleCharacters
const controls = controlCharacters

interface Context {
  log: ChangeLog
  /** The text has a table delimiter row: a `|` inside a code span could split a table cell. */
  tables: boolean
  platform: PlatformName
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
        pieces.push({ text: redirectedTail(line.slice(link.close, link.end), context), inserted: false })
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

// A plain URL is left as it is (both platforms link it, so a mention inside is inert). Any other URL
// that holds a backtick, mention or reference becomes one code span: an autolink could swallow a
// backtick we added, and wrapping only the mention would not survive a second pass.
function urlPieces(line: string, start: number, end: number, context: Context): Piece[] {
  const url = line.slice(start, end)
  const redirect = context.platform === "github" ? redirected(url) : null
  if (redirect !== null) {
    context.log.add("github issue link sent through redirect.github.com")
    return urlPieces(line.slice(0, start) + redirect, start, start + redirect.length, context)
  }
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
      const reference = mode === "text" ? reach(line, at + 1, end, line.charAt(at - 1), context) : null
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
    const reference = mode === "text" ? reach(line, at, end, line.charAt(at - 1), context) : null
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
// GitHub's own short form of `#12`; GitHub links it in any case (`gh-12`).
const githubReference = /gh-\d+\w*/iy

// A mention or reference starting at `at`, judged by the character before it as the platforms'
// own patterns do; null when there is none.
function reach(line: string, at: number, end: number, before: string, context: Context): string | null {
  const found = mentionOrReference(line, at, end, before, context.platform)
  if (!found || found === "@") return null
  context.log.add(found.startsWith("@") ? `mention ${found} neutralised` : `reference ${found} neutralised`)
  return found
}

function mentionOrReference(
  line: string,
  at: number,
  end: number,
  before: string,
  platform: PlatformName,
): string | null {
  const char = line.charAt(at)
  if (char === "@")
    return /[A-Za-z0-9_]/.test(before) ? null : (sticky(mention, line, at, end)?.replace(/\.+$/, "") ?? null)
  if ("#!&$^".includes(char)) return sticky(bareReference, line, at, end)
  const github = platform === "github" && !/[A-Za-z0-9_]/.test(before) ? sticky(githubReference, line, at, end) : null
  if (github) return github
  if (/[A-Za-z0-9_.]/.test(char) && !/[A-Za-z0-9_./-]/.test(before)) return sticky(pathReference, line, at, end)
  return null
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

// An http(s) or www URL without Markdown-active characters: it is rendered as a link, so a
// mention or reference inside it is inert and left alone.
function isPlainUrl(url: string): boolean {
  return /^(?:https?:\/\/|www\.)[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?::\d+)?(?:[/?#][^\s`<>[\]\\$*]*)?$/i.test(url)
}

// The scheme and host of a github.com issue, pull request or discussion URL (an organisation's
// discussions are /orgs/<org>/discussions/<n>): the links GitHub writes a backlink for.
const githubThread =
  /^(?:https?:\/\/)?(?:www\.)?github\.com(?=\/[A-Za-z0-9-]+\/[A-Za-z0-9_.-]+\/(?:issues|pull|discussions)\/\d)/i

// The URL with its host replaced by redirect.github.com, which reaches the same page without a
// backlink; null when it is not a github.com issue URL (a redirected one included).
function redirected(url: string): string | null {
  const host = githubThread.exec(url)?.[0]
  return host === undefined ? null : `https://redirect.github.com${url.slice(host.length)}`
}

// The `](destination "title")` of a plain link, its destination redirected on GitHub.
function redirectedTail(tail: string, context: Context): string {
  if (context.platform !== "github") return tail
  const open = /^\]\([ \t]*/.exec(tail)?.[0] ?? ""
  const rest = tail.slice(open.length)
  const space = rest.search(/[ \t]/)
  const destination = space < 0 ? rest.slice(0, -1) : rest.slice(0, space)
  const redirect = redirected(destination)
  if (redirect === null) return tail
  context.log.add("github issue link sent through redirect.github.com")
  return `${open}${redirect}${rest.slice(destination.length)}`
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
