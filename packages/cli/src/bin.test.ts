import { rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))

function bunx(args: string[]) {
  // The way a newcomer runs it after `bun install`: bunx resolves node_modules/.bin at the root.
  const child = Bun.spawnSync(["bunx", "opencode-reviewer", ...args], { cwd: root, stdout: "pipe", stderr: "pipe" })
  return { code: child.exitCode, stdout: child.stdout.toString(), stderr: child.stderr.toString() }
}

describe("the opencode-reviewer binary", () => {
  test("prints usage for --help and exits 0", () => {
    const result = bunx(["plan", "--help"])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Usage: opencode-reviewer plan [options]")
  })

  test("exits 1 with a message on a wrong flag, nothing on stdout", () => {
    const result = bunx(["plan", "--nope"])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("error: Unknown option '--nope'")
  })

  test("plans the repository it is run in", () => {
    const workDir = join(tmpdir(), `ocr-bin-test-${process.pid}`)
    const result = bunx(["plan", "--json", "--base", "HEAD", "--work-dir", workDir])
    rmSync(workDir, { recursive: true, force: true })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ tier: "trivial", files: [] })
  })
})
