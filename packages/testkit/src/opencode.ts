import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  findOpencodeBinary as findBinary,
  opencodeHomeEnv,
  opencodeQuietEnv,
  opencodeVersion,
  prepareOpencodeHome,
} from "@opencode-reviewer/opencode/binary"

export { opencodeVersion }

/** The real `opencode` binary as installed with the workspace (or $OPENCODE_BIN). */
export function findOpencodeBinary(env: Record<string, string | undefined> = process.env): string {
  return findBinary(env, import.meta.url)
}

/** An isolated home for OpenCode: its own XDG dirs, a pre-seeded config dir, offline flags. */
export interface OpencodeSandbox {
  root: string
  env(extra?: Record<string, string>): Record<string, string>
  remove(): Promise<void>
}

/**
 * Creates XDG dirs under a temp root and pre-seeds the global config dir so OpenCode does not try
 * to npm-install its plugin package there (which costs up to 70 s offline; see prepareOpencodeHome).
 */
export async function createOpencodeSandbox(): Promise<OpencodeSandbox> {
  const root = await mkdtemp(join(tmpdir(), "ocr-opencode-"))
  const home = opencodeHomeEnv(await prepareOpencodeHome(root))
  return {
    root,
    env(extra = {}) {
      return {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: root,
        ...home,
        ...opencodeQuietEnv,
        npm_config_offline: "true",
        ...extra,
      }
    },
    remove: () => rm(root, { recursive: true, force: true }),
  }
}

/** The outcome of one opencode invocation. */
export interface OpencodeRun {
  code: number
  stdout: string
  stderr: string
}

/** Runs the real opencode binary in `cwd` inside the sandbox, with PWD set (OpenCode trusts PWD over cwd). */
export async function runOpencode(
  sandbox: OpencodeSandbox,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<OpencodeRun> {
  const child = Bun.spawn([findOpencodeBinary(), ...args], {
    cwd: options.cwd,
    env: sandbox.env({ PWD: options.cwd, ...options.env }),
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  })
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    return { code, stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}
