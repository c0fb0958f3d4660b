import { compileGlobs, escapeAttribute, type PromptSection, sanitizeUntrusted } from "@opencode-reviewer/core"
import type { Standard } from "./document"

/** Which standards go into the prompt, which stay out for size, and which do not apply. */
export interface Selection {
  /** In scope and within the budget, sorted by id. */
  injected: RenderedStandard[]
  /** In scope but past the budget, sorted by id. */
  overflow: RenderedStandard[]
  /** Scoped to paths this change does not touch. */
  outOfScope: Standard[]
}

/** A standard with its prompt section (sanitised) and what sanitising removed. */
export interface RenderedStandard {
  standard: Standard
  section: PromptSection
  bytes: number
  removed: string[]
}

/** The prompt order of the standards sections: before default-ordered sections (AGENTS.md). */
export const standardsOrder = 50

/**
 * Keeps the standards that apply to the change (no `paths`, or a glob matching one of
 * `changedPaths`), sorted by id so the prompt is the same for the same standards, and cuts the
 * list where the rendered sections would pass `maxBytes`: that standard and every later one
 * overflow, so what is injected is always a prefix of the same order.
 */
export function selectStandards(
  standards: readonly Standard[],
  changedPaths: readonly string[],
  maxBytes: number,
): Selection {
  const sorted = [...standards].sort((a, b) => compareIds(a.id, b.id))
  const outOfScope: Standard[] = []
  const injected: RenderedStandard[] = []
  const overflow: RenderedStandard[] = []
  let total = 0
  for (const standard of sorted) {
    if (!applies(standard, changedPaths)) {
      outOfScope.push(standard)
      continue
    }
    const rendered = renderStandard(standard)
    if (overflow.length === 0 && total + rendered.bytes <= maxBytes) {
      injected.push(rendered)
      total += rendered.bytes
    } else {
      overflow.push(rendered)
    }
  }
  return { injected, overflow, outOfScope }
}

/** Natural order of ids: ENG-2 before ENG-10, then plain text order. */
export function compareIds(a: string, b: string): number {
  const split = (id: string) => /^(.*?)(\d+)$/.exec(id)
  const left = split(a)
  const right = split(b)
  if (left && right && left[1] === right[1]) return Number(left[2]) - Number(right[2]) || (a < b ? -1 : a > b ? 1 : 0)
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * The prompt section of one standard: titled with its id and title, the document inside
 * `<standard>` tags. The text is semi-trusted (anyone who can edit the standards wrote it), so it
 * goes through sanitizeUntrusted: it cannot close the tag it sits in, nor any other boundary tag.
 */
export function renderStandard(standard: Standard): RenderedStandard {
  const body = sanitizeUntrusted(standard.body)
  const title = sanitizeUntrusted(standard.title)
  const source = sanitizeUntrusted(standard.source)
  const heading = title.text
    .replace(/\s+/g, " ")
    .replace(/^#+\s*/, "")
    .trim()
  const attributes = [`id="${escapeAttribute(standard.id)}"`, `source="${escapeAttribute(source.text)}"`]
  if (standard.paths.length > 0) attributes.push(`applies-to="${escapeAttribute(standard.paths.join(", "))}"`)
  const section: PromptSection = {
    title: heading && heading !== standard.id ? `${standard.id}: ${heading}` : standard.id,
    body: `<standard ${attributes.join(" ")}>\n${body.text.trim()}\n</standard>`,
    order: standardsOrder,
  }
  return {
    standard,
    section,
    bytes: Buffer.byteLength(section.title) + Buffer.byteLength(section.body),
    removed: [...body.removed, ...title.removed, ...source.removed],
  }
}

function applies(standard: Standard, changedPaths: readonly string[]): boolean {
  if (standard.paths.length === 0) return true
  const globs = compileGlobs(standard.paths)
  return changedPaths.some((path) => globs.match(path) !== null)
}
