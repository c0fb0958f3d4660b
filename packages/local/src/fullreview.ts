import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** What the /fullreview tool needs from the OpenCode session it runs in. */
export interface FullReviewOptions {
  /** The repository (the session's worktree). */
  directory: string
  /** Branch or commit to compare against; default: the merge base with the default branch. */
  base?: string | undefined
  /** What the user typed after /fullreview (may be wrapped in quotes by OpenCode). */
  userArguments?: string | undefined
  env: Record<string, string | undefined>
  signal?: AbortSignal
  /** Progress lines from the review ("security started on …"), for the tool's live title. */
  onProgress?: (line: string) => void
}

/** The tool result: the review as markdown, plus what a program may want from it. */
export interface FullReviewResult {
  title: string
  output: string
  metadata: { decision: string; tier: string; exitCode: number; costUsd: number; findings: number; outputDir: string }
}

interface RecordFacts {
  decision: string
  tier: string
  findings: unknown[]
  usage?: { costUsd?: number }
}

/**
 * Runs `opencode-reviewer review --working-tree --vcs local` in the repository, as its own process
 * (with its own isolated OpenCode child), and returns review.md with a line on what CI would do.
 * Exit 0 and 2 are reviews; anything else is an error carrying the CLI's own message.
 */
export async function runFullReview(options: FullReviewOptions): Promise<FullReviewResult> {
  const command = cliCommand(options.env)
  const base = options.base?.trim() || baseFromArguments(options.userArguments)
  const outputDir = join(options.directory, ".opencode-reviewer")
  const argv = [
    ...command,
    "review",
    "--repo",
    options.directory,
    "--working-tree",
    "--vcs",
    "local",
    "--output-dir",
    outputDir,
  ]
  if (base) argv.push("--base", base)
  const child = Bun.spawn(argv, {
    cwd: options.directory,
    env: { ...options.env, PWD: options.directory, ...userAuth(options.env) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  })
  const abort = () => child.kill()
  options.signal?.addEventListener("abort", abort, { once: true })
  try {
    const [stderr] = await Promise.all([
      readLines(child.stderr, (line) => options.onProgress?.(progressTitle(line))),
      new Response(child.stdout).text(),
    ])
    const code = await child.exited
    if (options.signal?.aborted) throw new Error("the review was cancelled")
    if (code !== 0 && code !== 2) {
      const tail = stderr
        .filter((line) => line.trim() !== "")
        .slice(-15)
        .join("\n")
      throw new Error(`opencode-reviewer could not review the changes (exit ${code}):\n${tail}`)
    }
    const record = JSON.parse(await readFile(join(outputDir, "review.json"), "utf8")) as RecordFacts
    const markdown = await readFile(join(outputDir, "review.md"), "utf8")
    const ci =
      code === 2
        ? `In CI this decision (${record.decision}) fails the review job with exit 2, so "Pipelines must succeed" blocks the merge.`
        : `In CI this decision (${record.decision}) lets the review job pass.`
    return {
      title: `fullreview: ${record.decision.replaceAll("_", " ")}`,
      output: `${markdown.trimEnd()}\n\n${ci}\nFull outputs: ${outputDir} (review.json, review.md, SARIF, Code Quality).\n`,
      metadata: {
        decision: record.decision,
        tier: record.tier,
        exitCode: code,
        costUsd: record.usage?.costUsd ?? 0,
        findings: record.findings.length,
        outputDir,
      },
    }
  } finally {
    options.signal?.removeEventListener("abort", abort)
  }
}

/**
 * How to start the CLI: `OPENCODE_REVIEWER_CLI` (a script run with Bun), else the published
 * bundle's `cli.js` beside this module, else the workspace's bin; run with Bun from PATH.
 */
export function cliCommand(env: Record<string, string | undefined>, moduleUrl: string = import.meta.url): string[] {
  const script =
    env.OPENCODE_REVIEWER_CLI ||
    [
      fileURLToPath(new URL("./cli.js", moduleUrl)),
      fileURLToPath(new URL("../../cli/bin/opencode-reviewer.ts", moduleUrl)),
    ].find((path) => existsSync(path))
  if (!script)
    throw new Error(
      "cannot find the opencode-reviewer CLI next to the /fullreview plugin; reinstall opencode-reviewer or set OPENCODE_REVIEWER_CLI",
    )
  const bun = Bun.which("bun", { PATH: env.PATH ?? "" })
  if (!bun)
    throw new Error(
      "the /fullreview plugin needs Bun (1.3 or later) on PATH to run opencode-reviewer; install it from https://bun.sh or with npm i -g bun",
    )
  return [bun, script]
}

/** `/fullreview main`, `/fullreview --base main`, `/fullreview "--base=origin/main"`: the base ref, if any. */
export function baseFromArguments(text: string | undefined): string | undefined {
  const words = (text ?? "")
    .trim()
    .replace(/^(["'])(.*)\1$/s, "$2")
    .split(/\s+/)
    .filter((word) => word !== "")
  const flag = words.findIndex((word) => word === "--base" || word.startsWith("--base="))
  const value =
    flag === -1
      ? words.length === 1
        ? words[0]
        : undefined
      : words[flag]!.startsWith("--base=")
        ? words[flag]!.slice(7)
        : words[flag + 1]
  // A ref name, never an option or something a shell would treat specially.
  return value !== undefined && /^[\w][\w./@^~-]*$/.test(value) ? value : undefined
}

// Keys from `opencode auth login` live in OpenCode's auth.json, which the review's isolated OpenCode
// home would not see: the CLI borrows it for the run.
function userAuth(env: Record<string, string | undefined>): Record<string, string> {
  if (env.OPENCODE_REVIEWER_AUTH_FILE) return {}
  const data = env.XDG_DATA_HOME || (env.HOME ? join(env.HOME, ".local/share") : null)
  const file = data ? join(data, "opencode", "auth.json") : null
  return file && existsSync(file) ? { OPENCODE_REVIEWER_AUTH_FILE: file } : {}
}

function progressTitle(line: string): string {
  return `fullreview: ${line.replace(/^review:\s*/, "").trim()}`.slice(0, 120)
}

// Keeps the last 200 lines: enough for the error tail, bounded however chatty the review is.
async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<string[]> {
  const lines: string[] = []
  const decoder = new TextDecoder()
  let pending = ""
  for await (const chunk of stream) {
    pending += decoder.decode(chunk, { stream: true })
    const parts = pending.split("\n")
    pending = parts.pop() ?? ""
    for (const line of parts) {
      lines.push(line)
      if (lines.length > 200) lines.shift()
      if (line.trim() !== "") onLine(line)
    }
  }
  if (pending !== "") lines.push(pending)
  return lines
}
