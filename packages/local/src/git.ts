import { ChangeReadError } from "@opencode-reviewer/core"

/** The outcome of one git invocation. */
export interface GitResult {
  code: number
  stdout: Uint8Array
  stderr: string
}

/** Runs git in one repository with a fixed, predictable configuration. */
export interface Git {
  readonly dir: string
  run(
    args: readonly string[],
    options?: { input?: Uint8Array | string; env?: Record<string, string> },
  ): Promise<GitResult>
  /** Runs git and returns stdout as text; a non-zero exit becomes ChangeReadError. */
  text(args: readonly string[], options?: { env?: Record<string, string> }): Promise<string>
}

// Settings that would change the diff's shape or make git talk to the terminal. The user's own
// git config is otherwise honoured (safe.directory, core.autocrlf, ...).
const fixedConfig = [
  "-c",
  "core.quotePath=true",
  "-c",
  "diff.noprefix=false",
  "-c",
  "diff.mnemonicPrefix=false",
  "-c",
  "diff.external=",
  "-c",
  "color.ui=false",
  "-c",
  "core.pager=cat",
]

const gitTimeoutMs = 120_000

/** A git runner for `dir`, with the environment the caller allows (the CLI passes its own). */
export function createGit(dir: string, env: Record<string, string | undefined>): Git {
  const baseEnv = { ...definedOnly(env), GIT_TERMINAL_PROMPT: "0", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" }
  // Synchronous on purpose: Bun's async pipe reader holds ~40x the output in memory (490 MB for an
  // 11 MB diff of 5,000 files), spawnSync stays near the output's size. git is local and quick; the
  // timeout keeps a wedged repository (a lock, a slow network filesystem) from hanging the job.
  const run: Git["run"] = async (args, options = {}) => {
    const child = Bun.spawnSync(["git", ...fixedConfig, ...args], {
      cwd: dir,
      env: { ...baseEnv, ...options.env },
      stdin:
        options.input === undefined
          ? "ignore"
          : typeof options.input === "string"
            ? new TextEncoder().encode(options.input)
            : options.input,
      stdout: "pipe",
      stderr: "pipe",
      timeout: gitTimeoutMs,
    })
    const stdout = new Uint8Array(child.stdout.buffer, child.stdout.byteOffset, child.stdout.byteLength)
    const stderr = child.stderr.toString()
    if (child.exitedDueToTimeout)
      return { code: 124, stdout, stderr: `${stderr}git timed out after ${gitTimeoutMs / 1000} s` }
    return { code: child.exitCode ?? 128, stdout, stderr }
  }
  return {
    dir,
    run,
    async text(args, options) {
      const result = await run(args, options)
      if (result.code !== 0) {
        throw new ChangeReadError(`git ${args.join(" ")} failed: ${result.stderr.trim() || `exit ${result.code}`}`, {
          source: dir,
        })
      }
      return new TextDecoder().decode(result.stdout)
    },
  }
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))
}
