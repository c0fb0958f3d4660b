import { join } from "node:path"
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
      }
    },
    // No merge request to post on: the CLI's local outputs are the whole publication.
    publish: async () => ({ files: [] }),
    async readTrustedFile(path) {
      if (!options.trustedDir) return null
      const file = Bun.file(join(options.trustedDir, path))
      return (await file.exists()) ? file.text() : null
    },
  }
}
