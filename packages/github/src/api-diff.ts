import type { UnreadFile } from "@opencode-reviewer/core"
import type { ApiFile } from "./client"

/** Files GitHub lists at most for a pull request (docs/github.md, "Pull requests, files and the diff"). */
export const maxListedFiles = 3_000

/**
 * A unified git diff rebuilt from `pulls/{n}/files`, for a pull request whose diff GitHub refuses
 * as too large (406). A file without `patch` (binary, or a diff GitHub finds too large) is left out
 * and listed as not reviewed, as are files past the 3,000 GitHub lists.
 */
export function diffFromFiles(
  files: readonly ApiFile[],
  changedFiles: number | null,
): { diff: string; unreviewed: UnreadFile[] } {
  const parts: string[] = []
  const unreviewed: UnreadFile[] = []
  for (const file of files) {
    if (file.patch === undefined) {
      // A rename without content change has no patch and nothing to read.
      if (file.status === "renamed" && file.previous_filename) {
        parts.push(
          `diff --git a/${file.previous_filename} b/${file.filename}\nsimilarity index 100%\nrename from ${file.previous_filename}\nrename to ${file.filename}\n`,
        )
        continue
      }
      unreviewed.push({ path: file.filename, reason: "GitHub sent no patch (a binary file, or its diff is too large)" })
      continue
    }
    const oldPath = file.previous_filename ?? file.filename
    const header = [`diff --git a/${oldPath} b/${file.filename}`]
    if (file.status === "added") header.push("new file mode 100644", "--- /dev/null", `+++ b/${file.filename}`)
    else if (file.status === "removed") header.push("deleted file mode 100644", `--- a/${oldPath}`, "+++ /dev/null")
    else {
      if (file.status === "renamed") header.push(`rename from ${oldPath}`, `rename to ${file.filename}`)
      header.push(`--- a/${oldPath}`, `+++ b/${file.filename}`)
    }
    parts.push(`${header.join("\n")}\n${file.patch.replace(/\n?$/, "\n")}`)
  }
  if (changedFiles !== null && changedFiles > files.length) {
    unreviewed.push({
      path: `(${changedFiles - files.length} more files)`,
      reason: `GitHub lists at most ${maxListedFiles} files of a pull request`,
      files: changedFiles - files.length,
    })
  }
  return { diff: parts.join(""), unreviewed }
}
