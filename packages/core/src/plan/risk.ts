import * as z from "zod"
import { plural } from "../model/text"

/** How much review a change gets: trivial (2 agents), lite (4), full (7+). */
export const Tier = z.enum(["trivial", "lite", "full"])
export type Tier = z.infer<typeof Tier>

/** Tier thresholds (defaults 10/20, 100/20, 50 files: docs/design-numbers.md#risk-tiers). */
export interface RiskRules {
  trivial: { lines: number; files: number }
  lite: { lines: number; files: number }
  fullFiles: number
}

/** The facts about one file that the tier depends on. */
export interface RiskFile {
  path: string
  added: number
  removed: number
  noise: string | null
  securitySensitive: boolean
}

/** The tier, the human-readable reasons for it, and the totals over reviewed (non-noise) files. */
export interface Assessment {
  tier: Tier
  reasons: string[]
  totals: { files: number; added: number; removed: number }
}

/** Assigns the risk tier from the filtered diff, in the order of docs/design-numbers.md#risk-tiers. */
export function assessRisk(files: readonly RiskFile[], rules: RiskRules): Assessment {
  const reviewed = files.filter((file) => file.noise === null)
  const totals = {
    files: reviewed.length,
    added: reviewed.reduce((sum, file) => sum + file.added, 0),
    removed: reviewed.reduce((sum, file) => sum + file.removed, 0),
  }
  const lines = totals.added + totals.removed
  const sensitive = reviewed.filter((file) => file.securitySensitive)
  const full = (reasons: string[]): Assessment => ({ tier: "full", reasons, totals })

  if (sensitive.length > 0 || totals.files > rules.fullFiles) {
    const reasons = sensitive.map((file) => `security-sensitive path: ${file.path}`)
    if (totals.files > rules.fullFiles) reasons.unshift(`${totals.files} files changed (more than ${rules.fullFiles})`)
    return full(reasons)
  }
  const size = `${lines} changed lines in ${plural(totals.files, "file")}`
  if (lines <= rules.trivial.lines && totals.files <= rules.trivial.files) {
    return {
      tier: "trivial",
      reasons: [`${size} (trivial: at most ${rules.trivial.lines} lines and ${rules.trivial.files} files)`],
      totals,
    }
  }
  if (lines <= rules.lite.lines && totals.files <= rules.lite.files) {
    return {
      tier: "lite",
      reasons: [`${size} (lite: at most ${rules.lite.lines} lines and ${rules.lite.files} files)`],
      totals,
    }
  }
  return full([`${size} (above the lite limits of ${rules.lite.lines} lines and ${rules.lite.files} files)`])
}
