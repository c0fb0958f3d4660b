import { relative } from "node:path"
import type { ReviewPlan } from "@opencode-reviewer/core"

const statusMark: Record<string, string> = { added: "A", modified: "M", deleted: "D", renamed: "R", copied: "C" }

/** The human form of a plan: tier and why, who reviews with which model, what is read and skipped. */
export function renderPlan(plan: ReviewPlan, source: string): string {
  const lines: string[] = []
  const { totals } = plan
  lines.push(`Plan for ${source}`)
  lines.push(`Tier: ${plan.tier} (${totals.files} files reviewed, +${totals.added} -${totals.removed})`)
  for (const reason of plan.reasons) lines.push(`  - ${reason}`)
  lines.push("")
  lines.push("Agents:")
  const width = Math.max(...plan.agents.map((agent) => agent.name.length))
  for (const agent of plan.agents) {
    const chain = agent.models.length > 1 ? ` (then ${agent.models.slice(1).join(", ")})` : ""
    lines.push(`  ${agent.name.padEnd(width)}  ${agent.models[0]}${chain}  - ${agent.reason}`)
  }
  const reviewed = plan.files.filter((file) => file.noise === null)
  const filtered = plan.files.filter((file) => file.noise !== null)
  lines.push("")
  lines.push(`Files to review (${reviewed.length}):`)
  for (const { file, securitySensitive } of reviewed.slice(0, 200)) {
    const name = file.oldPath !== file.path ? `${file.oldPath} -> ${file.path}` : file.path
    const counts = file.binary ? "binary" : `+${file.added} -${file.removed}`
    lines.push(
      `  ${statusMark[file.status] ?? "?"} ${name}  ${counts}${securitySensitive ? "  [security-sensitive]" : ""}`,
    )
  }
  if (reviewed.length > 200) lines.push(`  ... and ${reviewed.length - 200} more (see --json)`)
  if (filtered.length > 0) {
    lines.push("")
    lines.push(`Filtered, not reviewed (${filtered.length}):`)
    for (const { file, noise } of filtered.slice(0, 50)) lines.push(`  ${file.path}  (${noise})`)
    if (filtered.length > 50) lines.push(`  ... and ${filtered.length - 50} more (see --json)`)
  }
  if (plan.clipped.length > 0) {
    lines.push("")
    lines.push(`Cut to fit the prompts (${plan.clipped.length}):`)
    for (const clip of plan.clipped.slice(0, 20)) lines.push(`  ${clip.what}: ${clip.detail}`)
    if (plan.clipped.length > 20) lines.push(`  ... and ${plan.clipped.length - 20} more (see plan.json)`)
  }
  if (plan.injection.length > 0) {
    lines.push("")
    lines.push(
      `Suspected prompt injection in: ${[...new Set(plan.injection.map((attempt) => attempt.field))].join(", ")}`,
    )
    lines.push("  (a review of this change will never be approved automatically)")
  }
  lines.push("")
  lines.push(`Work dir: ${plan.workDir}`)
  for (const file of [plan.configFile, plan.promptFile, plan.contextFile])
    lines.push(`  ${relative(plan.workDir, file)}`)
  lines.push(`  diff/ (${plan.files.filter((file) => file.patchFile !== null).length} patches)`)
  return lines.join("\n") + "\n"
}
