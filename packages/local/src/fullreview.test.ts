import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, test } from "vitest"
import { baseFromArguments, cliCommand } from "./fullreview"

describe("baseFromArguments", () => {
  test.each([
    ["main", "main"],
    ['"main"', "main"],
    ["--base origin/main", "origin/main"],
    ['"--base origin/release-1.2"', "origin/release-1.2"],
    ["--base=v1.2.0", "v1.2.0"],
    ["HEAD~3", "HEAD~3"],
    ["", undefined],
    ["please review carefully", undefined],
    ["--base", undefined],
    ["--base -x", undefined],
    ["$(touch pwned)", undefined],
    ["main;rm", undefined],
  ])("%j gives %j", (typed, base) => {
    expect(baseFromArguments(typed)).toBe(base)
  })
})

describe("cliCommand", () => {
  test("prefers OPENCODE_REVIEWER_CLI, then the bundle beside the plugin, and needs Bun on PATH", async () => {
    const dir = await mkdtemp(join(tmpdir(), "ocr-fullreview-"))
    try {
      await writeFile(join(dir, "cli.js"), "")
      const bundled = pathToFileURL(join(dir, "fullreview-plugin.js")).href
      const path = process.env.PATH ?? ""
      expect(cliCommand({ PATH: path }, bundled)[1]).toBe(join(dir, "cli.js"))
      expect(cliCommand({ PATH: path, OPENCODE_REVIEWER_CLI: "/opt/cli.js" }, bundled)[1]).toBe("/opt/cli.js")
      expect(cliCommand({ PATH: path }, bundled)[0]).toMatch(/bun(\.exe)?$/)
      expect(() => cliCommand({ PATH: dir }, bundled)).toThrow(/needs Bun \(1\.3 or later\) on PATH/)
      expect(() => cliCommand({ PATH: path }, pathToFileURL(join(dir, "nested/x/fullreview-plugin.js")).href)).toThrow(
        /cannot find the opencode-reviewer CLI/,
      )
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
