import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, test } from "vitest"

const mainModule = fileURLToPath(new URL("./main.ts", import.meta.url))

// The libraries only some commands need: the platforms' clients, tracing, the MCP server.
const heavy = /@gitbeaker\/|@octokit\/|@opentelemetry\/|@modelcontextprotocol\//
// What planning needs and `--version` or `--help` do not.
const planning = /\/packages\/core\/|\/zod\/|\/pino\//

// Runs main in a fresh Bun process (vitest's own module cache would hide what loads) and returns
// its exit code and every module it loaded.
function run(argv: string[], cwd: string): { code: number; loaded: string[] } {
  const script = `
const { main } = await import(${JSON.stringify(mainModule)})
const quiet = () => {}
const code = await main({ argv: ${JSON.stringify(argv)}, env: process.env, cwd: process.cwd(), stdout: quiet, stderr: quiet, stdin: async () => new Uint8Array(), execPath: process.execPath })
console.log(JSON.stringify({ code, loaded: Object.keys(require.cache) }))`
  const child = Bun.spawnSync([process.execPath, "-e", script], { cwd, stdout: "pipe", stderr: "pipe" })
  if (child.exitCode !== 0) throw new Error(`bun -e failed: ${child.stderr.toString()}`)
  return JSON.parse(child.stdout.toString()) as { code: number; loaded: string[] }
}

describe("start-up", () => {
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ocr-startup-"))
    const patch = [
      "diff --git a/src/app.ts b/src/app.ts",
      "index 1111111..2222222 100644",
      "--- a/src/app.ts",
      "+++ b/src/app.ts",
      "@@ -1 +1 @@",
      "-export const a = 1",
      "+export const a = 2",
      "",
    ].join("\n")
    await writeFile(join(dir, "change.diff"), patch)
  })

  afterAll(() => rm(dir, { recursive: true, force: true }))

  test("--version and --help load neither core nor any library", () => {
    for (const argv of [["--version"], ["plan", "--help"], ["review", "--help"]]) {
      const { code, loaded } = run(argv, dir)
      expect(code, argv.join(" ")).toBe(0)
      expect(
        loaded.filter((path) => heavy.test(path) || planning.test(path)),
        argv.join(" "),
      ).toEqual([])
    }
  })

  test("a plan that logs nothing loads no logger, YAML, XML or diff library, and no code it does not run", () => {
    const { code, loaded } = run(["plan", "--json", "--patch", "change.diff", "--work-dir", join(dir, "work")], dir)
    expect(code).toBe(0)
    // pino (nothing logged at warn), yaml (no standards), fast-xml-parser and diff (no review read or
    // traced), node:util (plain flags), the AGENTS.md checks (no AGENTS.md changed), reviewer-config.
    const unused =
      /\/(pino|yaml|fast-xml-parser|diff)@|^node:util$|\/agents-md\/src\/(checks|markdown)\.ts$|\/reviewer-config\//
    expect(loaded.filter((path) => unused.test(path))).toEqual([])
  })

  test("a local plan loads core but not the platforms' clients, tracing or the MCP server", () => {
    const { code, loaded } = run(["plan", "--json", "--patch", "change.diff", "--work-dir", join(dir, "work")], dir)
    expect(code).toBe(0)
    expect(loaded.some((path) => planning.test(path))).toBe(true)
    expect(loaded.filter((path) => heavy.test(path))).toEqual([])
  })
})
