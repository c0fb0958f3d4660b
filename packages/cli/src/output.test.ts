import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createTempRepo, gitEnv, type TempRepo } from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"

// The real bin file, run by the Bun that runs the tests: what `bunx opencode-reviewer` executes (and
// what packages/cli/scripts/pack.ts bundles into lib/cli.js).
const bin = fileURLToPath(new URL("../bin/opencode-reviewer.ts", import.meta.url))
const fileCount = 900
const warningCount = 2000

let repo: TempRepo
let scratch: string

beforeAll(async () => {
  repo = await createTempRepo("ocr-output-")
  await repo.write({ "README.md": "base\n" })
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write(
    Object.fromEntries(
      Array.from({ length: fileCount }, (_, index) => [
        `src/module${index}.ts`,
        `export const value${index} = ${index}\n`,
      ]),
    ),
  )
  repo.commit("many files")
  scratch = await mkdtemp(join(tmpdir(), "ocr-output-scratch-"))
})

afterAll(async () => {
  await repo?.remove()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

/**
 * Runs the CLI with stdout and stderr each piped into a reader that only starts reading after a
 * second (so the pipe buffer, 64 KiB on Linux, is full long before), as in
 * `opencode-reviewer plan --json | (sleep 1; wc -c)`. `reader` is the shell code that consumes a stream.
 */
function runPiped(args: string[], reader = (file: string) => `(sleep 1; cat > '${file}')`) {
  const out = join(scratch, "stdout.txt")
  const err = join(scratch, "stderr.txt")
  const rc = join(scratch, "rc.txt")
  // The CLI's stdout goes to the inner pipe, its stderr to the outer one; its exit code to a file.
  const script = `{ { "$@"; echo $? > '${rc}'; } | ${reader(out)}; } 2>&1 | ${reader(err)}`
  const env: Record<string, string> = {
    ...gitEnv(repo.dir),
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
  }
  const started = performance.now()
  const child = Bun.spawnSync(["sh", "-c", script, "sh", process.execPath, bin, ...args], {
    cwd: repo.dir,
    env,
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  })
  return { shellCode: child.exitCode, seconds: (performance.now() - started) / 1000, out, err, rc }
}

describe("the binary's output through a pipe to a slow reader", () => {
  test("plan --json arrives whole on stdout (well over 64 KiB), and so do stderr's warnings", async () => {
    // Unknown config keys each print a warning line on stderr: > 64 KiB of them.
    const config = join(scratch, "config.json")
    const keys = Array.from(
      { length: warningCount },
      (_, index) => `unknown_key_${String(index).padStart(4, "0")}_${"x".repeat(40)}`,
    )
    await writeFile(config, JSON.stringify(Object.fromEntries(keys.map((key) => [key, true]))))
    const workDir = join(scratch, "work")
    const run = runPiped([
      "plan",
      "--json",
      "--repo",
      repo.dir,
      "--base",
      "main",
      "--work-dir",
      workDir,
      "--config",
      config,
    ])
    expect(run.shellCode).toBe(0)
    expect((await readFile(run.rc, "utf8")).trim()).toBe("0")

    const stdout = await readFile(run.out, "utf8")
    expect(stdout.length).toBeGreaterThan(3 * 65_536)
    const plan = JSON.parse(stdout) as { totals: { files: number }; files: { path: string }[] }
    expect(plan.files).toHaveLength(fileCount)
    expect(plan.totals.files).toBe(fileCount)

    const stderr = await readFile(run.err, "utf8")
    expect(stderr.length).toBeGreaterThan(2 * 65_536)
    const warnings = stderr.split("\n").filter((line) => line.startsWith("warning: ") && line.endsWith(" is ignored"))
    expect(warnings).toHaveLength(warningCount)
    expect(warnings.at(-1)).toContain(keys.at(-1))
    expect(stderr.endsWith(`"${keys.at(-1)}" is ignored\n`)).toBe(true)
  })

  test("a reader that closes the pipe early ends the run quietly with the command's own exit code", async () => {
    const workDir = join(scratch, "work-closed")
    // stdout's reader takes 10 bytes and leaves; stderr is read normally to look for a crash.
    const run = runPiped(["plan", "--json", "--repo", repo.dir, "--base", "main", "--work-dir", workDir], (file) =>
      file.endsWith("stdout.txt") ? `head -c 10 > '${file}'` : `cat > '${file}'`,
    )
    expect(run.seconds).toBeLessThan(15)
    expect((await readFile(run.rc, "utf8")).trim()).toBe("0")
    expect(await readFile(run.out, "utf8")).toBe('{\n  "tier"')
    expect(await readFile(run.err, "utf8")).toBe("")
  })
})
