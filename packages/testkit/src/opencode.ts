import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

/** The OpenCode version the project is built and tested against. */
export const opencodeVersion = "1.18.33"

/**
 * Finds the real `opencode` binary: $OPENCODE_BIN, else the platform package that opencode-ai
 * installs (its own bin/ is a stub until its postinstall runs, which npm 11 and bun may block).
 */
export function findOpencodeBinary(env: Record<string, string | undefined> = process.env): string {
  if (env.OPENCODE_BIN) return env.OPENCODE_BIN
  const require = createRequire(import.meta.url)
  const wrapper = dirname(require.resolve("opencode-ai/package.json"))
  const fromWrapper = createRequire(join(wrapper, "package.json"))
  const platform = `opencode-${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
  for (const name of [platform, `${platform}-baseline`, `${platform}-musl`]) {
    try {
      const binary = join(dirname(fromWrapper.resolve(`${name}/package.json`)), "bin", "opencode")
      if (existsSync(binary)) return binary
    } catch {
      // not installed for this platform variant; try the next
    }
  }
  return join(wrapper, "bin", "opencode.exe")
}

/** An isolated home for OpenCode: its own XDG dirs, a pre-seeded config dir, offline flags. */
export interface OpencodeSandbox {
  root: string
  env(extra?: Record<string, string>): Record<string, string>
  remove(): Promise<void>
}

/**
 * Creates XDG dirs under a temp root and pre-seeds the global config dir so OpenCode does not try
 * to npm-install @opencode-ai/plugin there (which costs up to 70 s offline).
 */
export async function createOpencodeSandbox(): Promise<OpencodeSandbox> {
  const root = await mkdtemp(join(tmpdir(), "ocr-opencode-"))
  const dirs = { config: join(root, "config"), data: join(root, "data"), cache: join(root, "cache"), state: join(root, "state") }
  for (const dir of Object.values(dirs)) await mkdir(dir, { recursive: true })
  await seedConfigDir(join(dirs.config, "opencode"))
  return {
    root,
    env(extra = {}) {
      return {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: root,
        XDG_CONFIG_HOME: dirs.config,
        XDG_DATA_HOME: dirs.data,
        XDG_CACHE_HOME: dirs.cache,
        XDG_STATE_HOME: dirs.state,
        OPENCODE_DISABLE_PROJECT_CONFIG: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_SHARE: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_CLAUDE_CODE: "1",
        OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
        npm_config_fetch_retries: "0",
        npm_config_offline: "true",
        ...extra,
      }
    },
    remove: () => rm(root, { recursive: true, force: true }),
  }
}

/** Writes the files that make OpenCode skip its background install in a config dir. */
export async function seedConfigDir(dir: string): Promise<void> {
  await mkdir(join(dir, "node_modules"), { recursive: true })
  const dependencies = { "@opencode-ai/plugin": opencodeVersion }
  await writeFile(join(dir, "package.json"), JSON.stringify({ dependencies }))
  await writeFile(join(dir, "package-lock.json"), JSON.stringify({ lockfileVersion: 3, requires: true, packages: { "": { dependencies } } }))
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
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
    return { code, stdout, stderr }
  } finally {
    clearTimeout(timer)
  }
}
