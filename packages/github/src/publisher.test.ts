import { parseDiff } from "@opencode-reviewer/core"
import { describe, expect, test } from "vitest"
import { diffFromFiles } from "./api-diff"
import { anchorComment } from "./publisher"

const diff = [
  "diff --git a/src/a.ts b/src/a.ts",
  "--- a/src/a.ts",
  "+++ b/src/a.ts",
  "@@ -1,4 +1,5 @@",
  " one",
  "-two",
  "+TWO",
  "+two and a half",
  " three",
  " four",
  "diff --git a/old.ts b/old.ts",
  "deleted file mode 100644",
  "--- a/old.ts",
  "+++ /dev/null",
  "@@ -1,2 +0,0 @@",
  "-gone",
  "-also gone",
  "",
].join("\n")
const files = parseDiff(new TextEncoder().encode(diff)).files

describe("anchorComment", () => {
  test("an added or context line goes on the RIGHT at its new-file number", () => {
    expect(anchorComment(files, { file: "src/a.ts", line: 3 }, null)).toEqual({
      ok: true,
      path: "src/a.ts",
      line: 3,
      side: "RIGHT",
      startLine: null,
    })
    expect(anchorComment(files, { file: "src/a.ts", line: 5 }, null)).toMatchObject({ ok: true, side: "RIGHT" })
  })

  test("a removed line of a deleted file goes on the LEFT", () => {
    expect(anchorComment(files, { file: "old.ts", line: 2 }, null)).toMatchObject({
      ok: true,
      line: 2,
      side: "LEFT",
    })
  })

  test("a range starts at the suggestion's first line, and only when it precedes the line", () => {
    expect(anchorComment(files, { file: "src/a.ts", line: 3 }, 2)).toMatchObject({ startLine: 2 })
    expect(anchorComment(files, { file: "src/a.ts", line: 3 }, 3)).toMatchObject({ startLine: null })
  })

  test("lines outside the hunks, unknown files and findings without a line are refused with why", () => {
    expect(anchorComment(files, { file: "src/a.ts", line: 40 }, null)).toEqual({
      ok: false,
      reason: "line 40 is not in the diff",
    })
    expect(anchorComment(files, { file: "nope.ts", line: 1 }, null)).toEqual({
      ok: false,
      reason: "file not in the diff",
    })
    expect(anchorComment(files, { file: "src/a.ts", line: null }, null)).toEqual({ ok: false, reason: "no line given" })
  })
})

describe("diffFromFiles", () => {
  test("rebuilds a diff git parses, and lists what GitHub sent no patch for", () => {
    const rebuilt = diffFromFiles(
      [
        { filename: "src/a.ts", status: "modified", patch: "@@ -1,2 +1,2 @@\n one\n-two\n+TWO" },
        { filename: "src/new.ts", status: "added", patch: "@@ -0,0 +1 @@\n+hello" },
        { filename: "src/b.ts", previous_filename: "src/old-b.ts", status: "renamed" },
        { filename: "logo.png", status: "added" },
      ],
      5,
    )
    const parsed = parseDiff(new TextEncoder().encode(rebuilt.diff)).files
    expect(parsed.map((file) => [file.path, file.status])).toEqual([
      ["src/a.ts", "modified"],
      ["src/new.ts", "added"],
      ["src/b.ts", "renamed"],
    ])
    expect(parsed[0]!.hunks[0]!.lines.map((line) => line.kind)).toEqual(["context", "remove", "add"])
    expect(rebuilt.unreviewed).toEqual([
      { path: "logo.png", reason: "GitHub sent no patch (a binary file, or its diff is too large)" },
      { path: "(1 more files)", reason: "GitHub lists at most 3000 files of a pull request", files: 1 },
    ])
  })
})
