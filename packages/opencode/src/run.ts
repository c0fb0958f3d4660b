import { opencodeQuietEnv } from "./binary"
import type { OpencodeConfig } from "./config"

/** One `opencode run` of a config's default agent, with the prompt on stdin. */
export interface RunOptions {
  /** The `opencode` binary (see findOpencodeBinary). */
  binary: string
  /** The project directory: the process's cwd and its PWD. */
  directory: string
  /** The whole config, passed in OPENCODE_CONFIG_CONTENT; its `default_agent` is the agent that runs. */
  config: OpencodeConfig
  /** The root session's title (given, so OpenCode asks no model for one). */
  title: string
  /** The bytes sent on stdin (never argv: a multi-megabyte prompt would hit E2BIG). */
  prompt: Uint8Array | string
  /** The child's environment before OpenCode's own settings are added. */
  env: Record<string, string>
}

/** The running `opencode run` process: JSONL on stdout (see events.ts), logs on stderr. */
export interface RunProcess {
  readonly stdout: ReadableStream<Uint8Array>
  readonly stderr: ReadableStream<Uint8Array>
  readonly exited: Promise<number>
  readonly exitCode: number | null
  kill(signal: "SIGTERM" | "SIGKILL"): void
}

/**
 * The argv after the binary: JSONL output, the agent named explicitly, and a title, which saves the
 * title request to `small_model` (docs/opencode.md, pitfalls 2 and 15).
 */
export function runArgs(agent: string, title: string): string[] {
  return ["run", "--format", "json", "--agent", agent, "--title", title]
}

/** The environment of `opencode run`: `env`, then PWD, the config and the quiet settings. */
export function runEnv(options: Pick<RunOptions, "directory" | "config" | "env">): Record<string, string> {
  return {
    ...options.env,
    // OpenCode takes the project directory from PWD, not from the process's cwd (docs/opencode.md, pitfall 1).
    PWD: options.directory,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(options.config),
    ...opencodeQuietEnv,
    // A heap cap for the Bun runtime inside opencode: JSC sizes its heap to this much RAM.
    BUN_JSC_forceRAMSize: options.env.BUN_JSC_forceRAMSize ?? String(2 * 1024 ** 3),
  }
}

/**
 * Starts `opencode run` for the config's default agent with the prompt on stdin. Throws at once,
 * as Bun.spawn does, when the binary is missing or not executable.
 */
export function spawnRun(options: RunOptions): RunProcess {
  return Bun.spawn([options.binary, ...runArgs(options.config.default_agent, options.title)], {
    cwd: options.directory,
    env: runEnv(options),
    stdin: new Blob([options.prompt]),
    stdout: "pipe",
    stderr: "pipe",
  })
}
