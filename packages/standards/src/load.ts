import { lstat, readdir, readFile } from "node:fs/promises"
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path"
import * as z from "zod"
import { type FetchOptions, fetchText, redactUrl } from "./fetch"

/** One markdown document as read from its source. */
export interface SourceDocument {
  text: string
  /** Where it came from, for messages and the prompt: repository path, absolute path or redacted URL. */
  source: string
  /** Its file name, for ids derived from it and README detection. */
  name: string
}

/** What loading produced. `loaded` is false when the source itself could not be read at all. */
export interface LoadResult {
  /** The configured source as users will recognise it ("docs/standards/ on the target branch"). */
  where: string
  loaded: boolean
  documents: SourceDocument[]
  /** One reason per document (or for the whole source) that could not be read. */
  failures: string[]
  warnings: string[]
}

/** Where trusted files come from and how remote documents are fetched. */
export interface LoadOptions {
  /** The checkout; an absolute `standards` path inside it is read from the target branch instead. */
  repoDir: string
  /** A file as it is on the target branch (VcsProvider.readTrustedFile). */
  readTrustedFile(path: string): Promise<string | null>
  /** Files under a folder on the target branch (VcsProvider.listTrustedFiles); without it only a single file works. */
  listTrustedFiles?: ((dir: string) => Promise<string[] | null>) | undefined
  fetch?: FetchOptions["fetch"]
  /** Per request, body included (default 3000 ms). */
  timeoutMs?: number
  /** Per document (default 512 KiB). */
  maxDocumentBytes?: number
  /** Documents read from one source at most (default 200). */
  maxDocuments?: number
  /** Budget for a URL source as a whole, index and documents (default 10 000 ms). */
  totalTimeoutMs?: number
  signal?: AbortSignal
}

/**
 * The JSON index a `standards` URL may point to: a list of markdown document URLs, each absolute
 * or relative to the index; either a bare array or `{ "standards": [...] }`. An entry is a string
 * or `{ "url": "..." }`.
 */
export const StandardsIndex = z.union([
  z.array(z.union([z.string().min(1), z.object({ url: z.string().min(1) })])),
  z.object({
    version: z.literal(1).optional(),
    standards: z.array(z.union([z.string().min(1), z.object({ url: z.string().min(1) })])),
  }),
])
export type StandardsIndex = z.infer<typeof StandardsIndex>

export const defaultMaxDocuments = 200
export const defaultTotalTimeoutMs = 10_000
const markdown = /\.(md|markdown)$/i
const concurrency = 6

/**
 * Reads the documents behind config `standards`: an http(s) URL (a markdown document, or a JSON
 * index of documents), an absolute folder or file on the runner, or a folder or file relative to
 * the repository, read from the target branch, never from the change under review.
 */
export async function loadDocuments(standards: string, options: LoadOptions): Promise<LoadResult> {
  const value = standards.trim()
  if (/^https?:\/\//i.test(value)) return loadUrl(value, options)
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    return failed(value, `"${redactUrl(value) ?? value.split("?")[0]}" is neither an http(s) URL nor a path`)
  }
  if (isAbsolute(value)) {
    // The checkout holds the change under review: a path into it is read from the target branch.
    const inside = relative(resolve(options.repoDir), resolve(value))
    if (!inside.startsWith("..") && !isAbsolute(inside))
      return loadRepository(inside.split(sep).join("/") || ".", options)
    return loadDirectory(resolve(value), options)
  }
  return loadRepository(value, options)
}

async function loadRepository(path: string, options: LoadOptions): Promise<LoadResult> {
  const folder = path.replace(/^\.\/+/, "").replace(/\/+$/, "") || "."
  const where = `${folder === "." ? "the repository root" : folder} on the target branch`
  if (folder.split("/").includes("..")) return failed(where, "the path leaves the repository")
  const files = options.listTrustedFiles ? await options.listTrustedFiles(folder) : null
  if (files === null) {
    if (!markdown.test(folder)) {
      const why = options.listTrustedFiles
        ? "no such folder"
        : "this VCS provider cannot list folders; name a markdown file instead"
      return failed(where, why)
    }
    const text = await options.readTrustedFile(folder)
    if (text === null) return failed(where, "no such file")
    return checked(where, [{ text, source: folder, name: basename(folder) }], [], options)
  }
  const chosen = pick(files.filter((file) => markdown.test(file)).sort(), where, options)
  if (chosen.paths.length === 0) return failed(where, "no markdown documents in the folder")
  const read = await mapLimited(chosen.paths, async (file) => ({ file, text: await options.readTrustedFile(file) }))
  const documents = read.flatMap(({ file, text }) =>
    text === null ? [] : [{ text, source: file, name: basename(file) }],
  )
  const failures = read.flatMap(({ file, text }) => (text === null ? [`${file}: listed but not readable`] : []))
  return checked(where, documents, failures, options, chosen.warnings)
}

async function loadDirectory(path: string, options: LoadOptions): Promise<LoadResult> {
  const where = path
  const info = await lstat(path).catch(() => null)
  if (info === null) return failed(where, "no such file or folder on this runner")
  if (info.isFile()) {
    if (!markdown.test(path)) return failed(where, "not a markdown (.md) file")
    return checked(where, [{ text: await readFile(path, "utf8"), source: path, name: basename(path) }], [], options)
  }
  if (!info.isDirectory()) return failed(where, "neither a file nor a folder")
  // Regular files only: a symlink named *.md could point at anything on the runner.
  const entries = await readdir(path, { recursive: true, withFileTypes: true })
  const files = entries
    .filter((entry) => entry.isFile() && markdown.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
  if (files.length === 0) return failed(where, "no markdown documents in the folder")
  const chosen = pick(files, where, options)
  const read = await mapLimited(chosen.paths, async (file) => ({
    file,
    text: await readFile(file, "utf8").catch(() => null),
  }))
  const documents = read.flatMap(({ file, text }) =>
    text === null ? [] : [{ text, source: file, name: basename(file) }],
  )
  const failures = read.flatMap(({ file, text }) => (text === null ? [`${file}: not readable`] : []))
  return checked(where, documents, failures, options, chosen.warnings)
}

async function loadUrl(url: string, options: LoadOptions): Promise<LoadResult> {
  const where = redactUrl(url) ?? url
  // 3 s per request could still add up over a long index of a hanging server. A timer of our own,
  // not AbortSignal.timeout: Bun 1.3 never fires that one once its last listener was removed and
  // another added, which is exactly what consecutive requests do.
  const budgetMs = options.totalTimeoutMs ?? defaultTotalTimeoutMs
  const total = new AbortController()
  const timer = setTimeout(
    () => total.abort(new Error(`over the ${budgetMs} ms budget for the whole source`)),
    budgetMs,
  )
  try {
    return await loadUrlWithin(
      url,
      where,
      options,
      options.signal ? AbortSignal.any([options.signal, total.signal]) : total.signal,
    )
  } finally {
    clearTimeout(timer)
  }
}

async function loadUrlWithin(
  url: string,
  where: string,
  options: LoadOptions,
  signal: AbortSignal,
): Promise<LoadResult> {
  const fetchOptions = {
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.maxDocumentBytes !== undefined ? { maxBytes: options.maxDocumentBytes } : {}),
    signal,
  }
  const first = await fetchText(url, fetchOptions)
  if (!first.ok) return { where, loaded: false, documents: [], failures: [first.reason], warnings: [] }
  if (!isJson(first.contentType, first.url)) {
    return checked(
      where,
      [{ text: first.text, source: redactUrl(first.url) ?? where, name: lastSegment(first.url) }],
      [],
      options,
    )
  }

  const index = parseIndex(first.text)
  if (!index.ok) return failed(where, `not a standards index: ${index.problem}`)
  const warnings: string[] = []
  const urls = index.entries.flatMap((entry) => {
    const resolved = resolveEntry(entry, first.url)
    if (resolved === null)
      warnings.push(`${where}: index entry ${JSON.stringify(entry).slice(0, 120)} is not an http(s) URL; ignored`)
    return resolved === null ? [] : [resolved]
  })
  if (urls.length === 0) return failed(where, "the index lists no documents")
  const chosen = pick(urls, where, options)
  warnings.push(...chosen.warnings)
  const fetched = await mapLimited(chosen.paths, (entry) => fetchText(entry, fetchOptions))
  const documents = fetched.flatMap((result) =>
    result.ok
      ? [{ text: result.text, source: redactUrl(result.url) ?? result.url, name: lastSegment(result.url) }]
      : [],
  )
  const failures = fetched.flatMap((result) => (result.ok ? [] : [result.reason]))
  if (documents.length === 0) return { where, loaded: false, documents: [], failures, warnings }
  return { where, loaded: true, documents, failures, warnings }
}

function parseIndex(text: string): { ok: true; entries: string[] } | { ok: false; problem: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    return { ok: false, problem: `invalid JSON (${(cause as Error).message})` }
  }
  const parsed = StandardsIndex.safeParse(value)
  if (!parsed.success) {
    return {
      ok: false,
      problem: parsed.error.issues
        .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
        .slice(0, 3)
        .join("; "),
    }
  }
  const list = Array.isArray(parsed.data) ? parsed.data : parsed.data.standards
  return { ok: true, entries: list.map((entry) => (typeof entry === "string" ? entry : entry.url)) }
}

function resolveEntry(entry: string, base: string): string | null {
  try {
    const resolved = new URL(entry, base)
    return resolved.protocol === "http:" || resolved.protocol === "https:" ? resolved.href : null
  } catch {
    return null
  }
}

// JSON by its content type, or by a .json name when the server says nothing useful.
function isJson(contentType: string, url: string): boolean {
  const type = contentType.toLowerCase()
  if (type.includes("json")) return true
  if (type.startsWith("text/markdown") || type.startsWith("text/x-markdown")) return false
  return /\.json$/i.test(new URL(url).pathname)
}

function lastSegment(url: string): string {
  const path = new URL(url).pathname
  return decodeURIComponent(path.slice(path.lastIndexOf("/") + 1)) || "index"
}

function pick(paths: string[], where: string, options: LoadOptions): { paths: string[]; warnings: string[] } {
  const max = options.maxDocuments ?? defaultMaxDocuments
  if (paths.length <= max) return { paths, warnings: [] }
  return {
    paths: paths.slice(0, max),
    warnings: [`${where}: ${paths.length} documents, only the first ${max} are read`],
  }
}

function checked(
  where: string,
  documents: SourceDocument[],
  failures: string[],
  options: LoadOptions,
  warnings: string[] = [],
): LoadResult {
  const max = options.maxDocumentBytes ?? 512 * 1024
  const kept = documents.filter((document) => {
    if (Buffer.byteLength(document.text) <= max) return true
    failures.push(`${document.source}: larger than ${max} bytes`)
    return false
  })
  return { where, loaded: kept.length > 0, documents: kept, failures, warnings }
}

function failed(where: string, reason: string): LoadResult {
  return { where, loaded: false, documents: [], failures: [`${where}: ${reason}`], warnings: [] }
}

async function mapLimited<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await run(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}
