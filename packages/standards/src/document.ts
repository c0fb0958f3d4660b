// yaml is loaded the first time a document has front matter: most have none, and it costs every
// planning run tens of milliseconds to load.
let yaml: typeof import("yaml") | undefined
function parseYaml(text: string): unknown {
  yaml ??= require("yaml") as typeof import("yaml")
  return yaml.parse(text)
}

/** One engineering standard, ready to be scoped and injected. */
export interface Standard {
  /** "ENG-014": from front matter, the heading, or the file name. */
  id: string
  title: string
  /** Path globs (repository-relative) the standard applies to; empty = every change. */
  paths: string[]
  /** The markdown text of the standard (front matter removed). */
  body: string
  /** Where it was read from: a repository path, an absolute path or a URL (redacted). */
  source: string
}

/** A document that declared itself out of force (withdrawn, superseded, draft). */
export interface SkippedStandard {
  id: string
  status: string
  source: string
}

/** What one markdown document yielded. */
export interface ParsedDocument {
  standards: Standard[]
  skipped: SkippedStandard[]
  warnings: string[]
}

/** Ids look like "ENG-014", "SEC-3", "API2-101": capitals and digits, a dash, a number. */
export const idPattern = /^([A-Z][A-Z0-9]*-\d+)\b/
/** Statuses whose documents are not in force and never injected. */
export const inactiveStatuses = ["withdrawn", "superseded", "draft"] as const

const explicitId = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const headingLine = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/
const fence = /^ {0,3}(`{3,}|~{3,})/

/**
 * Parses a markdown document into standards. The id comes from front matter `id:`, else from
 * headings that start with one (`# ENG-014: Timeouts`; several such headings at the same level
 * make several standards), else from the file name (`name`), with a warning when the name holds
 * no id either. Front matter `title`, `paths`/`scope` (globs) and `status` are read; documents
 * whose status is withdrawn, superseded or draft come back in `skipped`. With `idRequired`, a
 * document without an id of its own yields nothing (no file-name id, no warning).
 */
export function parseStandards(
  text: string,
  source: string,
  name: string,
  options: { idRequired?: boolean } = {},
): ParsedDocument {
  const warnings: string[] = []
  const { meta, body } = splitFrontMatter(text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n"), source, warnings)
  const status = typeof meta.status === "string" ? meta.status.trim() : null
  const paths = readPaths(meta, source, warnings)
  const title = typeof meta.title === "string" || typeof meta.title === "number" ? oneLine(String(meta.title)) : null
  const declared = readId(meta, source, warnings)
  const headings = findHeadings(body)

  let parts: { id: string; title: string; body: string }[]
  if (declared !== null) {
    const first = headings[0]
    parts = [{ id: declared, title: title ?? (first ? headingTitle(first.text, declared) : declared), body }]
  } else {
    const withId = headings.filter((heading) => idPattern.test(heading.text))
    const level = withId[0]?.level
    const starts = withId.filter((heading) => heading.level === level)
    if (starts.length > 0) {
      parts = starts.map((heading, index) => {
        const id = idPattern.exec(heading.text)![1]!
        const end = starts[index + 1]?.offset ?? body.length
        return {
          id,
          title: starts.length === 1 && title ? title : headingTitle(heading.text, id),
          body: body.slice(heading.offset, end),
        }
      })
    } else {
      // A folder's README describes the folder; it is a standard only when it says which.
      if (options.idRequired) return { standards: [], skipped: [], warnings }
      const id = idFromName(name)
      if (!id.fromPattern)
        warnings.push(`${source}: no id in front matter or in a heading; using "${id.id}" from the file name`)
      const first = headings[0]
      parts = [{ id: id.id, title: title ?? (first ? oneLine(first.text) : id.id), body }]
    }
  }

  const inactive =
    status !== null && (inactiveStatuses as readonly string[]).includes(status.toLowerCase().split(/[\s:(,;]/)[0] ?? "")
  if (inactive) return { standards: [], skipped: parts.map(({ id }) => ({ id, status: status!, source })), warnings }
  return {
    standards: parts.map((part) => ({
      id: part.id,
      title: part.title || part.id,
      paths,
      body: part.body.trim(),
      source,
    })),
    skipped: [],
    warnings,
  }
}

function splitFrontMatter(
  text: string,
  source: string,
  warnings: string[],
): { meta: Record<string, unknown>; body: string } {
  if (!text.startsWith("---\n")) return { meta: {}, body: text }
  const end = /^(?:---|\.\.\.)[ \t]*$/m
  const rest = text.slice(4)
  const match = end.exec(rest)
  if (!match) return { meta: {}, body: text }
  const body = rest.slice(match.index + match[0].length).replace(/^\n/, "")
  try {
    const meta: unknown = parseYaml(rest.slice(0, match.index))
    if (meta === null || meta === undefined) return { meta: {}, body }
    if (typeof meta !== "object" || Array.isArray(meta)) {
      warnings.push(`${source}: front matter is not a mapping; ignored`)
      return { meta: {}, body }
    }
    return { meta: meta as Record<string, unknown>, body }
  } catch (cause) {
    warnings.push(`${source}: front matter is not valid YAML (${(cause as Error).message.split("\n")[0]}); ignored`)
    return { meta: {}, body }
  }
}

function readId(meta: Record<string, unknown>, source: string, warnings: string[]): string | null {
  if (meta.id === undefined || meta.id === null) return null
  const id = typeof meta.id === "string" || typeof meta.id === "number" ? String(meta.id).trim() : ""
  if (explicitId.test(id)) return id
  warnings.push(
    `${source}: front matter id ${JSON.stringify(meta.id).slice(0, 80)} is not a usable id (letters, digits, ".", "_", "-"); ignored`,
  )
  return null
}

// `paths` and `scope` both hold globs (a string or a list). An entry that reads like prose rather
// than a path would silently match nothing, so it is dropped with a warning instead.
function readPaths(meta: Record<string, unknown>, source: string, warnings: string[]): string[] {
  const globs: string[] = []
  for (const key of ["paths", "scope"]) {
    const value = meta[key]
    if (value === undefined || value === null) continue
    const entries = Array.isArray(value) ? value : [value]
    for (const entry of entries) {
      if (typeof entry !== "string" || entry.trim() === "") {
        warnings.push(`${source}: ${key} entry ${JSON.stringify(entry)?.slice(0, 80)} is not a glob; ignored`)
        continue
      }
      const glob = entry.trim()
      if (/\s/.test(glob) && !/[/*?.]/.test(glob)) {
        warnings.push(`${source}: ${key} entry "${glob.slice(0, 80)}" reads like prose, not a path glob; ignored`)
        continue
      }
      globs.push(normalizeGlob(glob))
    }
  }
  return [...new Set(globs)]
}

/** "./src/api/" → "src/api/**"; a pattern without "/" ("*.sql") matches at any depth. */
export function normalizeGlob(glob: string): string {
  let pattern = glob.replace(/^\.\//, "").replace(/^\/+/, "")
  if (pattern.endsWith("/")) pattern = `${pattern}**`
  return pattern.includes("/") ? pattern : `**/${pattern}`
}

interface Heading {
  level: number
  text: string
  offset: number
}

// ATX headings outside fenced code blocks, with their offsets in the body.
function findHeadings(body: string): Heading[] {
  const headings: Heading[] = []
  let open: string | null = null
  let offset = 0
  for (const line of body.split("\n")) {
    const fenced = fence.exec(line)
    if (fenced) {
      const marker = fenced[1]!
      if (open === null) open = marker
      else if (marker[0] === open[0] && marker.length >= open.length) open = null
    } else if (open === null) {
      const heading = headingLine.exec(line)
      if (heading) headings.push({ level: heading[1]!.length, text: oneLine(heading[2]!), offset })
    }
    offset += line.length + 1
  }
  return headings
}

function headingTitle(text: string, id: string): string {
  const rest = text.startsWith(id) ? text.slice(id.length) : text
  return oneLine(rest.replace(/^[\s:.\-–—|]+/, "")) || id
}

function idFromName(name: string): { id: string; fromPattern: boolean } {
  const stem = name.replace(/\.(md|markdown)$/i, "")
  const match = /^([A-Za-z][A-Za-z0-9]*-\d+)(?![0-9])/.exec(stem)
  if (match) return { id: match[1]!.toUpperCase(), fromPattern: true }
  const slug = stem
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64)
  return { id: slug || "STANDARD", fromPattern: false }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 200)
}
