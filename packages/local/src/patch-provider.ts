import { readdir } from "node:fs/promises"
import { isAbsolute, join, relative, resolve, sep } from "node:path"
import { anonymousMergeRequest, type VcsProvider } from "@opencode-reviewer/core"

/** A unified diff given directly (`--patch FILE` or stdin) instead of read from git. */
export interface PatchOptions {
  patch: Uint8Array
  /** Where the patch came from, for messages ("patch file fix.diff", "stdin"). */
  source: string
  /** Where trusted files (the config) are read from when the patch has no repository of its own. */
  trustedDir?: string | undefined
  title?: string | undefined
  description?: string | undefined
}

/** A VCS provider over a patch: nothing beyond the diff is known, so file heads come only from hunks. */
export function createPatchProvider(options: PatchOptions): VcsProvider {
  return {
    name: "patch",
    async readChange() {
      return {
        source: options.source,
        diff: options.patch,
        mergeRequest: anonymousMergeRequest(options.title ?? `Patch from ${options.source}`, options.description ?? ""),
        comments: [],
        previousReview: null,
        customInstructions: null,
        readHeads: async () => new Map(),
        // A bare patch carries no file beyond its hunks: callers fall back to what the diff shows.
        readHeadFile: async () => null,
      }
    },
    // No merge request to post on: the CLI's local outputs are the whole publication.
    publish: async () => ({ files: [], lines: [] }),
    async readTrustedFile(path) {
      if (!options.trustedDir) return null
      const file = Bun.file(join(options.trustedDir, path))
      return (await file.exists()) ? file.text() : null
    },
    async listTrustedFiles(dir) {
      if (!options.trustedDir) return null
      return listFolder(options.trustedDir, dir)
    },
  }
}

// Regular files only: a symlink could point anywhere on the runner.
async function listFolder(root: string, dir: string): Promise<string[] | null> {
  const top = resolve(root)
  const folder = resolve(top, dir)
  if (relative(top, folder).startsWith("..") || isAbsolute(relative(top, folder))) return null
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => null)
  if (entries === null) return null
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(top, join(entry.parentPath, entry.name)).split(sep).join("/"))
    .sort()
}
