import { type DiffFile, parseDiff } from "@opencode-reviewer/core"
import { createTempRepo, type TempRepo } from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { type ApiDiffFile, assembleDiff, quote } from "./api-diff"
import { anchorFinding } from "./position"

const refs = { baseSha: "b".repeat(40), startSha: "s".repeat(40), headSha: "h".repeat(40) }
const lines = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, index) => `${prefix} ${index + 1}`).join("\n") + "\n"

describe("anchoring findings on a real git diff", () => {
  let repo: TempRepo
  let files: DiffFile[]

  beforeAll(async () => {
    repo = await createTempRepo()
    await repo.write({
      "src/app.ts": lines(30, "line"),
      "src/gone.ts": lines(5, "old"),
      "src/old-name.ts": lines(20, "stable"),
      "src/a&b.ts": lines(3, "amp"),
    })
    const base = repo.commit("base")
    const app = lines(30, "line").split("\n")
    app.splice(9, 1, "line 10 changed", "line 10b added") // line 10 replaced, one line added after it
    await repo.write({ "src/app.ts": app.join("\n"), "src/a&b.ts": lines(3, "amp") + "amp 4\n" })
    repo.git("rm", "-q", "src/gone.ts")
    repo.git("mv", "src/old-name.ts", "src/new-name.ts")
    await repo.write({ "src/new-name.ts": lines(20, "stable").replace("stable 15\n", "stable 15 edited\n") })
    const head = repo.commit("head")
    const diff = repo.git(
      "diff",
      "--no-color",
      "--no-ext-diff",
      "--src-prefix=a/",
      "--dst-prefix=b/",
      "-M",
      "-C",
      base,
      head,
      "--",
    )
    files = parseDiff(diff).files
  })
  afterAll(() => repo.remove())

  test("an added line gets new_line only", () => {
    const anchor = anchorFinding(files, { file: "src/app.ts", line: 11 }, refs)
    expect(anchor).toMatchObject({ ok: true, kind: "add" })
    if (!anchor.ok) return
    expect(anchor.position).toEqual({
      position_type: "text",
      base_sha: refs.baseSha,
      start_sha: refs.startSha,
      head_sha: refs.headSha,
      old_path: "src/app.ts",
      new_path: "src/app.ts",
      new_line: 11,
    })
  })

  test("a context line gets both lines, which differ after an insertion", () => {
    const anchor = anchorFinding(files, { file: "src/app.ts", line: 12 }, refs)
    expect(anchor).toMatchObject({ ok: true, kind: "context", position: { old_line: 11, new_line: 12 } })
  })

  test("a line of a deleted file gets old_line only", () => {
    const anchor = anchorFinding(files, { file: "src/gone.ts", line: 2 }, refs)
    expect(anchor).toMatchObject({
      ok: true,
      kind: "remove",
      position: { old_path: "src/gone.ts", new_path: "src/gone.ts", old_line: 2 },
    })
    if (anchor.ok) expect(anchor.position.new_line).toBeUndefined()
  })

  test("a renamed file keeps both names; the old name finds it too", () => {
    const anchor = anchorFinding(files, { file: "src/new-name.ts", line: 15 }, refs)
    expect(anchor).toMatchObject({
      ok: true,
      kind: "add",
      position: { old_path: "src/old-name.ts", new_path: "src/new-name.ts", new_line: 15 },
    })
    expect(anchorFinding(files, { file: "src/old-name.ts", line: 15 }, refs)).toMatchObject({ ok: true })
  })

  test("a path with & is kept whole", () => {
    const anchor = anchorFinding(files, { file: "src/a&b.ts", line: 4 }, refs)
    expect(anchor).toMatchObject({
      ok: true,
      position: { old_path: "src/a&b.ts", new_path: "src/a&b.ts", new_line: 4 },
    })
  })

  test("a line outside the hunks, a file outside the diff, or no line is not anchored", () => {
    expect(anchorFinding(files, { file: "src/app.ts", line: 28 }, refs)).toEqual({
      ok: false,
      reason: "line 28 is not in the diff",
    })
    expect(anchorFinding(files, { file: "src/other.ts", line: 1 }, refs)).toEqual({
      ok: false,
      reason: "file not in the diff",
    })
    expect(anchorFinding(files, { file: "src/app.ts", line: null }, refs)).toEqual({
      ok: false,
      reason: "no line given",
    })
  })
})

describe("rebuilding a unified diff from GitLab's /diffs", () => {
  const entry = (over: Partial<ApiDiffFile>): ApiDiffFile => ({
    old_path: "a.ts",
    new_path: "a.ts",
    a_mode: "100644",
    b_mode: "100644",
    diff: "@@ -1 +1 @@\n-x\n+y\n",
    new_file: false,
    renamed_file: false,
    deleted_file: false,
    ...over,
  })

  test("modified, new, deleted, renamed and odd names parse back to the same files", () => {
    const { diff, unreviewed } = assembleDiff([
      entry({}),
      entry({ old_path: "n.ts", new_path: "n.ts", a_mode: "0", new_file: true, diff: "@@ -0,0 +1,2 @@\n+one\n+two\n" }),
      entry({ old_path: "d.ts", new_path: "d.ts", b_mode: "0", deleted_file: true, diff: "@@ -1 +0,0 @@\n-gone\n" }),
      entry({ old_path: "old name.ts", new_path: "new name.ts", renamed_file: true, diff: "@@ -1 +1 @@\n-a\n+b" }),
      entry({ old_path: "pure.ts", new_path: "moved/pure.ts", renamed_file: true, diff: "" }),
      entry({ old_path: 'é&"q".ts', new_path: 'é&"q".ts' }),
      entry({ old_path: "run.sh", new_path: "run.sh", a_mode: "100644", b_mode: "100755", diff: "" }),
    ])
    expect(unreviewed).toEqual([])
    const parsed = parseDiff(diff)
    expect(parsed.problems).toEqual([])
    expect(parsed.files.map((file) => [file.status, file.oldPath, file.path, file.added, file.removed])).toEqual([
      ["modified", "a.ts", "a.ts", 1, 1],
      ["added", "n.ts", "n.ts", 2, 0],
      ["deleted", "d.ts", "d.ts", 0, 1],
      ["renamed", "old name.ts", "new name.ts", 1, 1],
      ["renamed", "pure.ts", "moved/pure.ts", 0, 0],
      ["modified", 'é&"q".ts', 'é&"q".ts', 1, 1],
      ["modified", "run.sh", "run.sh", 0, 0],
    ])
    expect(parsed.files[6]).toMatchObject({ oldMode: "100644", newMode: "100755" })
  })

  test("collapsed, too-large and content-less files are unreviewed, never unchanged", () => {
    const { diff, unreviewed } = assembleDiff([
      entry({ old_path: "big.json", new_path: "big.json", diff: "", too_large: true }),
      entry({ old_path: "c.ts", new_path: "c.ts", diff: "", collapsed: true }),
      entry({ old_path: "quiet.ts", new_path: "quiet.ts", diff: "" }),
      entry({}),
    ])
    expect(unreviewed.map((file) => file.path)).toEqual(["big.json", "c.ts", "quiet.ts"])
    expect(unreviewed[0]!.reason).toContain("too large")
    expect(parseDiff(diff).files.map((file) => file.path)).toEqual(["a.ts"])
  })

  test("quote follows git's core.quotePath", () => {
    expect(quote("a/plain name.ts")).toBe("a/plain name.ts")
    expect(quote("a/é.txt")).toBe('"a/\\303\\251.txt"')
    expect(quote('a/"q"\\.ts')).toBe('"a/\\"q\\"\\\\.ts"')
  })
})
