// `bun run bench`, part 1 (planning): the CLI's start-up, then planning a generated 5,000-file,
// 100,000-changed-line change: wall time, time to the first byte of output and peak memory of the
// whole process, with the work dir on the ordinary disk (and, for comparison, on tmpfs).
import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createTempRepo } from "@opencode-reviewer/testkit"

const cli = join(import.meta.dirname, "..", "packages", "cli", "bin", "opencode-reviewer.ts")
const runs = 5
const files = 5_000
const linesPerFile = 10 // 10 added + 10 removed per file = 100,000 changed lines

/** One measured command: medians of `runs` runs after a warm-up, peak memory over all of them. */
export interface Measured {
  label: string
  ms: number
  firstByteMs: number
  maxRssMb: number
}

/** What part 1 measures. */
export interface PlanningFigures {
  change: string
  rows: Measured[]
  /** Median wall of `--version` and of `plan --help`, the larger. */
  startupMs: number
  /** `plan --json` of the 5,000-file change from git, work dir on disk. */
  planMs: number
  planFirstByteMs: number
  planRssMb: number
}

interface Sample {
  ms: number
  firstByteMs: number
  maxRssMb: number
}

async function run(args: string[], cwd: string): Promise<Sample> {
  // Flush earlier writes first: this VM's disk stalls new files while it writes back old ones, and
  // that stall is the disk's, not the planner's.
  Bun.spawnSync(["sync"])
  const started = performance.now()
  const child = Bun.spawn(["bun", cli, ...args], { cwd, stdout: "pipe", stderr: "pipe" })
  let firstByteMs = Number.NaN
  const stderr = new Response(child.stderr).text()
  for await (const chunk of child.stdout) {
    if (Number.isNaN(firstByteMs) && chunk.length > 0) firstByteMs = performance.now() - started
  }
  const code = await child.exited
  const ms = performance.now() - started
  if (code !== 0) throw new Error(`opencode-reviewer ${args.join(" ")} failed: ${await stderr}`)
  return { ms, firstByteMs, maxRssMb: (child.resourceUsage()?.maxRSS ?? 0) / 1024 }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

async function measure(label: string, args: string[], cwd: string): Promise<Measured> {
  await run(args, cwd) // warm the file cache and Bun's transpile cache
  const samples: Sample[] = []
  for (let index = 0; index < runs; index += 1) samples.push(await run(args, cwd))
  return {
    label,
    ms: median(samples.map((sample) => sample.ms)),
    firstByteMs: median(samples.map((sample) => sample.firstByteMs)),
    maxRssMb: Math.max(...samples.map((sample) => sample.maxRssMb)),
  }
}

/** Runs part 1; `progress` gets a line as each figure is ready. */
export async function measurePlanning(progress: (line: string) => void): Promise<PlanningFigures> {
  const repo = await createTempRepo("ocr-bench-")
  const scratch = await mkdtemp(join(tmpdir(), "ocr-bench-patch-"))
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
    // A pipeline reviews a clone, whose objects are packed; 5,000 loose objects would measure git's
    // object lookup instead of the planner.
    repo.git("gc", "-q")
    const change = `${repo.git("diff", "--shortstat", base, head).trim()} (${linesPerFile} edited lines per file)`
    progress(`change: ${change}`)
    const patch = join(scratch, "change.diff")
    await writeFile(patch, repo.git("diff", "-M", "-C", base, head))

    const rows: Measured[] = []
    const add = async (label: string, args: string[]) => {
      const row = await measure(label, args, repo.dir)
      rows.push(row)
      progress(formatRow(row))
      return row
    }
    const version = await add("cli start-up: --version", ["--version"])
    const help = await add("cli start-up: plan --help", ["plan", "--help"])
    const fromGit = await add("plan --json, 5,000 files from git", ["plan", "--json", "--base", base, "--head", head])
    await add("plan --json, 5,000 files from --patch", ["plan", "--json", "--patch", patch])
    // The same plans with the work dir on tmpfs: what planning costs without the disk's file-creation time.
    if (existsSync("/dev/shm")) {
      const shm = await mkdtemp("/dev/shm/ocr-bench-")
      try {
        await add("  same from git, work dir on tmpfs", [
          "plan",
          "--json",
          "--base",
          base,
          "--head",
          head,
          "--work-dir",
          shm,
        ])
        await add("  same from --patch, work dir on tmpfs", ["plan", "--json", "--patch", patch, "--work-dir", shm])
      } finally {
        await rm(shm, { recursive: true, force: true })
      }
    }
    return {
      change,
      rows,
      startupMs: Math.max(version.ms, help.ms),
      planMs: fromGit.ms,
      planFirstByteMs: fromGit.firstByteMs,
      planRssMb: fromGit.maxRssMb,
    }
  } finally {
    await rm(scratch, { recursive: true, force: true })
    await repo.remove()
  }
}

/** One table line of part 1. */
export function formatRow(row: Measured): string {
  const first = Number.isNaN(row.firstByteMs) ? "" : `   first byte ${row.firstByteMs.toFixed(0).padStart(5)} ms`
  return `${row.label.padEnd(44)} ${row.ms.toFixed(0).padStart(6)} ms   peak RSS ${row.maxRssMb.toFixed(0).padStart(4)} MB${first}`
}
