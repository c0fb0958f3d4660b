// A small line scanner for AGENTS.md: enough Markdown to tell prose from code, links and headings.
// It never throws and never parses more than it needs; the checks read only what it returns.

/** One line of the file with what the checks need to know about it. */
export interface ScannedLine {
  /** 1-based. */
  number: number
  text: string
  /** Inside a fenced code block, fence lines included. */
  code: boolean
  /** Inside an HTML comment. */
  comment: boolean
  /** ATX heading level (1–6), or 0. */
  heading: number
  /** The text with code spans, links, URLs, HTML comments and inline HTML removed (blank for code lines). */
  prose: string
  /** Contents of the inline code spans on this line. */
  spans: string[]
  /** Index of the paragraph or list item the line belongs to (-1 for blank, code and heading lines). */
  block: number
  /** Index of the heading section the line is in (0 before the first heading). */
  section: number
}

/** The scanned file: its lines plus every piece of text that could be a runnable command. */
export interface ScannedFile {
  lines: ScannedLine[]
  /** Code span contents, fenced block lines and `$ ` prompt lines, one entry each. */
  commands: string[]
  /** Per block index: whether the paragraph or list item holds a code span. */
  blockHasCode: boolean[]
  /** Per section index: whether the section holds a code span or a fenced block. */
  sectionHasCode: boolean[]
}

const fence = /^ {0,3}(`{3,}|~{3,})/
const heading = /^ {0,3}(#{1,6})(?:\s|$)/
const listItem = /^\s*(?:[-*+]|\d{1,9}[.)])\s+/
const codeSpan = /(`+)([\s\S]*?[^`])\1(?!`)/g
const link = /!?\[((?:[^\]\\]|\\.)*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g
const referenceLink = /!?\[((?:[^\]\\]|\\.)*)\]\[[^\]]*\]/g
const referenceDefinition = /^ {0,3}\[[^\]]+\]:\s*\S+/
const autolink = /<(?:https?|mailto):[^>\s]*>/gi
const url = /\b(?:https?:\/\/|www\.)[^\s)>\]]+/gi
const inlineHtml = /<\/?[A-Za-z][^<>]*>/g

/** Splits a file into lines and classifies each; `\r\n` and a final newline are handled. */
export function scanMarkdown(text: string): ScannedFile {
  const raw = text.replace(/\r\n?/g, "\n").split("\n")
  if (raw.length > 0 && raw.at(-1) === "") raw.pop()
  const lines: ScannedLine[] = []
  const commands: string[] = []
  const blockHasCode: boolean[] = []
  const sectionHasCode: boolean[] = [false]
  let open: string | null = null
  let inComment = false
  let block = -1
  let section = 0
  raw.forEach((line, index) => {
    const number = index + 1
    const base = { number, text: line, heading: 0, spans: [] as string[], section }
    if (open !== null) {
      const closing = fence.exec(line)
      if (closing && closing[1]![0] === open[0] && closing[1]!.length >= open.length && line.trim() === closing[1])
        open = null
      else if (line.trim() !== "") commands.push(line.trim())
      sectionHasCode[section] = true
      block = -1
      lines.push({ ...base, code: true, comment: false, prose: "", block: -1 })
      return
    }
    const opening = fence.exec(line)
    if (opening && !inComment) {
      open = opening[1]!
      sectionHasCode[section] = true
      block = -1
      lines.push({ ...base, code: true, comment: false, prose: "", block: -1 })
      return
    }
    // HTML comments may span lines; whatever they hold is not read by anyone.
    let visible = ""
    let rest = line
    let commented = inComment
    while (rest !== "") {
      if (inComment) {
        const end = rest.indexOf("-->")
        if (end < 0) {
          rest = ""
          break
        }
        rest = rest.slice(end + 3)
        inComment = false
      } else {
        const start = rest.indexOf("<!--")
        if (start < 0) {
          visible += rest
          break
        }
        visible += rest.slice(0, start)
        rest = rest.slice(start + 4)
        inComment = true
        commented = true
      }
    }
    if (visible.trim() === "") {
      block = -1
      lines.push({ ...base, code: false, comment: commented, prose: "", block: -1 })
      return
    }
    const level = heading.exec(visible)?.[1]?.length ?? 0
    if (level > 0) {
      section += 1
      sectionHasCode[section] = false
      block = -1
    } else if (block < 0 || listItem.test(visible)) {
      block = blockHasCode.length
      blockHasCode.push(false)
    }
    const spans = [...visible.matchAll(codeSpan)].map((match) => match[2]!.trim()).filter((span) => span !== "")
    if (spans.length > 0) {
      commands.push(...spans)
      sectionHasCode[section] = true
      if (block >= 0) blockHasCode[block] = true
    }
    const prompt = /^\s*\$\s+(\S.*)$/.exec(visible)
    if (prompt) commands.push(prompt[1]!)
    lines.push({
      number,
      text: line,
      code: false,
      comment: commented,
      heading: level,
      prose: referenceDefinition.test(visible) ? "" : proseOf(visible),
      spans,
      block: level > 0 ? -1 : block,
      section,
    })
  })
  return { lines, commands, blockHasCode, sectionHasCode }
}

// Code spans, links (text and target), URLs and inline HTML become spaces, so words on either side
// never join into a new word.
function proseOf(line: string): string {
  return line
    .replace(codeSpan, (match) => " ".repeat(match.length))
    .replace(link, (match) => " ".repeat(match.length))
    .replace(referenceLink, (match) => " ".repeat(match.length))
    .replace(autolink, (match) => " ".repeat(match.length))
    .replace(url, (match) => " ".repeat(match.length))
    .replace(inlineHtml, (match) => " ".repeat(match.length))
}
