import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { bundledCorpusDirectory, diffFilePath, loadCorpus, readCorpusDiff } from "./load"

const directories: string[] = []
afterEach(async () => {
  await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })))
})

async function corpusWith(files: Record<string, string | object>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "eval-corpus-"))
  directories.push(root)
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, ".."), { recursive: true })
    await writeFile(join(root, path), typeof content === "string" ? content : JSON.stringify(content))
  }
  return root
}

const manifest = { format: 1, name: "acme" }
const fileCase = {
  id: "acme-1",
  repository: "acme/api",
  diff: { kind: "file", path: "diffs/acme-1.diff" },
  title: "Add search",
  golden: [{ text: "SQL injection in search", severity: "critical", file: "src/search.ts", line: 12 }],
}

describe("loadCorpus", () => {
  it("reads the manifest and the cases in file-name order, with all three diff sources", async () => {
    const root = await corpusWith({
      "corpus.json": manifest,
      "cases/b.json": {
        ...fileCase,
        id: "acme-2",
        diff: { kind: "pull-request", url: "https://github.com/acme/api/pull/2" },
      },
      "cases/a.json": fileCase,
      "cases/c.json": { ...fileCase, id: "acme-3", diff: { kind: "git", base: "abc123", head: "def456" } },
      "cases/readme.txt": "not a case",
      "diffs/acme-1.diff": "diff --git a/src/search.ts b/src/search.ts\n",
    })
    const { corpus, problems } = await loadCorpus(root)
    expect(problems).toEqual([])
    expect(corpus!.manifest).toEqual(manifest)
    expect(corpus!.cases.map((item) => item.id)).toEqual(["acme-1", "acme-2", "acme-3"])
    expect(await readCorpusDiff(corpus!, corpus!.cases[0]!)).toBe("diff --git a/src/search.ts b/src/search.ts\n")
    expect(await readCorpusDiff(corpus!, corpus!.cases[1]!)).toBeNull()
  })

  it("reports a bad case and keeps loading the others", async () => {
    const root = await corpusWith({
      "corpus.json": manifest,
      "cases/1.json": { ...fileCase, golden: [{ text: "x", severity: "High" }] },
      "cases/2.json": "{ not json",
      "cases/3.json": { ...fileCase, diff: { kind: "file", path: "../outside.diff" } },
      "cases/4.json": { ...fileCase, diff: { kind: "file", path: "diffs/missing.diff" } },
      "cases/5.json": { ...fileCase, diff: { kind: "pull-request", url: "http://github.com/acme/api/pull/1" } },
      "cases/6.json": { ...fileCase, id: "Bad Id" },
      "cases/7.json": fileCase,
      "cases/8.json": fileCase,
      "diffs/acme-1.diff": "diff\n",
    })
    const { corpus, problems } = await loadCorpus(root)
    expect(corpus!.cases.map((item) => item.id)).toEqual(["acme-1"])
    expect(problems.map((problem) => problem.file)).toEqual([
      "cases/1.json",
      "cases/2.json",
      "cases/3.json",
      "cases/4.json",
      "cases/5.json",
      "cases/6.json",
      "cases/8.json",
    ])
    expect(problems[0]!.message).toMatch(/^golden\.0\.severity:/)
    expect(problems[1]!.message).toMatch(/^not JSON/)
    expect(problems[2]!.message).toMatch(/inside the corpus/)
    expect(problems[3]!.message).toMatch(/does not exist/)
    expect(problems[6]!.message).toBe('case id "acme-1" is already used by cases/7.json')
  })

  it("refuses a diff that leads out of the corpus through a symlink", async () => {
    const outside = await corpusWith({ "secret.diff": "diff\n" })
    const root = await corpusWith({ "corpus.json": manifest, "cases/a.json": fileCase })
    await mkdir(join(root, "diffs"))
    await symlink(join(outside, "secret.diff"), join(root, "diffs/acme-1.diff"))
    const { problems } = await loadCorpus(root)
    expect(problems).toEqual([
      { file: "cases/a.json", message: 'diff file "diffs/acme-1.diff" leads out of the corpus' },
    ])
  })

  it("gives no corpus without a valid manifest or a cases directory", async () => {
    expect(await loadCorpus(await corpusWith({ "cases/a.json": fileCase }))).toEqual({
      corpus: null,
      problems: [{ file: "corpus.json", message: "cannot be read" }],
    })
    const wrongFormat = await loadCorpus(await corpusWith({ "corpus.json": { format: 2, name: "x" } }))
    expect(wrongFormat.problems[0]!.message).toMatch(/^format:/)
    const noCases = await loadCorpus(await corpusWith({ "corpus.json": manifest }))
    expect(noCases).toEqual({ corpus: null, problems: [{ file: "cases", message: "no cases/ directory" }] })
  })
})

describe("diffFilePath", () => {
  it("accepts only relative paths inside the corpus", () => {
    expect(diffFilePath("/corpus", { path: "diffs/a.diff" })).toBe("/corpus/diffs/a.diff")
    expect(diffFilePath("/corpus", { path: "/etc/passwd" })).toBeNull()
    expect(diffFilePath("/corpus", { path: "diffs/../../x.diff" })).toBeNull()
    expect(diffFilePath("/corpus", { path: "." })).toBeNull()
    expect(diffFilePath("/corpus", { path: "..\\x.diff" })).toBeNull()
  })
})

describe("the bundled Martian corpus", () => {
  it("loads cleanly: 50 pull requests from five repositories, 137 golden comments", async () => {
    const { corpus, problems } = await loadCorpus(bundledCorpusDirectory("martian"))
    expect(problems).toEqual([])
    expect(corpus!.manifest).toMatchObject({ format: 1, name: "martian", license: "MIT" })
    expect(corpus!.cases).toHaveLength(50)
    expect(corpus!.cases.flatMap((item) => item.golden)).toHaveLength(137)
    expect([...new Set(corpus!.cases.map((item) => item.repository))].sort()).toEqual([
      "calcom/cal.com",
      "discourse/discourse",
      "getsentry/sentry",
      "grafana/grafana",
      "keycloak/keycloak",
    ])
    expect(corpus!.cases.every((item) => item.diff.kind === "pull-request")).toBe(true)
  })
})
