// `bun run bench`: prints numbers, asserts nothing. Part 1 (planning): start-up time of the CLI,
// then planning time and peak memory for a generated 5,000-file, 100,000-line change.

import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createTempRepo } from "@opencode-reviewer/testkit"

const cli = join(import.meta.dirname, "..", "packages", "cli", "bin", "opencode-reviewer.ts")
const runs = 5

interface Sample {
  ms: number
  maxRssMb: number
}

function run(args: string[], cwd: string): Sample {
  // Flush earlier writes first: this VM's disk stalls new files while it writes back old ones, and
  // that stall is the disk's, not the planner's.
  Bun.spawnSync(["sync"])
  const started = performance.now()
  const child = Bun.spawnSync(["bun", cli, ...args], { cwd, stdout: "pipe", stderr: "pipe" })
  const ms = performance.now() - started
  if (child.exitCode !== 0) throw new Error(`opencode-reviewer ${args.join(" ")} failed: ${child.stderr.toString()}`)
  return { ms, maxRssMb: (child.resourceUsage?.maxRSS ?? 0) / 1024 }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

function measure(label: string, args: string[], cwd: string) {
  run(args, cwd) // warm the file cache and Bun's transpile cache
  const samples = Array.from({ length: runs }, () => run(args, cwd))
  const ms = median(samples.map((sample) => sample.ms))
  const rss = Math.max(...samples.map((sample) => sample.maxRssMb))
  console.log(`${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms   peak RSS ${rss.toFixed(0).padStart(4)} MB`)
}

const files = 5_000
const linesPerFile = 10 // 10 added + 10 removed per file = 100,000 changed lines

console.log(`opencode-reviewer bench, part 1: planning (median of ${runs} runs, wall time of the whole process)`)
const repo = await createTempRepo("ocr-bench-")
try {
  const original = (file: number, line: number) =>
    `export const value_${file}_${line} = ${line} // original line ${line}`
  const source = (file: number, edited: boolean) =>
    Array.from({ length: 40 }, (_, line) =>
      edited && line % 4 === 0 ? original(file, line).replace("original", "edited") : original(file, line),
    ).join("\n") + "\n"
  for (let file = 0; file < files; file += 1) {
    const dir = join(repo.dir, "src", `module${Math.floor(file / 100)}`)
    await mkdir(dir, { recursive: true })
    await writeFile(join(dir, `file${file}.ts`), source(file, false))
  }
  const base = repo.commit("base")
  for (let file = 0; file < files; file += 1) {
    await writeFile(join(repo.dir, "src", `module${Math.floor(file / 100)}`, `file${file}.ts`), source(file, true))
  }
  const head = repo.commit("head")
  const numstat = repo.git("diff", "--shortstat", base, head).trim()
  console.log(`change: ${numstat} (${linesPerFile} edited lines per file)`)

  const scratch = await mkdtemp(join(tmpdir(), "ocr-bench-patch-"))
  const patch = join(scratch, "change.diff")
  await writeFile(patch, repo.git("diff", "-M", "-C", base, head))

  measure("cli start-up: --version", ["--version"], repo.dir)
  measure("cli start-up: plan --help", ["plan", "--help"], repo.dir)
  measure("plan --json, 5,000 files from git", ["plan", "--json", "--base", base, "--head", head], repo.dir)
  measure("plan --json, 5,000 files from --patch", ["plan", "--json", "--patch", patch], repo.dir)
  // The same plans with the work dir on tmpfs: what planning costs without the disk's file-creation
  // time (5,000 patch files; on a slow disk that is most of the wall time).
  if (existsSync("/dev/shm")) {
    const shm = await mkdtemp("/dev/shm/ocr-bench-")
    measure(
      "  same from git, work dir on tmpfs",
      ["plan", "--json", "--base", base, "--head", head, "--work-dir", shm],
      repo.dir,
    )
    measure("  same from --patch, work dir on tmpfs", ["plan", "--json", "--patch", patch, "--work-dir", shm], repo.dir)
    await rm(shm, { recursive: true, force: true })
  }
  await rm(scratch, { recursive: true, force: true })
} finally {
  await repo.remove()
}

await import("./review")
