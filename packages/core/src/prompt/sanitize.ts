/**
 * Tags that delimit sections of our prompts and of the agents' answers. Text from a merge request
 * must never contain them, or it could close the section it sits in and speak as the system. The
 * names are deliberately unlike HTML so that an MR description with ordinary HTML is left alone.
 */
export const boundaryTags = [
  "review_request",
  "merge_request",
  "merge_request_context",
  "mr_title",
  "mr_description",
  "mr_comments",
  "mr_comment",
  "changed_files",
  "changed_file",
  "filtered_files",
  "filtered_file",
  "selected_reviewers",
  "previous_review",
  "previous_summary",
  "review_thread",
  "thread_note",
  "custom_instructions",
  "work_dir",
  "reviewer_results",
  "reviewer_result",
  "findings",
  "finding",
  "review",
  "answer",
  // The repository's AGENTS.md and the AGENTS.md template injected into every agent (packages/agents-md).
  "agents_md",
  "agents_md_template",
  // Engineering standards injected into the compliance reviewer (packages/standards).
  "standard",
] as const

/** Untrusted text with boundary tags removed, and the tags that were found (empty when clean). */
export interface Sanitized {
  text: string
  removed: string[]
}

/** How {@link sanitizeUntrusted} treats honest markup. */
export interface SanitizeOptions {
  /**
   * The caller XML-escapes the result (prompt.ts does): honest markup such as `<Review />` then
   * stays as written. Default false: its `<` becomes `‹`, so unescaped sections stay closed.
   */
  escaped?: boolean
}

/** A run of untrusted text: inside markdown code (a backtick span or a closed fence) or not. */
export interface MarkdownPart {
  text: string
  code: boolean
}

// Characters that render as nothing but split a tag name so a plain regex misses it; bidi controls
// that make text read differently than it is stored.
const invisible =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each listed character is matched alone on purpose (U+034F is a combining joiner we strip)
  /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0]/g
const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", sol: "/", nbsp: " " }
const entity = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos|sol|nbsp))(?:;|(?![A-Za-z0-9]))/gi
const tagPattern = new RegExp(
  `<\\s*/?\\s*(${boundaryTags.map((tag) => [...tag].map(escapeRegExp).join("\\s*")).join("|")})\\s*(?=[\\s/>]|$)[^<>]*(?:>|$)`,
  "gi",
)
// The start of a tag whose name is one of our single-word tags, written plainly: no entity, no
// invisible or look-alike character, no whitespace inside the name, and a plain delimiter after it
// (one that normalisation cannot remove, so nothing can be glued onto the name later).
const plainHead = new RegExp(
  `<[ \\t\\r\\n]*/?[ \\t\\r\\n]*(${boundaryTags.filter((tag) => !tag.includes("_")).join("|")})(?=[ \\t\\r\\n/>]|$)`,
  "gi",
)
// Anything outside ASCII (look-alikes, invisible characters), a tag's "<", an entity's "&", a code
// span's backtick or a fence's tilde.
const mayNeedSanitizing = /[^\x00-\x7f]|[<&`~]/
// Look-alikes that NFKC keeps as they are, so defanged text never normalises back into a tag.
const defangedOpen = "\u2039"
const defangedClose = "\u203A"

/**
 * Removes prompt-injection attempts made of boundary tags from untrusted text, and reports them.
 * A tag whose name normalises to one of {@link boundaryTags} (insensitive to case, whitespace, HTML
 * entities, NFKC look-alikes and invisible characters) is an attempt when it is spelled as ours
 * (lowercase), its name has an underscore (never honest markup), or it only became a tag through
 * that normalisation. A plainly written single-word name in another case (`<Review />`,
 * `<Answer>`: JSX, HTML-ish prose) is honest markup: kept (see {@link SanitizeOptions}), not reported.
 * Inside markdown code (backtick spans, closed fences) nothing is reported: the text is quoted
 * material, so an attempt-shaped tag is kept but defanged (`‹/mr_description›`): the reviewer still
 * sees what the author wrote, a model cannot read it as our tag. Entities are decoded in the
 * result; callers escape the text for the XML they embed it in.
 */
export function sanitizeUntrusted(input: string, options: SanitizeOptions = {}): Sanitized {
  // Most untrusted strings (paths, branch names) are plain ASCII without markup, code or entities:
  // nothing in them can be a tag, a code span or something normalisation changes.
  if (!mayNeedSanitizing.test(input)) return { text: input, removed: [] }
  const removed: string[] = []
  const keep = options.escaped === true
  const text = splitMarkdownCode(input)
    .map((part) =>
      part.code
        ? cleanMarkup(part.text, defangTags, keep)
        : cleanMarkup(part.text, (piece) => stripTags(piece, removed), keep),
    )
    .join("")
  return { text, removed }
}

/**
 * Decodes HTML entities (named, decimal, hex, nested), folds Unicode look-alikes (NFKC) and drops
 * invisible characters: the text as a model would read it, for matching.
 */
export function normalizeUntrusted(text: string): string {
  return decodeEntities(text.replace(invisible, "")).normalize("NFKC").replace(invisible, "")
}

/**
 * Splits text into markdown code (inline backtick spans, fenced blocks with a closing fence) and
 * the rest, as written: an entity or look-alike backtick opens nothing. A span ends at the next run
 * of as many backticks, never across a blank line or a fence. Joining the parts gives the input back.
 */
export function splitMarkdownCode(text: string): MarkdownPart[] {
  const parts: MarkdownPart[] = []
  if (!text.includes("`") && !text.includes("~~~")) return text === "" ? [] : [{ text, code: false }]
  const runs = backtickRuns(text)
  // Where a span must have ended: blank lines and lines that look like a fence.
  const limits = [...text.matchAll(/\n[ \t]*(?=\n)|\n {0,3}(?:```|~~~)/g)].map((match) => match.index)
  let plainStart = 0
  const push = (start: number, end: number) => {
    if (plainStart < start) parts.push({ text: text.slice(plainStart, start), code: false })
    parts.push({ text: text.slice(start, end), code: true })
    plainStart = end
  }
  let at = 0
  let limit = 0
  const unclosed = new Map<string, number>()
  while (at < text.length) {
    if (at === 0 || text[at - 1] === "\n") {
      const fence = fenceEnd(text, at, unclosed)
      if (fence > at) {
        push(at, fence)
        at = fence
        continue
      }
    }
    const next = text.indexOf("`", at)
    const lineEnd = text.indexOf("\n", at)
    if (next < 0 && lineEnd < 0) break
    if (next < 0 || (lineEnd >= 0 && lineEnd < next)) {
      at = lineEnd + 1
      continue
    }
    const run = runs.get(next)!
    at = next + run.length
    if (next > 0 && text[next - 1] === "\\") continue
    while (limit < limits.length && limits[limit]! < next) limit += 1
    const end = run.closer === null ? -1 : run.closer + run.length
    if (end < 0 || (limit < limits.length && limits[limit]! < run.closer!)) continue
    push(next, end)
    at = end
  }
  if (plainStart < text.length) parts.push({ text: text.slice(plainStart), code: false })
  return parts
}

/** Escapes text for an XML element body. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
}

const attributeSpecial = /[&<>"\n\r\t]/

/** Escapes text for a double-quoted XML attribute (newlines kept as character references). */
export function escapeAttribute(text: string): string {
  if (!attributeSpecial.test(text)) return text
  return escapeXml(text).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;")
}

// Plainly written single-word tags in another case than ours are kept out of normalisation; the
// text between them is normalised and handled piece by piece. Cutting there cannot glue a tag
// together: a piece ends before a "<" and starts at a delimiter normalisation keeps.
function cleanMarkup(raw: string, handle: (normalized: string) => string, keepHonest: boolean): string {
  const out: string[] = []
  let last = 0
  for (const match of raw.matchAll(plainHead)) {
    const name = match[1]!
    if (name === name.toLowerCase()) continue
    out.push(
      handle(normalizeUntrusted(raw.slice(last, match.index))),
      keepHonest ? match[0] : defangedOpen + match[0].slice(1),
    )
    last = match.index + match[0].length
  }
  out.push(handle(normalizeUntrusted(raw.slice(last))))
  return out.join("")
}

// Removes until nothing changes, so "<fin<finding>ding>" cannot rebuild a tag.
function stripTags(text: string, removed: string[]): string {
  let current = text
  for (;;) {
    const next = current.replace(tagPattern, (match) => {
      removed.push(match.replace(/\s+/g, " ").slice(0, 80))
      return ""
    })
    if (next === current) return next
    current = next
  }
}

// One pass is enough: replacing brackets joins nothing.
function defangTags(text: string): string {
  return text.replace(tagPattern, (match) => match.replace(/</g, defangedOpen).replace(/>/g, defangedClose))
}

// End (exclusive, after the closing fence's line) of a fenced block opening at `at`, or -1 when
// no line opens one there or it is never closed. `unclosed` remembers, per fence character, the
// shortest fence no later line closes: a longer one later cannot be closed either, so a text of
// many unclosed fences is searched once per length, not once per line.
function fenceEnd(text: string, at: number, unclosed: Map<string, number>): number {
  const newline = text.indexOf("\n", at)
  if (newline < 0) return -1
  const open = /^ {0,3}(`{3,}|~{3,})(.*)$/.exec(text.slice(at, newline))
  if (!open) return -1
  const fence = open[1]!
  const char = fence[0]!
  if (char === "`" && open[2]!.includes("`")) return -1
  if (fence.length >= (unclosed.get(char) ?? Infinity)) return -1
  const close = new RegExp(`^ {0,3}${char === "`" ? "`" : "~"}{${fence.length},}[ \\t]*\\r?$`, "m")
  const found = close.exec(text.slice(newline + 1))
  if (!found) {
    unclosed.set(char, fence.length)
    return -1
  }
  const end = newline + 1 + found.index + found[0].length
  return text[end] === "\n" ? end + 1 : end
}

// Every run of backticks by its start, with the start of the next run of the same length (the
// only run that can close a span it opens), found in one pass.
function backtickRuns(text: string): Map<number, { length: number; closer: number | null }> {
  const runs = new Map<number, { length: number; closer: number | null }>()
  const lastOfLength = new Map<number, number>()
  for (const match of text.matchAll(/`+/g)) {
    const length = match[0].length
    const previous = lastOfLength.get(length)
    if (previous !== undefined) runs.get(previous)!.closer = match.index
    runs.set(match.index, { length, closer: null })
    lastOfLength.set(length, match.index)
  }
  return runs
}

// Decodes until nothing changes, so "&amp;lt;" cannot smuggle a "<" past one round of decoding.
function decodeEntities(text: string): string {
  let current = text
  for (let round = 0; round < 8; round += 1) {
    const next = current.replace(
      entity,
      (match, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
        if (name) return named[name.toLowerCase()] ?? match
        const code = decimal ? Number.parseInt(decimal, 10) : Number.parseInt(hex!, 16)
        if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return ""
        return String.fromCodePoint(code)
      },
    )
    if (next === current) return next
    current = next
  }
  return current
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
}
