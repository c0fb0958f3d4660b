import { spawnSync } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { CorpusCase } from "./corpus"
import { casesFromGit, type RunGit } from "./from-git"

let dir: string
let git: RunGit
const run = (...args: string[]) => {
  const result = spawnSync("git", args, {
    cwd: dir,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  })
  if (result.status !== 0) throw new Error(result.stderr)
  return result.stdout.trim()
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ocr-from-git-"))
  git = (args) => {
    const result = spawnSync("git", args, { cwd: dir, encoding: "utf8", maxBuffer: 64 << 20 })
    return result.status === 0 ? result.stdout : null
  }
  run("init", "-q", "-b", "main")
  await writeFile(join(dir, "page.ts"), "export const size = 20\n")
  run("add", "-A")
  run("commit", "-qm", "Start")
  await writeFile(join(dir, "page.ts"), "export const size = 20\nexport const end = (page) => page * size + size + 1\n")
  run("add", "-A")
  run("commit", "-qm", "Add page ends")
  await writeFile(join(dir, "README.md"), "# pages\n")
  run("add", "-A")
  run("commit", "-qm", "Docs")
  await writeFile(join(dir, "page.ts"), "export const size = 20\nexport const end = (page) => page * size + size\n")
  run("add", "-A")
  run("commit", "-qm", "Fix off-by-one in page end", "-m", "Each page returned one item too many.\n\nMore detail.")
})

afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe("casesFromGit", () => {
  test("a fix commit becomes a case: review the commit that wrote the line, against the fix's message", () => {
    const introduced = run("rev-parse", "HEAD~2")
    const { cases, skipped } = casesFromGit(dir, "HEAD~3..HEAD", git)
    expect(skipped).toEqual([])
    expect(cases).toHaveLength(1)
    const [only] = cases
    expect(CorpusCase.safeParse(only).success).toBe(true)
    expect(only).toMatchObject({
      title: "Add page ends",
      diff: { kind: "git", base: `${introduced}^`, head: introduced },
      golden: [
        {
          text: "Fix off-by-one in page end: Each page returned one item too many.",
          severity: "warning",
          file: "page.ts",
          line: 2,
        },
      ],
    })
  })

  test("commits that fix nothing are not cases; a fix that only adds code is skipped with why", async () => {
    await writeFile(join(dir, "extra.ts"), "export const x = 1\n")
    run("add", "-A")
    run("commit", "-qm", "fix: add the missing export")
    const { cases, skipped } = casesFromGit(dir, "HEAD~1..HEAD", git)
    expect(cases).toEqual([])
    expect(skipped).toEqual([expect.stringContaining("the fix changes no earlier line")])
    expect(casesFromGit(dir, "nope..HEAD", git).skipped[0]).toContain("git log nope..HEAD failed")
  })
})
