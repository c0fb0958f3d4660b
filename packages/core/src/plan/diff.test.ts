import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  assignPatchFiles,
  type DiffFile,
  type DiffParseResult,
  type FileStatus,
  leadingLines,
  leadingLinesMayMatch,
  longestLine,
  parseDiff,
  patchFileName,
  patchLength,
  writePatchFiles,
} from "./diff"

const root = mkdtempSync(join(tmpdir(), "diff-test-"))
const repo = join(root, "repo")
const environment = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: root,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: join(root, "gitconfig"),
  LC_ALL: "C",
}
const DIFF = [
  "-c",
  "core.quotePath=true",
  "diff",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "-M",
  "-C",
]
const HUGE = 1_200_000
const SUB_OLD = "1111111111111111111111111111111111111111"
const SUB_NEW = "2222222222222222222222222222222222222222"
const SUB_ADDED = "3333333333333333333333333333333333333333"
const SUB_GONE = "4444444444444444444444444444444444444444"
const QUOTED = 'quo"te\\back\tslash.txt'
const NON_UTF8 = Buffer.concat([Buffer.from("caf"), Buffer.from([0xe9]), Buffer.from(".txt")])

let base = ""
let head = ""
let later = ""
let raw: Uint8Array = new Uint8Array()
let files: DiffFile[] = []

beforeAll(() => {
  mkdirSync(repo)
  git(["init", "-q", "-b", "main"])

  put("src/session.ts", numbered(30))
  put("one.txt", "old\n")
  put("gone.txt", "goodbye\ncruel\nworld\n")
  put("empty-deleted", "")
  put("moved/old name.txt", paragraph("moved"))
  put("renamed-edit.txt", paragraph("renamed"))
  put("copy-source.txt", paragraph("copied"))
  put("copy-edit-source.txt", paragraph("edited copy"))
  put("image.bin", binary(1))
  put("old.bin", binary(2))
  put("script.sh", "echo hi\n")
  put("docs/read me.txt", "read\n")
  put("mode only/with space.sh", "echo space\n")
  put("tool.sh", "echo tool\n")
  symlinkSync("target-a", join(repo, "link-changed"))
  put("typechange", "plain file\n")
  put(QUOTED, "quoted\n")
  put('dir with "q"/x\t1.txt', paragraph("quoted rename"))
  put("ümlaut/ä.txt", "umlaut\n")
  put("ä.txt", paragraph("umlaut rename"))
  put("windows.txt", "a\r\nb\r\nc\r\n")
  put("no-eol.txt", "x\ny")
  put("add-eol.txt", "x")
  put("huge.txt", `${"a".repeat(HUGE)}\n`)
  put("tricky.txt", "-- a/tricky.txt\nkeep\n@@ -1 +1 @@\ndiff --git a/x b/x\n")
  put("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]))
  git(["add", "-A"])
  gitlink(SUB_OLD, "vendor/old")
  gitlink(SUB_GONE, "vendor/gone")
  git(["commit", "-q", "-m", "base"])
  base = text(git(["rev-parse", "HEAD"])).trim()

  const session = numbered(30).split("\n")
  session.splice(2, 1, "changed 3")
  session.splice(19, 1)
  session.splice(10, 0, "inserted A", "inserted B")
  put("src/session.ts", session.join("\n"))
  put("one.txt", "new\n")
  put("created.txt", "first\nsecond\nthird\n")
  unlinkSync(join(repo, "gone.txt"))
  put("empty-added", "")
  unlinkSync(join(repo, "empty-deleted"))
  move("moved/old name.txt", "moved/new name.txt")
  move("renamed-edit.txt", "renamed-edited.txt")
  put("renamed-edited.txt", paragraph("renamed").replace("line 5", "line five"))
  put("copy-target.txt", paragraph("copied"))
  put("copy-source.txt", `${paragraph("copied")}appended\n`)
  put("copy-edited.txt", paragraph("edited copy").replace("line 7", "line seven"))
  put("copy-edit-source.txt", `${paragraph("edited copy")}appended\n`)
  put("image.bin", binary(3))
  put("new.bin", binary(4))
  put("bin dir/has space.bin", binary(5))
  unlinkSync(join(repo, "old.bin"))
  chmodSync(join(repo, "script.sh"), 0o755)
  put("docs/read me.txt", "read\nme\n")
  put("new dir/new file.txt", "fresh\n")
  chmodSync(join(repo, "mode only/with space.sh"), 0o755)
  put("tool.sh", "echo tool\necho more\n")
  chmodSync(join(repo, "tool.sh"), 0o755)
  symlinkSync("target", join(repo, "link-added"))
  unlinkSync(join(repo, "link-changed"))
  symlinkSync("target-b", join(repo, "link-changed"))
  unlinkSync(join(repo, "typechange"))
  symlinkSync("one.txt", join(repo, "typechange"))
  put(QUOTED, "quoted\nmore\n")
  move('dir with "q"/x\t1.txt', 'dir with "q"/x\t2.txt')
  put("ümlaut/ä.txt", "umlaut\nmore\n")
  move("ä.txt", "b c.txt")
  put("b c.txt", `${paragraph("umlaut rename")}more\n`)
  writeFileSync(Buffer.concat([Buffer.from(`${repo}/`), NON_UTF8]), "non utf8\n")
  put("windows.txt", "a\r\nB\r\nc\r\n")
  put("no-eol.txt", "x\nz")
  put("add-eol.txt", "x\n")
  put("huge.txt", `${"b".repeat(HUGE)}\n`)
  put("tricky.txt", "++ b/tricky.txt\nkeep\ndiff --git a/x b/x\n")
  put("latin1.txt", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x73, 0x0a]))
  // `add -A` stages the gitlinks as deleted (nothing is checked out there); set them again after it.
  git(["add", "-A"])
  gitlink(SUB_NEW, "vendor/old")
  gitlink(SUB_ADDED, "vendor/lib")
  git(["rm", "-q", "--cached", "--ignore-unmatch", "vendor/gone"])
  git(["commit", "-q", "-m", "head", "-m", "A commit message\n\n---\nwith a separator line"])
  head = text(git(["rev-parse", "HEAD"])).trim()

  git(["rm", "-q", "empty-added"])
  git(["commit", "-q", "-m", "later"])
  later = text(git(["rev-parse", "HEAD"])).trim()

  raw = git([...DIFF, base, head])
  files = parseDiff(raw).files
})

afterAll(() => {
  rmSync(root, { recursive: true, force: true })
})

describe("parseDiff on a real repository", () => {
  it("matches git's numstat, raw status and modes for every file", () => {
    const result = parseDiff(raw)
    expect(result.problems).toEqual([])
    expect(result.files.map(summary)).toEqual(expected([base, head]))
    expect(result.files.length).toBeGreaterThanOrEqual(35)
  })

  it("matches git when the same diff is given as a decoded string", () => {
    const result = parseDiff(text(raw))
    expect(result.problems).toEqual([])
    expect(result.files.map(summary)).toEqual(expected([base, head]))
  })

  it("reads every kind of change the repository contains", () => {
    const statuses = new Set(files.map((file) => file.status))
    expect([...statuses].sort()).toEqual(["added", "copied", "deleted", "modified", "renamed"])
    expect(file("moved/new name.txt")).toMatchObject({
      status: "renamed",
      oldPath: "moved/old name.txt",
      similarity: 100,
      hunks: [],
    })
    expect(file("renamed-edited.txt")).toMatchObject({
      status: "renamed",
      oldPath: "renamed-edit.txt",
      added: 1,
      removed: 1,
    })
    expect(file("renamed-edited.txt").similarity).toBeLessThan(100)
    expect(file("copy-target.txt")).toMatchObject({ status: "copied", oldPath: "copy-source.txt", similarity: 100 })
    expect(file("copy-edited.txt")).toMatchObject({
      status: "copied",
      oldPath: "copy-edit-source.txt",
      added: 1,
      removed: 1,
    })
    expect(file("gone.txt")).toMatchObject({ status: "deleted", removed: 3, added: 0 })
    expect(file("docs/read me.txt")).toMatchObject({ status: "modified", added: 1, oldPath: "docs/read me.txt" })
    expect(file("docs/read me.txt").patch).toContain("\n+++ b/docs/read me.txt\t\n")
    expect(file("new dir/new file.txt")).toMatchObject({ status: "added", added: 1 })
  })

  it("reads empty files added, deleted and renamed", () => {
    // git pairs the deleted and the added empty file as an exact rename
    expect(file("empty-added")).toMatchObject({
      status: "renamed",
      oldPath: "empty-deleted",
      similarity: 100,
      hunks: [],
    })
    const deleted = parseDiff(git([...DIFF, head, later]))
    expect(deleted.files.map(summary)).toEqual(expected([head, later]))
    expect(deleted.files).toMatchObject([
      { path: "empty-added", status: "deleted", hunks: [], oldMode: "100644", newMode: null },
    ])
    const added = parseDiff(git([...DIFF, later, head]))
    expect(added.files.map(summary)).toEqual(expected([later, head]))
    expect(added.files).toMatchObject([
      { path: "empty-added", status: "added", hunks: [], oldMode: null, newMode: "100644" },
    ])
    expect(added.files[0]?.patch).toBe(
      "diff --git a/empty-added b/empty-added\nnew file mode 100644\nindex 0000000..e69de29\n",
    )
  })

  it("reads binary sections, including paths with spaces", () => {
    expect(file("image.bin")).toMatchObject({ status: "modified", binary: true, added: 0, removed: 0, hunks: [] })
    expect(file("new.bin")).toMatchObject({ status: "added", binary: true })
    expect(file("old.bin")).toMatchObject({ status: "deleted", binary: true })
    expect(file("bin dir/has space.bin")).toMatchObject({
      status: "added",
      binary: true,
      oldPath: "bin dir/has space.bin",
    })
  })

  it("reads mode-only changes, symlinks, type changes and submodules", () => {
    expect(file("script.sh")).toMatchObject({ oldMode: "100644", newMode: "100755", hunks: [], status: "modified" })
    expect(file("mode only/with space.sh")).toMatchObject({ oldMode: "100644", newMode: "100755", hunks: [] })
    expect(file("tool.sh")).toMatchObject({ oldMode: "100644", newMode: "100755", added: 1 })
    const link = file("link-added")
    expect(link).toMatchObject({ status: "added", newMode: "120000" })
    expect(link.hunks[0]?.lines).toEqual([
      { kind: "add", oldLine: null, newLine: 1, text: "target", noNewlineAtEnd: true },
    ])
    expect(file("link-changed")).toMatchObject({ oldMode: "120000", newMode: "120000", added: 1, removed: 1 })
    const changed = file("typechange")
    expect(changed).toMatchObject({ status: "modified", oldMode: "100644", newMode: "120000", added: 1, removed: 1 })
    expect(changed.patch.match(/^diff --git /gm)).toHaveLength(2)
    expect(file("vendor/lib")).toMatchObject({ status: "added", submodule: true, newMode: "160000" })
    expect(file("vendor/lib").hunks[0]?.lines[0]?.text).toBe(`Subproject commit ${SUB_ADDED}`)
    expect(file("vendor/old")).toMatchObject({
      status: "modified",
      submodule: true,
      oldMode: "160000",
      newMode: "160000",
    })
    expect(file("vendor/old").hunks[0]?.lines.map((line) => line.text)).toEqual([
      `Subproject commit ${SUB_OLD}`,
      `Subproject commit ${SUB_NEW}`,
    ])
    expect(file("vendor/gone")).toMatchObject({ status: "deleted", submodule: true, oldMode: "160000", newMode: null })
  })

  it("decodes quoted, non-ASCII and non-UTF-8 names", () => {
    expect(text(raw)).toContain('"a/quo\\"te\\\\back\\tslash.txt"')
    expect(file(QUOTED)).toMatchObject({ status: "modified", added: 1 })
    expect(file('dir with "q"/x\t2.txt')).toMatchObject({ status: "renamed", oldPath: 'dir with "q"/x\t1.txt' })
    expect(text(raw)).toContain('"a/\\303\\274mlaut/\\303\\244.txt"')
    expect(file("ümlaut/ä.txt")).toMatchObject({ status: "modified", added: 1 })
    expect(file("b c.txt")).toMatchObject({ status: "renamed", oldPath: "ä.txt" })
    expect(text(raw)).toContain('"b/caf\\351.txt"')
    expect(file("caf\uFFFD.txt")).toMatchObject({ status: "added", added: 1 })
  })

  it("numbers hunk lines on both sides", () => {
    const session = file("src/session.ts")
    const lines = session.hunks.flatMap((hunk) => hunk.lines)
    const find = (kind: string, value: string) => lines.find((line) => line.kind === kind && line.text === value)
    expect(session.hunks[0]).toMatchObject({ oldStart: 1, newStart: 1 })
    expect(find("remove", "line 3")).toMatchObject({ oldLine: 3, newLine: null })
    expect(find("add", "changed 3")).toMatchObject({ oldLine: null, newLine: 3 })
    expect(find("add", "inserted A")).toMatchObject({ newLine: 11 })
    expect(find("add", "inserted B")).toMatchObject({ newLine: 12 })
    expect(find("context", "line 19")).toMatchObject({ oldLine: 19, newLine: 21 })
    expect(find("remove", "line 20")).toMatchObject({ oldLine: 20, newLine: null })
    expect(find("context", "line 21")).toMatchObject({ oldLine: 21, newLine: 22 })
    for (const hunk of session.hunks) {
      expect(hunk.lines.filter((line) => line.kind !== "add")).toHaveLength(hunk.oldLines)
      expect(hunk.lines.filter((line) => line.kind !== "remove")).toHaveLength(hunk.newLines)
    }
  })

  it("reads hunk headers without counts and with empty old sides", () => {
    expect(file("one.txt").patch).toContain("\n@@ -1 +1 @@\n")
    expect(file("one.txt").hunks[0]).toMatchObject({ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 })
    const created = file("created.txt")
    expect(created.patch).toContain("\n@@ -0,0 +1,3 @@\n")
    expect(created.hunks[0]).toMatchObject({ oldStart: 0, oldLines: 0, newStart: 1, newLines: 3 })
    expect(created.hunks[0]?.lines.map((line) => line.newLine)).toEqual([1, 2, 3])
    expect(file("gone.txt").hunks[0]).toMatchObject({ oldStart: 1, oldLines: 3, newStart: 0, newLines: 0 })
  })

  it("marks lines without a trailing newline and keeps carriage returns", () => {
    expect(file("no-eol.txt").hunks[0]?.lines).toEqual([
      { kind: "context", oldLine: 1, newLine: 1, text: "x", noNewlineAtEnd: false },
      { kind: "remove", oldLine: 2, newLine: null, text: "y", noNewlineAtEnd: true },
      { kind: "add", oldLine: null, newLine: 2, text: "z", noNewlineAtEnd: true },
    ])
    expect(file("add-eol.txt").hunks[0]?.lines.map((line) => line.noNewlineAtEnd)).toEqual([true, false])
    expect(file("windows.txt").hunks[0]?.lines.map((line) => line.text)).toEqual(["a\r", "b\r", "B\r", "c\r"])
  })

  it("reads a line of more than a megabyte", () => {
    const lines = file("huge.txt").hunks[0]?.lines ?? []
    expect(lines.map((line) => [line.kind, line.text.length])).toEqual([
      ["remove", HUGE],
      ["add", HUGE],
    ])
    expect(lines[1]?.text).toBe("b".repeat(HUGE))
  })

  it("counts hunk lines instead of mistaking content for headers", () => {
    const tricky = file("tricky.txt")
    expect(tricky.patch).toContain("\n--- a/tricky.txt\n+++ b/tricky.txt\n")
    expect(tricky.hunks[0]?.lines.map((line) => [line.kind, line.text])).toEqual([
      ["remove", "-- a/tricky.txt"],
      ["add", "++ b/tricky.txt"],
      ["context", "keep"],
      ["remove", "@@ -1 +1 @@"],
      ["context", "diff --git a/x b/x"],
    ])
  })

  it("splits the input into byte-exact sections", () => {
    const bytes = parseDiff(raw).files
    expect(Buffer.concat(bytes.map((file) => file.patchBytes ?? new Uint8Array())).equals(raw)).toBe(true)
    const decoded = text(raw)
    expect(
      parseDiff(decoded)
        .files.map((file) => file.patch)
        .join(""),
    ).toBe(decoded)
    for (const file of bytes) expect(file.patch.startsWith("diff --git ")).toBe(true)
    expect(text(file("latin1.txt").patchBytes ?? new Uint8Array())).toContain("caf\uFFFD")
    expect(
      Buffer.from(file("latin1.txt").patchBytes ?? []).includes(Buffer.from([0x2b, 0x63, 0x61, 0x66, 0xe9, 0x73])),
    ).toBe(true)
  })

  it("writes patch files that git applies one by one and together", async () => {
    const binary = git([...DIFF, "--binary", base, head])
    const parsed = parseDiff(binary)
    expect(parsed.problems).toEqual([])
    expect(parsed.files.map(summary)).toEqual(expected([base, head]))
    const names = assignPatchFiles(parsed.files.map((file) => file.path))
    const output = join(root, "out")
    const entries = parsed.files.map((file) => ({ file, patchFile: names.get(file.path) ?? "" }))
    await writePatchFiles(output, entries)
    const index = join(root, "apply-index")
    const scratch = { GIT_INDEX_FILE: index }
    git(["read-tree", base], scratch)
    for (const { file, patchFile } of entries) {
      const written = readFileSync(join(output, patchFile))
      expect(written.equals(file.patchBytes ?? new Uint8Array())).toBe(true)
      git(["apply", "--cached", "--check", join(output, patchFile)], scratch)
    }
    const all = Buffer.concat(entries.map(({ patchFile }) => readFileSync(join(output, patchFile))))
    expect(all.equals(binary)).toBe(true)
    git(["apply", "--cached", "-"], scratch, all)
    expect(text(git(["write-tree"], scratch)).trim()).toBe(text(git(["rev-parse", `${head}^{tree}`])).trim())
  })

  it("reads format-patch output with a commit message, binary patches and a signature", () => {
    const patch = git(["format-patch", "--stdout", "-M", "-C", `${base}..${head}`])
    expect(text(patch)).toContain("GIT binary patch")
    const result = parseDiff(patch)
    expect(result.problems).toEqual([])
    expect(result.files.map(summary)).toEqual(expected([base, head]))
    const last = result.files[result.files.length - 1]
    expect(last?.patch).not.toContain("\n-- \n")
    const decoded = text(patch)
    expect(decoded.slice(decoded.lastIndexOf(last?.patch ?? "") + (last?.patch.length ?? 0))).toMatch(
      /^-- \n[\d.]+\n\n$/,
    )
    expect(text(patch).indexOf("diff --git")).toBeGreaterThan(text(patch).indexOf("with a separator line"))
  })

  it("reads diffs without prefixes and with unquoted UTF-8 names", () => {
    const bare = parseDiff(git(["-c", "core.quotePath=false", "diff", "--no-prefix", "-M", "-C", base, head]))
    expect(bare.problems).toEqual([])
    expect(bare.files.map(summary)).toEqual(expected([base, head]))
  })

  it("reads a diff whose line endings were converted to CRLF", () => {
    const result = parseDiff(text(raw).replaceAll("\n", "\r\n"))
    expect(result.files.map(summary)).toEqual(expected([base, head]))
  })

  it("reads git's mnemonic prefixes and leaves unprefixed paths alone", () => {
    const mnemonic = parseDiff(
      "diff --git i/src/a.ts w/src/a.ts\n--- i/src/a.ts\n+++ w/src/a.ts\n@@ -1 +1 @@\n-x\n+y\n",
    )
    expect(mnemonic.files.map((file) => file.path)).toEqual(["src/a.ts"])
    const bare = parseDiff("diff --git a/b a/b\nold mode 100644\nnew mode 100755\n")
    expect(bare.files.map((file) => file.path)).toEqual(["a/b"])
  })

  it("never throws on truncated or mutated input", () => {
    const small = raw.subarray(0, Buffer.from(raw).indexOf("diff --git a/huge.txt"))
    const random = seeded(7)
    for (let cut = 0; cut < small.length; cut += 53) {
      const result = parseDiff(small.subarray(0, cut))
      expect(Array.isArray(result.files)).toBe(true)
    }
    for (let round = 0; round < 200; round += 1) {
      const mutated = Uint8Array.from(small)
      for (let flip = 0; flip < 20; flip += 1)
        mutated[Math.floor(random() * mutated.length)] = Math.floor(random() * 256)
      const result = parseDiff(mutated)
      for (const file of result.files) expect(typeof file.path).toBe("string")
    }
  })
})

// Everything a parse says, lines and patch texts included, as plain data.
function everything(result: DiffParseResult) {
  return {
    problems: result.problems,
    files: result.files.map((file) => ({
      ...file,
      patchBytes: undefined,
      hunks: file.hunks.map((hunk) => ({ ...hunk, lines: hunk.lines.map((line) => ({ ...line })) })),
    })),
  }
}

describe("parseDiff reads hunk lines only when asked", () => {
  // Byte input is counted line by line in a loop of its own and decoded on demand; text input goes
  // through the general reader: both must say the same about any input.
  it("says the same of bytes and of their text, whole, cut and mutated", () => {
    const ascii = raw.subarray(0, Buffer.from(raw).indexOf("diff --git a/huge.txt"))
    const random = seeded(11)
    // What hunk lines start with, line breaks and a few others.
    const alphabet = "\n +-\\@ax\r"
    const inputs: Uint8Array[] = [raw]
    for (let round = 0; round < 150; round += 1) {
      const mutated = Uint8Array.from(ascii.subarray(0, Math.floor(random() * ascii.length)))
      for (let flip = 0; flip < 8; flip += 1)
        mutated[Math.floor(random() * mutated.length)] = alphabet.charCodeAt(Math.floor(random() * alphabet.length))
      inputs.push(mutated)
    }
    for (const input of inputs) expect(everything(parseDiff(input))).toEqual(everything(parseDiff(text(input))))
  })

  it("answers the questions planning asks before and after the lines are built", () => {
    const fresh = parseDiff(raw).files
    const built = parseDiff(raw).files
    for (const file of built) for (const hunk of file.hunks) void hunk.lines
    const marker = /line|nerated|\r/
    fresh.forEach((file, index) => {
      const other = built[index]!
      expect(patchLength(file)).toBe(other.patch.length)
      file.hunks.forEach((hunk, at) => {
        const same = other.hunks[at]!
        for (const skip of ["add", "remove", "context"] as const) {
          const texts = leadingLines(same, 5, skip)
          expect(leadingLines(hunk, 5, skip)).toEqual(texts)
          if (texts.some((text) => marker.test(text))) expect(leadingLinesMayMatch(hunk, 5, skip, marker)).toBe(true)
        }
        expect(longestLine(hunk)).toBeGreaterThanOrEqual(longestLine(same))
      })
    })
    expect(fresh.some((file) => file.hunks.some((hunk) => !leadingLinesMayMatch(hunk, 5, "remove", /nerated/)))).toBe(
      true,
    )
  })
})

describe("parseDiff on malformed input", () => {
  const two = [
    "diff --git a/a.txt b/a.txt",
    "--- a/a.txt",
    "+++ b/a.txt",
    "@@ -1,3 +1,3 @@",
    " one",
    "-two",
    "+TWO",
    " three",
    "diff --git a/b.txt b/b.txt",
    "--- a/b.txt",
    "+++ b/b.txt",
    "@@ -1 +1 @@",
    "-b",
    "+B",
    "",
  ]

  it("keeps a truncated hunk and reports it", () => {
    const result = parseDiff(two.slice(0, 6).join("\n"))
    expect(result.files).toHaveLength(1)
    expect(result.files[0]?.hunks[0]?.lines.map((line) => line.text)).toEqual(["one", "two"])
    expect(result.problems).toEqual(["line 6: hunk truncated at end of input: 1 old and 2 new lines missing"])
  })

  it("reports a hunk cut short by the next file and still reads that file", () => {
    const result = parseDiff([...two.slice(0, 6), ...two.slice(8)].join("\n"))
    expect(result.files.map((file) => [file.path, file.added, file.removed])).toEqual([
      ["a.txt", 0, 1],
      ["b.txt", 1, 1],
    ])
    expect(result.problems).toEqual(["line 7: hunk ended early: 1 old and 2 new lines missing"])
  })

  it("ends a file at garbage after its hunk and reads the next file", () => {
    const result = parseDiff([...two.slice(0, 8), "garbage here", "more garbage", ...two.slice(8)].join("\n"))
    expect(result.files.map((file) => file.path)).toEqual(["a.txt", "b.txt"])
    expect(result.files[0]?.patch.endsWith(" three\n")).toBe(true)
    expect(result.problems).toEqual(['line 9: unexpected line after hunk "garbage here"; section ended'])
  })

  it("reports hunk lines that exceed the header counts", () => {
    const result = parseDiff(
      ["diff --git a/a b/a", "--- a/a", "+++ b/a", "@@ -1 +1 @@", "-x", "-y", "+z", ""].join("\n"),
    )
    expect(result.files[0]?.removed).toBe(1)
    expect(result.problems).toHaveLength(1)
    expect(result.problems[0]).toMatch(/^line 6: hunk line does not fit/)
  })

  it("skips a malformed hunk header until the next hunk", () => {
    const result = parseDiff(
      ["diff --git a/a b/a", "--- a/a", "+++ b/a", "@@ -x +y @@", "-x", "@@ -5 +5 @@", "-y", "+z", ""].join("\n"),
    )
    expect(result.files[0]?.hunks.map((hunk) => hunk.oldStart)).toEqual([5])
    expect(result.problems).toEqual(['line 4: malformed hunk header "@@ -x +y @@"; lines skipped until the next hunk'])
  })

  it("returns no files and a problem for text that is not a diff", () => {
    expect(parseDiff("hello\nworld\n")).toEqual({ files: [], problems: ['no "diff --git" section found'] })
    expect(parseDiff(new Uint8Array([0, 255, 10, 1]))).toEqual({
      files: [],
      problems: ['no "diff --git" section found'],
    })
    expect(parseDiff("")).toEqual({ files: [], problems: [] })
  })

  it("skips a section with no readable file name", () => {
    const result = parseDiff(["diff --git nonsense", "new file mode 100644", ...two.slice(8)].join("\n"))
    expect(result.files.map((file) => file.path)).toEqual(["b.txt"])
    expect(result.problems).toEqual([
      'line 1: cannot read the file names of "diff --git nonsense"',
      "line 1: section has no file name; skipped",
    ])
  })
})

describe("patch file names", () => {
  it("flattens folders into one file name", () => {
    expect(patchFileName("src/auth/session.ts")).toBe("diff/src__auth__session.ts.patch")
    expect(patchFileName("..")).toBe("diff/...patch")
  })

  it("shortens long names with a stable hash", () => {
    const long = `${"ä/".repeat(200)}file.ts`
    const name = patchFileName(long)
    const component = name.slice("diff/".length)
    expect(Buffer.byteLength(component)).toBeLessThan(255)
    expect(component).toMatch(/^(ä__)+ä?_?_?~[0-9a-f]{8}\.patch$/)
    expect(patchFileName(long)).toBe(name)
    expect(patchFileName(`${long}x`)).not.toBe(name)
  })

  it("keeps names free of slashes and NUL", () => {
    const component = patchFileName("a/\0/b").slice("diff/".length)
    expect(component).not.toMatch(/[/\0]/)
  })

  it("gives colliding paths distinct names, whatever their order", () => {
    const paths = ["a__b", "a/b", "README.md", "readme.md", "src/x.ts"]
    const names = assignPatchFiles(paths)
    expect(names.get("src/x.ts")).toBe("diff/src__x.ts.patch")
    const folded = [...names.values()].map((name) => name.toLowerCase())
    expect(new Set(folded).size).toBe(paths.length)
    expect(names.get("a/b")).toMatch(/^diff\/a__b~[0-9a-f]{8}\.patch$/)
    expect(assignPatchFiles([...paths].reverse())).toEqual(names)
  })

  it("refuses to write outside the target folder", async () => {
    const file = parseDiff("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n").files[0] as DiffFile
    await expect(writePatchFiles(join(root, "escape"), [{ file, patchFile: "../x.patch" }])).rejects.toThrow(
      "not inside the output directory",
    )
  })
})

interface Summary {
  path: string
  oldPath: string
  status: FileStatus
  binary: boolean
  added: number
  removed: number
  oldMode: string | null
  newMode: string | null
}

function summary(file: DiffFile): Summary {
  const { path, oldPath, status, binary, added, removed, oldMode, newMode } = file
  return { path, oldPath, status, binary, added, removed, oldMode, newMode }
}

const STATUSES: Record<string, FileStatus> = {
  A: "added",
  D: "deleted",
  M: "modified",
  T: "modified",
  R: "renamed",
  C: "copied",
}

/** What git itself says about the change, from `--numstat -z` and `--raw -z`. */
function expected(range: string[]): Summary[] {
  const numstat = text(git(["diff", "--numstat", "-z", "-M", "-C", ...range])).split("\0")
  const raw = text(git(["diff", "--raw", "-z", "-M", "-C", ...range])).split("\0")
  const result: Summary[] = []
  let stat = 0
  let entry = 0
  while (entry < raw.length - 1) {
    const [oldMode = "", newMode = "", , , letters = ""] = (raw[entry] ?? "").slice(1).split(" ")
    const status = STATUSES[letters.charAt(0)] ?? "modified"
    const moved = status === "renamed" || status === "copied"
    const oldPath = raw[entry + 1] ?? ""
    const path = moved ? (raw[entry + 2] ?? "") : oldPath
    entry += moved ? 3 : 2
    const [added = "", removed = ""] = (numstat[stat] ?? "").split("\t")
    stat += moved ? 3 : 1
    // A rename or copy without content change prints no `index` line, so the diff states no mode.
    const stated = !(moved && letters.slice(1) === "100" && oldMode === newMode)
    result.push({
      path,
      oldPath,
      status,
      binary: added === "-",
      added: added === "-" ? 0 : Number(added),
      removed: removed === "-" ? 0 : Number(removed),
      oldMode: oldMode === "000000" || !stated ? null : oldMode,
      newMode: newMode === "000000" || !stated ? null : newMode,
    })
  }
  return result
}

function file(path: string): DiffFile {
  const found = files.find((candidate) => candidate.path === path)
  if (found === undefined) throw new Error(`no file ${path} in ${files.map((candidate) => candidate.path).join(", ")}`)
  return found
}

function git(args: string[], extra: Record<string, string> = {}, stdin?: Uint8Array): Uint8Array {
  const child = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], {
    cwd: repo,
    env: { ...environment, ...extra },
    stdin: stdin ?? "ignore",
  })
  if (child.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${text(child.stderr)}`)
  return child.stdout
}

function gitlink(sha: string, path: string): void {
  git(["update-index", "--add", "--cacheinfo", `160000,${sha},${path}`])
}

function put(path: string, content: string | Uint8Array): void {
  const target = join(repo, path)
  mkdirSync(dirname(target), { recursive: true })
  writeFileSync(target, content)
}

function move(from: string, to: string): void {
  git(["mv", from, to])
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes)
}

function numbered(count: number): string {
  return Array.from({ length: count }, (_, index) => `line ${index + 1}\n`).join("")
}

/** Twelve distinctive lines, so rename and copy detection pairs files by name only. */
function paragraph(topic: string): string {
  return Array.from({ length: 12 }, (_, index) => `${topic} line ${index + 1} of a paragraph about ${topic}\n`).join("")
}

function binary(seed: number): Uint8Array {
  const random = seeded(seed)
  return Uint8Array.from({ length: 600 }, (_, index) => (index % 50 === 0 ? 0 : Math.floor(random() * 256)))
}

function seeded(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}
