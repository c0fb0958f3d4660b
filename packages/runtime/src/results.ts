import { mkdirSync, renameSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { workFiles } from "@opencode-reviewer/core/protocol/names"
import { ReviewerOutcome } from "@opencode-reviewer/core/protocol/spawn-metadata"
import * as z from "zod"

// A reviewer that finished is not paid for twice. When the coordinator's model fails and the CLI
// fails back to the next one, a new OpenCode process starts with the same work dir; the reviewers
// that finished in the earlier process are carried over from here instead of run again. A result
// counts only for the plan.json it was made for (its digest, from readPlanFile), and planning
// deletes the directory, so a file a merge request plants in a work dir inside the checkout is
// never read as a result.

const Saved = z.object({ plan: z.string(), outcome: ReviewerOutcome })

/** The finished reviewers among `names` that an earlier process of this plan saved; others are skipped. */
export async function loadFinished(
  workDir: string,
  digest: string,
  names: readonly string[],
): Promise<ReviewerOutcome[]> {
  const loaded = await Promise.all(
    names.map(async (name) => {
      const text = await readFile(resultFile(workDir, name), "utf8").catch(() => null)
      if (text === null) return null
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        return null
      }
      const parsed = Saved.safeParse(value)
      if (!parsed.success || parsed.data.plan !== digest) return null
      const { outcome } = parsed.data
      return outcome.name === name && outcome.status === "done" ? outcome : null
    }),
  )
  return loaded.filter((outcome): outcome is ReviewerOutcome => outcome !== null)
}

/**
 * Saves a finished reviewer's outcome for a later process of the same plan. Synchronous, and renamed
 * into place: the CLI may end this process at any moment after, and half a file would be worthless.
 */
export function saveFinished(workDir: string, digest: string, outcome: ReviewerOutcome): void {
  if (outcome.status !== "done") return
  const dir = join(workDir, workFiles.reviewerResults)
  mkdirSync(dir, { recursive: true })
  const file = resultFile(workDir, outcome.name)
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, JSON.stringify(Saved.parse({ plan: digest, outcome })))
  renameSync(temp, file)
}

// Reviewer names are agent names from plan.json (letters, digits, dashes and underscores).
function resultFile(workDir: string, name: string): string {
  return join(workDir, workFiles.reviewerResults, `${encodeURIComponent(name)}.json`)
}
