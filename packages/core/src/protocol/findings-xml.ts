import type { XMLParser, XMLValidator } from "fast-xml-parser"
import * as z from "zod"
import { Finding, maxSuggestionLines, normalizeCategory, Severity, type Suggestion } from "../model/finding"
import { escapeAttribute, escapeXml } from "../prompt/sanitize"

/** A specialist's findings, or a short message the model can act on in its one retry. */
export type FindingsParse = { ok: true; findings: Finding[] } | { ok: false; error: string }

/** The coordinator's final review as `submit_review` receives it; the decision is not part of it. */
export const Review = z.object({
  summary: z.string().min(1),
  findings: z.array(Finding),
  answer: z.string().nullable(),
})
export type Review = z.infer<typeof Review>

/** The coordinator's review, or a short message the model can act on when it retries. */
export type ReviewParse = { ok: true; review: Review } | { ok: false; error: string }

/** How to read a findings block. */
export interface FindingsParseOptions {
  /** Category for a finding that names none (e.g. the reviewer's own); without it a missing category is an error. */
  defaultCategory?: string
}

/**
 * Reads the one `<findings>` block of a specialist's answer (the last one when the tag is also
 * mentioned in prose); text outside the block is ignored. Never throws: model output is untrusted.
 * Tolerates unambiguous slips: code fences, a lone `&`, a `<` inside `<title>`/`<body>` text.
 */
export function parseFindings(text: string, options: FindingsParseOptions = {}): FindingsParse {
  const result = parseLastBlock(text, "findings", (xml) => {
    const parsed = readXml(xml, "findings")
    if (!parsed.ok) return parsed
    return readFindings(parsed.value, options)
  })
  if (result) return result
  const bare = /<finding[\s>]/.test(text) ? " (found <finding> elements without the enclosing <findings> element)" : ""
  return fail(
    `no <findings> block found${bare}: end your answer with <findings><finding …>…</finding></findings>, or <findings/> when there is nothing to report`,
  )
}

/**
 * Reads the coordinator's `<review>` block (summary required, findings, optional answer) with the
 * same tolerance as `parseFindings`. Never throws.
 */
export function parseReview(text: string, options: FindingsParseOptions = {}): ReviewParse {
  const result = parseLastBlock(text, "review", (xml, block) => {
    const parsed = readXml(xml, "review")
    if (!parsed.ok) return parsed
    return readReview(parsed.value, options, text.slice(0, block.start) + text.slice(block.end))
  })
  if (result) return result
  return fail(
    "no <review> block found: send <review><summary>…</summary><findings>…</findings><answer>…</answer></review> (answer is optional)",
  )
}

/** Serialises findings to the `<findings>` shape the reviewers use, escaped; `<findings/>` when empty. */
export function renderFindingsXml(findings: readonly Finding[], options: { indent?: string } = {}): string {
  const pad = options.indent ?? ""
  if (findings.length === 0) return `${pad}<findings/>`
  const lines = [`${pad}<findings>`]
  for (const finding of findings) {
    const attributes = [
      `severity="${finding.severity}"`,
      `file="${escapeAttribute(finding.file)}"`,
      finding.line === null ? "" : `line="${finding.line}"`,
      `category="${escapeAttribute(finding.category)}"`,
      finding.thread === undefined ? "" : `thread="${escapeAttribute(finding.thread)}"`,
      finding.raisedBy === undefined ? "" : `raised_by="${escapeAttribute(finding.raisedBy)}"`,
    ]
    lines.push(
      `${pad}  <finding ${attributes.filter(Boolean).join(" ")}>`,
      `${pad}    <title>${escapeXml(finding.title)}</title>`,
      `${pad}    <body>${escapeXml(finding.body)}</body>`,
      ...(finding.suggestion
        ? [
            `${pad}    <suggestion start_line="${finding.suggestion.startLine}">`,
            escapeXml(finding.suggestion.lines.join("\n")),
            `${pad}    </suggestion>`,
          ]
        : []),
      `${pad}  </finding>`,
    )
  }
  lines.push(`${pad}</findings>`)
  return lines.join("\n")
}

/** Serialises a review to the `<review>` shape `submit_review` takes, escaped. */
export function renderReviewXml(review: Review): string {
  return [
    `<review>`,
    `  <summary>${escapeXml(review.summary)}</summary>`,
    renderFindingsXml(review.findings, { indent: "  " }),
    review.answer === null ? "" : `  <answer>${escapeXml(review.answer)}</answer>`,
    `</review>`,
  ]
    .filter(Boolean)
    .join("\n")
}

type Result<T> = { ok: true; value: T } | { ok: false; error: string }
type Node = Record<string, unknown>

interface Block {
  start: number
  end: number
  xml: string
}

const maxErrors = 5
const severityList = Severity.options.join(", ")

// fast-xml-parser loads with the first block read: planning, which loads this module through
// core's index, reads none.
let loaded: { parser: XMLParser; validator: typeof XMLValidator } | undefined
function xmlLibrary(): { parser: XMLParser; validator: typeof XMLValidator } {
  if (loaded !== undefined) return loaded
  const library = require("fast-xml-parser") as typeof import("fast-xml-parser")
  // Only the five XML entities and character references are ever decoded, by us, in one pass:
  // the parser itself expands nothing, so no DOCTYPE trick can make it expand anything.
  const parser = new library.XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "@",
    textNodeName: "#text",
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    processEntities: false,
    htmlEntities: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    commentPropName: false,
    cdataPropName: false,
    isArray: (name) => name === "finding",
  })
  loaded = { parser, validator: library.XMLValidator }
  return loaded
}

function fail(error: string): { ok: false; error: string } {
  return { ok: false, error }
}

/**
 * Finds complete `<tag …>…</tag>` / `<tag/>` blocks and parses the last one. When the last fails
 * and an earlier block encloses it, the last was a mention inside the real block's text: the
 * enclosing block is tried. An earlier block that does not enclose it is never used, so a prose
 * `<findings/>` cannot stand in for a broken real block. Null when there is no block at all.
 */
function parseLastBlock<T extends { ok: boolean }>(
  text: string,
  tag: string,
  parse: (xml: string, block: Block) => T,
): T | null {
  const blocks = findBlocks(text, tag)
  const last = blocks.at(-1)
  if (!last) return null
  const first = parse(last.xml, last)
  if (first.ok) return first
  for (const block of blocks.slice(0, -1).reverse()) {
    if (block.start >= last.start || block.end < last.end) continue
    const outer = parse(block.xml, block)
    if (outer.ok) return outer
  }
  return first
}

function findBlocks(text: string, tag: string): Block[] {
  const opener = new RegExp(`<${tag}(?=[\\s/>])[^<>]*>`, "g")
  const closer = new RegExp(`</${tag}\\s*>`, "g")
  const blocks: Block[] = []
  for (const match of text.matchAll(opener)) {
    const start = match.index
    const openEnd = start + match[0].length
    if (/\/\s*>$/.test(match[0])) {
      blocks.push({ start, end: openEnd, xml: match[0] })
      continue
    }
    closer.lastIndex = openEnd
    const close = closer.exec(text)
    if (!close) continue
    const end = close.index + close[0].length
    blocks.push({ start, end, xml: text.slice(start, end) })
  }
  return blocks
}

function readXml(xml: string, root: string): Result<unknown> {
  const repaired = repair(xml)
  const { parser, validator } = xmlLibrary()
  const valid = validator.validate(repaired)
  if (valid !== true) {
    return fail(
      `the <${root}> block is not well-formed XML (line ${valid.err.line}, column ${valid.err.col}): ${valid.err.msg}`,
    )
  }
  try {
    const document = parser.parse(repaired) as Node
    return { ok: true, value: document[root] }
  } catch (error) {
    return fail(`the <${root}> block could not be parsed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function readFindings(root: unknown, options: FindingsParseOptions): FindingsParse {
  if (typeof root === "string" || root === undefined) {
    if (root === undefined || root.trim() === "") return { ok: true, findings: [] }
    return fail(
      "the <findings> block holds text but no <finding> elements: put each finding in a <finding> element, or write <findings/> when there is nothing to report",
    )
  }
  if (!isNode(root)) return fail("the <findings> block could not be read")
  const items = Array.isArray(root.finding) ? (root.finding as unknown[]) : []
  const loose = textOf(root["#text"]).trim()
  if (items.length === 0 && loose !== "") {
    return fail(
      "the <findings> block holds text but no <finding> elements: put each finding in a <finding> element, or write <findings/> when there is nothing to report",
    )
  }
  const findings: Finding[] = []
  const errors: string[] = []
  items.forEach((item, index) => {
    const read = readFinding(item, options)
    if (read.ok) findings.push(read.value)
    else errors.push(`finding ${index + 1}: ${read.error}`)
  })
  if (errors.length > 0) return fail(summarise(errors))
  return { ok: true, findings }
}

function readReview(root: unknown, options: FindingsParseOptions, outside: string): ReviewParse {
  if (!isNode(root))
    return fail("<summary> is missing: the review must start with <summary>two or three sentences</summary>")
  const summary = leaf(root, "summary")
  if (!summary.ok) return summary
  if (summary.value === "")
    return fail("<summary> is missing or empty: the review must start with <summary>two or three sentences</summary>")
  const answer = leaf(root, "answer")
  if (!answer.ok) return answer
  if (Array.isArray(root.findings))
    return fail("the review has more than one <findings> element: put every finding in one <findings> block")
  if (root.findings === undefined && /<finding[\s/>]/.test(outside)) {
    return fail("the <findings> block is outside <review>: put it between </summary> and </review>")
  }
  const findings = readFindings(root.findings, options)
  if (!findings.ok) return findings
  return {
    ok: true,
    review: { summary: summary.value, findings: findings.findings, answer: answer.value === "" ? null : answer.value },
  }
}

function readFinding(item: unknown, options: FindingsParseOptions): Result<Finding> {
  if (!isNode(item)) {
    return fail(
      "give severity, file, line and category as attributes of <finding>, and the title and body as <title> and <body> elements",
    )
  }
  const errors: string[] = []
  const field = (name: string): string | undefined => {
    const attribute = item[`@${name}`]
    if (attribute !== undefined) return decode(textOf(attribute)).trim()
    const child = leaf(item, name)
    if (!child.ok) {
      errors.push(child.error)
      return undefined
    }
    return item[name] === undefined ? undefined : child.value
  }

  const severityText = field("severity")
  const severity =
    severityText === undefined || severityText === "" ? null : Severity.safeParse(severityText.toLowerCase())
  if (severity === null) errors.push(`severity is missing (one of ${severityList})`)
  else if (!severity.success) errors.push(`severity ${JSON.stringify(severityText)} is not one of ${severityList}`)

  const file = (field("file") ?? "").replace(/^(?:\.\/)+/, "")
  if (file === "") errors.push(`file is missing (the changed file's path, e.g. file="src/db.ts")`)

  const lineText = field("line") ?? ""
  const line = lineText === "" ? null : /^\d+$/.test(lineText) && Number(lineText) > 0 ? Number(lineText) : undefined
  if (line === undefined) {
    errors.push(
      `line ${JSON.stringify(lineText)} is not a line number (one positive integer, e.g. the first line of a range; leave it out for a file-level finding)`,
    )
  }

  const categoryText = field("category") || options.defaultCategory || ""
  if (categoryText === "") errors.push(`category is missing (e.g. category="security")`)

  const title = leaf(item, "title")
  if (!title.ok) errors.push(title.error)
  else if (title.value === "") errors.push("<title> is missing or empty")
  const body = leaf(item, "body")
  if (!body.ok) errors.push(body.error)

  const thread = field("thread") ?? ""
  const raisedBy = field("raised_by") ?? ""
  const suggestion = readSuggestion(item, line ?? null)
  if (!suggestion.ok) errors.push(suggestion.error)

  if (errors.length > 0) return fail(errors.join(", "))
  const candidate = Finding.safeParse({
    severity: severity?.success ? severity.data : undefined,
    file,
    line,
    category: normalizeCategory(categoryText),
    title: title.ok ? title.value : "",
    body: body.ok ? body.value : "",
    ...(thread === "" ? {} : { thread }),
    ...(raisedBy === "" ? {} : { raisedBy }),
    ...(suggestion.ok && suggestion.value ? { suggestion: suggestion.value } : {}),
  })
  if (!candidate.success)
    return fail(candidate.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join(", "))
  return { ok: true, value: candidate.data }
}

/**
 * The optional `<suggestion start_line="N">` of a finding: replacement text for lines N to the
 * finding's line, taken verbatim (indentation kept; only the newline after the opening tag and the
 * one before the closing tag are dropped). An empty suggestion is no suggestion.
 */
function readSuggestion(item: Node, line: number | null): Result<Suggestion | null> {
  const value = item.suggestion
  if (value === undefined) return { ok: true, value: null }
  if (Array.isArray(value)) return fail("more than one <suggestion>")
  const node: Node = typeof value === "string" ? { "#text": value } : isNode(value) ? value : {}
  const nested = Object.keys(node).find((key) => key !== "#text" && !key.startsWith("@"))
  if (nested) return fail(`<suggestion> must hold only the replacement text, not a <${nested}> element`)
  const text = decode(textOf(node["#text"]))
    .replace(/^[ \t]*\r?\n/, "")
    .replace(/\r?\n[ \t]*$/, "")
  if (text.trim() === "") return { ok: true, value: null }
  if (line === null) return fail("a <suggestion> needs the finding's line (the last line it replaces)")
  const startText = decode(textOf(node["@start_line"])).trim()
  const startLine = startText === "" ? line : /^\d+$/.test(startText) ? Number(startText) : 0
  if (startLine < 1 || startLine > line)
    return fail(`<suggestion start_line="${startText}"> must be a line number from 1 up to the finding's line ${line}`)
  const lines = text.split(/\r?\n/)
  if (lines.length > maxSuggestionLines)
    return fail(`<suggestion> has ${lines.length} lines; at most ${maxSuggestionLines}, or describe the change instead`)
  return { ok: true, value: { startLine, lines } }
}

// The text of a leaf element (title, body, summary, answer), decoded and trimmed; "" when absent.
function leaf(node: Node, name: string): Result<string> {
  const value = node[name]
  if (value === undefined) return { ok: true, value: "" }
  if (Array.isArray(value)) return fail(`more than one <${name}>`)
  if (typeof value === "string") return { ok: true, value: decode(value).trim() }
  if (isNode(value)) {
    const nested = Object.keys(value).find((key) => key !== "#text" && !key.startsWith("@"))
    if (nested) return fail(`<${name}> must hold only text, not a <${nested}> element`)
    return { ok: true, value: decode(textOf(value["#text"])).trim() }
  }
  return { ok: true, value: "" }
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  return ""
}

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

function summarise(errors: string[]): string {
  const shown = errors.slice(0, maxErrors).join("; ")
  return errors.length > maxErrors ? `${shown}; and ${errors.length - maxErrors} more` : shown
}

const reference = /&(?:(amp|lt|gt|quot|apos)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));/g
const builtin: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }

function decode(text: string): string {
  return text.replace(
    reference,
    (match, name: string | undefined, decimal: string | undefined, hex: string | undefined) => {
      if (name) return builtin[name]!
      const code = decimal ? Number.parseInt(decimal, 10) : Number.parseInt(hex!, 16)
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return match
      return String.fromCodePoint(code)
    },
  )
}

const leafTags = ["title", "body", "summary", "answer", "suggestion"]
const leafOpen = new RegExp(`<(${leafTags.join("|")})(?:\\s[^<>]*)?>`, "y")
const wellFormedReference = /&(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});/y

/**
 * Fixes the slips a model makes that have only one reading: a `&` that starts no entity becomes
 * `&amp;`; inside the text-only elements (title, body, summary, answer, suggestion) a `<` that does not close
 * the element is text and becomes `&lt;`. CDATA sections become escaped text, so that every piece
 * of text reaches `decode` in the same form.
 */
function repair(xml: string): string {
  let out = ""
  let index = 0
  let inside: string | null = null
  while (index < xml.length) {
    if (xml.startsWith("<![CDATA[", index)) {
      const end = xml.indexOf("]]>", index + 9)
      if (end < 0) return out + xml.slice(index)
      out += escapeXml(xml.slice(index + 9, end))
      index = end + 3
      continue
    }
    const char = xml[index]!
    if (char === "&") {
      wellFormedReference.lastIndex = index
      out += wellFormedReference.test(xml) ? "&" : "&amp;"
      index += 1
      continue
    }
    if (char === "<" && inside !== null) {
      const close = new RegExp(`</${inside}\\s*>`, "y")
      close.lastIndex = index
      const match = close.exec(xml)
      if (match) {
        out += match[0]
        index += match[0].length
        inside = null
        continue
      }
      out += "&lt;"
      index += 1
      continue
    }
    if (char === "<") {
      leafOpen.lastIndex = index
      const match = leafOpen.exec(xml)
      if (match && !/\/\s*>$/.test(match[0])) {
        out += match[0]
        index += match[0].length
        inside = match[1]!
        continue
      }
    }
    out += char
    index += 1
  }
  return out
}
