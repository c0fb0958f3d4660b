import { mkdir, writeFile } from "node:fs/promises"
import { join, resolve } from "node:path"
import type { Decision, ReviewRecord, Severity } from "@opencode-reviewer/core"
import {
  countFindings,
  findingLocation,
  formatDuration,
  formatNumber,
  incompleteHeadline,
  inlineCode,
  oneLine,
  plural,
  recordWarnings,
  reviewIncomplete,
  reviewUsageTotal,
  severityOrder,
} from "@opencode-reviewer/core"

/** Where the local reports go and how the terminal summary is printed. */
export interface LocalPublishOptions {
  outputDir: string
  /** Receives the terminal rendering (plain text, no colour); the CLI passes its stdout or stderr. */
  write: (text: string) => void
}

/**
 * Publishes a review locally: `<outputDir>/review.json` (the record), `<outputDir>/review.md` (a
 * readable report) and a short rendering through `write`. Returns the files written, absolute.
 */
export async function publishLocal(record: ReviewRecord, options: LocalPublishOptions): Promise<{ files: string[] }> {
  const outputDir = resolve(options.outputDir)
  await mkdir(outputDir, { recursive: true })
  const json = join(outputDir, "review.json")
  const markdown = join(outputDir, "review.md")
  await writeFile(json, JSON.stringify(record, null, 2) + "\n")
  await writeFile(markdown, renderMarkdown(record))
  options.write(renderTerminal(record, markdown))
  return { files: [json, markdown] }
}

/** The review as a markdown report: decision, coverage warnings, summary, findings by severity, coverage, cost. */
export function renderMarkdown(record: ReviewRecord): string {
  const lines: string[] = [
    `# Code review: ${reviewIncomplete(record) ? incompleteHeadline(record) : decisionLabels[record.decision]}`,
    "",
  ]
  lines.push(
    `**Decision:** \`${record.decision}\`${record.reasons.length > 0 ? ` — ${record.reasons.join("; ")}` : ""}  `,
  )
  lines.push(
    `**Tier:** ${record.tier} · **Findings:** ${countFindings(record.findings)} · **Files reviewed:** ${record.coverage.reviewedFiles}`,
    "",
  )

  for (const warning of warnings(record)) lines.push(`> **${warning.title}** ${warning.text}`, "")

  lines.push("## Summary", "", record.summary.trim(), "")
  if (record.answer !== null) lines.push("## Answer", "", record.answer.trim(), "")

  lines.push("## Findings", "")
  if (record.findings.length === 0) lines.push(noFindings(record), "")
  for (const severity of severityOrder) {
    const group = record.findings.filter((finding) => finding.severity === severity)
    if (group.length === 0) continue
    lines.push(`### ${severityLabels[severity]} (${group.length})`, "")
    for (const finding of group) {
      lines.push(`#### ${inlineCode(findingLocation(finding))} — ${oneLine(finding.title)}`, "")
      lines.push(`*${finding.category} · raised by ${finding.reviewer} · ${finding.status} · ${finding.id}*`, "")
      if (finding.body.trim() !== "") lines.push(finding.body.trim(), "")
    }
  }

  if (record.resolved.length > 0) {
    lines.push("## Resolved since the previous review", "")
    for (const resolved of record.resolved) {
      const where =
        resolved.file === null
          ? ""
          : `${inlineCode(resolved.line === null ? resolved.file : `${resolved.file}:${resolved.line}`)} — `
      lines.push(`- ${where}${oneLine(resolved.title)}`)
    }
    lines.push("")
  }

  lines.push("## Coverage", "", `- Files reviewed: ${record.coverage.reviewedFiles}`)
  if (record.coverage.unreviewed.length > 0) {
    lines.push(`- **Not reviewed** (${record.coverage.unreviewed.length}):`)
    for (const file of record.coverage.unreviewed) lines.push(`  - ${inlineCode(file.path)} — ${oneLine(file.reason)}`)
  }
  if (record.coverage.filtered.length > 0) {
    lines.push(`- Filtered, not reviewed (${record.coverage.filtered.length}):`)
    for (const file of record.coverage.filtered) lines.push(`  - ${inlineCode(file.path)} — ${file.reason}`)
  }
  if (record.coverage.failedReviewers.length > 0) {
    lines.push(`- Reviewers that failed (${record.coverage.failedReviewers.length}); their areas were not reviewed:`)
    for (const reviewer of record.coverage.failedReviewers)
      lines.push(`  - ${reviewer.name} — ${oneLine(reviewer.error)}`)
  } else {
    lines.push("- Every scheduled reviewer finished.")
  }
  for (const note of record.notes) lines.push(`- Note: ${oneLine(note)}`)
  lines.push("", "---", "", footer(record), "")
  return lines.join("\n")
}

/** The concise terminal rendering: decision, warnings, findings one per line, cost, report path. */
export function renderTerminal(record: ReviewRecord, reportFile: string | null = null): string {
  const lines = [
    `Decision: ${record.decision}${reviewIncomplete(record) ? " (review incomplete)" : ""} (${record.tier} tier, ${plural(record.coverage.reviewedFiles, "file")} reviewed, ${countFindings(record.findings)})`,
    ...record.reasons.map((reason) => `  ${reason}`),
  ]
  for (const warning of warnings(record)) lines.push(`${warning.title} ${warning.text}`)
  lines.push(
    "",
    ...record.summary
      .trim()
      .split("\n")
      .map((line) => `  ${line}`),
    "",
  )
  if (record.findings.length === 0) lines.push(noFindings(record))
  const sorted = severityOrder.flatMap((severity) => record.findings.filter((finding) => finding.severity === severity))
  const width = Math.max(0, ...sorted.map((finding) => findingLocation(finding).length))
  for (const finding of sorted) {
    lines.push(
      `  ${finding.severity.padEnd(10)} ${findingLocation(finding).padEnd(width)}  ${oneLine(finding.title)} [${finding.category}]`,
    )
  }
  if (record.coverage.filtered.length > 0) {
    lines.push(`Filtered: ${record.coverage.filtered.map((file) => `${file.path} (${file.reason})`).join(", ")}`)
  }
  lines.push(footer(record))
  if (reportFile) lines.push(`Report: ${reportFile}`)
  return lines.join("\n") + "\n"
}

const severityLabels: Record<Severity, string> = {
  critical: "Critical",
  warning: "Warnings",
  suggestion: "Suggestions",
}
const decisionLabels: Record<Decision, string> = {
  approved: "approved",
  approved_with_comments: "approved with comments",
  minor_issues: "minor issues",
  significant_concerns: "significant concerns",
}

// What a reader must see before the summary: the model's summary might sound reassuring, and a
// partial review must never read as a clean one.
function warnings(record: ReviewRecord): { title: string; text: string }[] {
  const result = recordWarnings(record, { failure: "the review exits 1" })
  if (record.coverage.filtered.length > 0) {
    const count = record.coverage.filtered.length
    result.push({
      title: "Not reviewed:",
      text: `${count} file${count === 1 ? " was" : "s were"} filtered as noise (listed under Coverage).`,
    })
  }
  if (record.breakGlass)
    result.push({ title: "Break glass:", text: "approved at a human's request, whatever the review found." })
  if (record.injectionSuspected) {
    result.push({
      title: "Prompt injection suspected:",
      text: "text in the merge request or its diff tried to pass as review instructions (see the reasons); reviewers read it as data only, and the change is not approved automatically.",
    })
  }
  return result
}

function noFindings(record: ReviewRecord): string {
  if (record.coverage.failedReviewers.length === 0 && record.coverage.unreviewed.length > 0)
    return "No findings in what was reviewed. Some changed files could not be read (see Coverage), so this is not a clean result."
  if (record.coverage.failedReviewers.length > 0) {
    return "No findings from the reviewers that finished. The failed reviewers' areas were not reviewed, so this is not a clean result."
  }
  return "No findings."
}

function footer(record: ReviewRecord): string {
  const totals = reviewUsageTotal(record.usage)
  const tokens =
    totals.input + totals.output + totals.cacheRead + totals.cacheWrite > 0
      ? ` · tokens: ${formatNumber(totals.input)} in, ${formatNumber(totals.output)} out, ${formatNumber(totals.cacheRead)} cache read, ${formatNumber(totals.cacheWrite)} cache write (${Math.round(record.usage.cacheHitRate * 100)} % cache hits)`
      : ""
  return `Cost ${dollars(record.usage.costUsd)} · ${formatDuration(record.durationMs)}${tokens}`
}

function dollars(value: number): string {
  return value > 0 && value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`
}
