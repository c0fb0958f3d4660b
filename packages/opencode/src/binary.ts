import { existsSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/** The OpenCode version the project is built and tested against. */
export const opencodeVersion = "1.18.33"

/**
 * Finds the real `opencode` binary: `OPENCODE_BIN`, else the platform package that `opencode-ai`
 * installs next to the package at `resolveFrom` (opencode-ai's own bin/ is a 479-byte stub until its
 * postinstall runs, which npm 11 and bun may refuse), else `opencode` on PATH.
 */
export function findOpencodeBinary(env: Record<string, string | undefined>, resolveFrom: string): string {
  if (env.OPENCODE_BIN) return env.OPENCODE_BIN
  try {
    const wrapper = dirname(createRequire(resolveFrom).resolve("opencode-ai/package.json"))
    const fromWrapper = createRequire(join(wrapper, "package.json"))
    const platform = `opencode-${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`
    for (const name of [platform, `${platform}-baseline`, `${platform}-musl`, `${platform}-baseline-musl`]) {
      try {
        const binary = join(dirname(fromWrapper.resolve(`${name}/package.json`)), "bin", "opencode")
        if (existsSync(binary)) return binary
      } catch {
        // this platform variant is not installed; try the next
      }
    }
    const linked = join(wrapper, "bin", "opencode.exe")
    if (existsSync(linked)) return linked
  } catch {
    // opencode-ai is not installed beside us; fall back to PATH
  }
  return "opencode"
}

/**
 * Settings that keep OpenCode from reading the repository's own (untrusted) config and from reaching
 * the network for anything but the model: no models.dev fetch, update check, sharing, LSP download,
 * Claude Code or external skill scan, and no npm retries if a config dir ever needs an install.
 */
export const opencodeQuietEnv: Record<string, string> = {
  OPENCODE_DISABLE_PROJECT_CONFIG: "1",
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
  npm_config_fetch_retries: "0",
}

/** XDG directories for the OpenCode child, kept apart from the user's own OpenCode state. */
export interface OpencodeHome {
  config: string
  data: string
  cache: string
  state: string
}

/**
 * Creates the child's XDG dirs under `root` and pre-seeds its config dir so OpenCode does not
 * npm-install @opencode-ai/plugin there on start (up to 70 s when the registry is unreachable).
 */
export async function prepareOpencodeHome(root: string): Promise<OpencodeHome> {
  const home = {
    config: join(root, "config"),
    data: join(root, "data"),
    cache: join(root, "cache"),
    state: join(root, "state"),
  }
  for (const dir of Object.values(home)) await mkdir(dir, { recursive: true })
  const configDir = join(home.config, "opencode")
  await mkdir(join(configDir, "node_modules"), { recursive: true })
  const dependencies = { "@opencode-ai/plugin": opencodeVersion }
  await writeFile(join(configDir, "package.json"), JSON.stringify({ dependencies }))
  await writeFile(
    join(configDir, "package-lock.json"),
    JSON.stringify({ lockfileVersion: 3, requires: true, packages: { "": { dependencies } } }),
  )
  return home
}

/** The environment variables that point OpenCode at a prepared home. */
export function opencodeHomeEnv(home: OpencodeHome): Record<string, string> {
  return {
    XDG_CONFIG_HOME: home.config,
    XDG_DATA_HOME: home.data,
    XDG_CACHE_HOME: home.cache,
    XDG_STATE_HOME: home.state,
  }
}
