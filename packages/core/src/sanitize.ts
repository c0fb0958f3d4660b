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

// Characters that render as nothing but split a tag name so a plain regex misses it; bidi controls
// that make text read differently than it is stored.
const invisible = /[\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180E\u200B-\u200F\u202A-\u202E\u2060-\u206F\u3164\uFE00-\uFE0F\uFEFF\uFFA0]/g
const named: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'", sol: "/", nbsp: " " }
const entity = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(lt|gt|amp|quot|apos|sol|nbsp))(?:;|(?![A-Za-z0-9]))/gi
const tagPattern = new RegExp(
  `<\\s*/?\\s*(${boundaryTags.map((tag) => [...tag].map(escapeRegExp).join("\\s*")).join("|")})\\s*(?=[\\s/>]|$)[^<>]*(?:>|$)`,
  "gi",
)

/**
 * Removes boundary tags from untrusted text, insensitive to case, whitespace, HTML entities
 * (named, decimal, hex, nested), Unicode look-alikes (NFKC) and invisible characters. Entities are
 * decoded in the result; callers escape the text for the XML they embed it in.
 */
export function sanitizeUntrusted(input: string): Sanitized {
  const removed: string[] = []
  let text = decodeEntities(input.replace(invisible, "")).normalize("NFKC").replace(invisible, "")
  for (;;) {
    const next = text.replace(tagPattern, (match) => {
      removed.push(match.replace(/\s+/g, " ").slice(0, 80))
      return ""
    })
    if (next === text) break
    text = next
  }
  return { text, removed }
}

/** Escapes text for an XML element body. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
}

/** Escapes text for a double-quoted XML attribute (newlines kept as character references). */
export function escapeAttribute(text: string): string {
  return escapeXml(text).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;")
}

// Decodes until nothing changes, so "&amp;lt;" cannot smuggle a "<" past one round of decoding.
function decodeEntities(text: string): string {
  let current = text
  for (let round = 0; round < 8; round += 1) {
    const next = current.replace(entity, (match, decimal: string | undefined, hex: string | undefined, name: string | undefined) => {
      if (name) return named[name.toLowerCase()] ?? match
      const code = decimal ? Number.parseInt(decimal, 10) : Number.parseInt(hex!, 16)
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return ""
      return String.fromCodePoint(code)
    })
    if (next === current) return next
    current = next
  }
  return current
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
}

export * as Sanitize from "./sanitize"
