import { readdir, readFile, realpath, stat } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import type * as z from "zod"
import { type Corpus, CorpusCase, CorpusManifest, casesDirectory, type DiffSource, manifestFile } from "./corpus"
import { compareCodeUnits } from "./order"

/** Why one file of a corpus was not used: its path relative to the corpus and what is wrong. */
export interface CorpusProblem {
  file: string
  message: string
}

/**
 * What loading a corpus produced. `corpus` is null when the manifest is missing or invalid; a bad
 * case file is one problem and the other cases still load.
 */
export interface CorpusLoad {
  corpus: Corpus | null
  problems: CorpusProblem[]
}

/** The corpora bundled with this package, by the name `--corpus` accepts. */
export const bundledCorpora = ["martian", "demo"] as const
export type BundledCorpus = (typeof bundledCorpora)[number]

/** The directory of a bundled corpus (inside this package, next to `src/`). */
export function bundledCorpusDirectory(name: BundledCorpus): string {
  return fileURLToPath(new URL(`../corpora/${name}`, import.meta.url))
}

/** Reads a corpus directory: `corpus.json`, then every `cases/*.json` in file-name order. Never throws. */
export async function loadCorpus(directory: string): Promise<CorpusLoad> {
  const root = resolve(directory)
  const problems: CorpusProblem[] = []
  const manifest = await readJson(root, manifestFile, CorpusManifest)
  if (!manifest.ok) return { corpus: null, problems: [manifest.problem] }

  const names = await listCaseFiles(root)
  if (names === null) {
    return { corpus: null, problems: [{ file: casesDirectory, message: "no cases/ directory" }] }
  }
  const cases: CorpusCase[] = []
  const seen = new Map<string, string>()
  for (const name of names) {
    const file = `${casesDirectory}/${name}`
    const read = await readJson(root, file, CorpusCase)
    if (!read.ok) {
      problems.push(read.problem)
      continue
    }
    const earlier = seen.get(read.value.id)
    if (earlier !== undefined) {
      problems.push({ file, message: `case id "${read.value.id}" is already used by ${earlier}` })
      continue
    }
    const diffProblem = await checkDiffSource(root, read.value.diff)
    if (diffProblem !== null) {
      problems.push({ file, message: diffProblem })
      continue
    }
    seen.set(read.value.id, file)
    cases.push(read.value)
  }
  return { corpus: { directory: root, manifest: manifest.value, cases }, problems }
}

/**
 * The absolute path of a `file` diff source, or null when it is absolute or leaves the corpus
 * directory (a corpus is data from elsewhere: it may not point at the runner's files).
 */
export function diffFilePath(corpusDirectory: string, source: { path: string }): string | null {
  if (isAbsolute(source.path) || source.path.includes("\\")) return null
  const root = resolve(corpusDirectory)
  const path = resolve(root, source.path)
  const inside = relative(root, path)
  if (inside === "" || inside.startsWith("..") || isAbsolute(inside)) return null
  return path
}

/** The text of a case's diff when it is stored in the corpus; null for the other sources or an unreadable file. */
export async function readCorpusDiff(corpus: Pick<Corpus, "directory">, testCase: CorpusCase): Promise<string | null> {
  if (testCase.diff.kind !== "file") return null
  const path = diffFilePath(corpus.directory, testCase.diff)
  if (path === null) return null
  return readFile(path, "utf8").catch(() => null)
}

async function checkDiffSource(root: string, source: DiffSource): Promise<string | null> {
  if (source.kind !== "file") return null
  const path = diffFilePath(root, source)
  if (path === null) return `diff path "${source.path}" must be relative and inside the corpus`
  // A symlink could still lead out of the corpus: compare the real paths.
  const real = await realpath(path).catch(() => null)
  if (real === null) return `diff file "${source.path}" does not exist`
  const realRoot = await realpath(root)
  if (real !== realRoot && !real.startsWith(realRoot + sep)) return `diff file "${source.path}" leads out of the corpus`
  const info = await stat(real)
  if (!info.isFile()) return `diff path "${source.path}" is not a file`
  return null
}

async function listCaseFiles(root: string): Promise<string[] | null> {
  const entries = await readdir(join(root, casesDirectory), { withFileTypes: true }).catch(() => null)
  if (entries === null) return null
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(".json"))
    .map((entry) => entry.name)
    .sort(compareCodeUnits)
}

type Read<T> = { ok: true; value: T } | { ok: false; problem: CorpusProblem }

async function readJson<T>(root: string, file: string, schema: z.ZodType<T>): Promise<Read<T>> {
  const text = await readFile(join(root, file), "utf8").catch(() => null)
  if (text === null) return { ok: false, problem: { file, message: "cannot be read" } }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    return { ok: false, problem: { file, message: `not JSON: ${(error as Error).message}` } }
  }
  const parsed = schema.safeParse(data)
  if (parsed.success) return { ok: true, value: parsed.data }
  const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
  return { ok: false, problem: { file, message: issues.join("; ") } }
}
