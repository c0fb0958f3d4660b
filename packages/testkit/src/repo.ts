import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

/** A throwaway git repository for tests, isolated from the developer's git config. */
export interface TempRepo {
  dir: string
  /** git with a fixed identity and no system/global config; throws on a non-zero exit. */
  git(...args: string[]): string
  /** Writes files (string or bytes) relative to the repo, creating directories. */
  write(files: Record<string, string | Uint8Array>): Promise<void>
  /** Stages everything and commits; returns the new commit's sha. */
  commit(message: string): string
  remove(): Promise<void>
}

/** Creates an empty repository on branch `main` in a new temp directory. */
export async function createTempRepo(prefix = "ocr-repo-"): Promise<TempRepo> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  const env = gitEnv(dir)
  const git = (...args: string[]) => {
    const result = Bun.spawnSync(["git", ...args], { cwd: dir, env, stdout: "pipe", stderr: "pipe" })
    if (result.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${result.stderr.toString()}`)
    return result.stdout.toString()
  }
  git("init", "-q", "-b", "main")
  return {
    dir,
    git,
    async write(files) {
      for (const [path, content] of Object.entries(files)) {
        const target = join(dir, path)
        await mkdir(dirname(target), { recursive: true })
        await writeFile(target, content)
      }
    },
    commit(message) {
      git("add", "-A")
      git("commit", "-q", "--allow-empty", "-m", message)
      return git("rev-parse", "HEAD").trim()
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

/** The environment git runs with in tests: no user or system config, a fixed identity and clock. */
export function gitEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.test",
    GIT_COMMITTER_NAME: "Test Author",
    GIT_COMMITTER_EMAIL: "author@example.test",
    GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
    LC_ALL: "C",
  }
}
