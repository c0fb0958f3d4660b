import { compareSeverity, type Finding } from "@opencode-reviewer/core/model/finding"
import { escapeAttribute, escapeXml } from "@opencode-reviewer/core/prompt/sanitize"
import { renderFindingsXml } from "@opencode-reviewer/core/protocol/findings-xml"
import type { ReviewerOutcome } from "./scheduler"

/** OpenCode truncates tool output at 51,200 bytes or 2,000 lines (docs/opencode.md#tool-output-limits); stay well under. */
export const outputLimits = { maxBytes: 40_000, maxLines: 1_500 }

/** The rendered tool output and how many findings were left out of it to fit. */
export interface RenderedResults {
  output: string
  /** Findings left out of the XML (all of them are still in the metadata). */
  cut: number
}

/** What goes around the per-reviewer results. */
export interface RenderOptions {
  /** The plan.json the runtime read (shows which plan ran; a load diagnostic). */
  plan: string | null
  /** Lines of advice for the coordinator (ignored reviewer names, …). */
  notes?: readonly string[]
  maxBytes?: number
  maxLines?: number
}

/**
 * Renders the `spawn_reviewers` output: one `<reviewer_results>` document with a `<reviewer_result>`
 * per reviewer (status, model, duration, attempts, error, findings). When the findings would pass the
 * size limits, the least severe are left out (most severe kept, reviewer order otherwise) and a note
 * says how many.
 */
export function renderResults(outcomes: readonly ReviewerOutcome[], options: RenderOptions): RenderedResults {
  const maxBytes = options.maxBytes ?? outputLimits.maxBytes
  const maxLines = options.maxLines ?? outputLimits.maxLines
  const ranked = outcomes
    .flatMap((outcome, reviewer) => outcome.findings.map((finding, index) => ({ finding, reviewer, index })))
    .sort(
      (a, b) => compareSeverity(a.finding.severity, b.finding.severity) || a.reviewer - b.reviewer || a.index - b.index,
    )
  const fits = (text: string) => Buffer.byteLength(text, "utf8") <= maxBytes && text.split("\n").length <= maxLines
  const build = (keep: number) => {
    const kept = new Set(ranked.slice(0, keep).map(({ finding }) => finding))
    return document(outcomes, options, kept, ranked.length - keep)
  }
  const full = build(ranked.length)
  if (fits(full)) return { output: full, cut: 0 }
  // The largest number of most-severe findings that fits, by bisection.
  let low = 0
  let high = ranked.length
  while (low < high) {
    const middle = Math.ceil((low + high) / 2)
    if (fits(build(middle))) low = middle
    else high = middle - 1
  }
  return { output: build(low), cut: ranked.length - low }
}

function document(
  outcomes: readonly ReviewerOutcome[],
  options: RenderOptions,
  kept: ReadonlySet<Finding>,
  cut: number,
): string {
  const failed = outcomes.filter((outcome) => outcome.status === "failed").length
  const lines = [`<reviewer_results${attributes({ plan: options.plan, reviewers: outcomes.length, failed })}>`]
  for (const outcome of outcomes) {
    const shown = outcome.findings.filter((finding) => kept.has(finding))
    const attrs = attributes({
      name: outcome.name,
      status: outcome.status,
      model: outcome.model,
      duration_ms: Math.round(outcome.durationMs),
      attempts: outcome.attempts,
      models_tried: outcome.modelsTried.length > 1 ? outcome.modelsTried.join(" ") : null,
      error: outcome.error === null ? null : clip(outcome.error, 400),
      findings: shown.length < outcome.findings.length ? outcome.findings.length : null,
      shown: shown.length < outcome.findings.length ? shown.length : null,
    })
    if (outcome.status === "failed" && outcome.findings.length === 0) {
      lines.push(`<reviewer_result${attrs}/>`)
      continue
    }
    lines.push(`<reviewer_result${attrs}>`, renderFindingsXml(shown), `</reviewer_result>`)
  }
  if (cut > 0) {
    lines.push(
      `<note>${cut} less severe finding${cut === 1 ? " was" : "s were"} left out to fit the tool output limit; every critical and warning finding is kept first.</note>`,
    )
  }
  for (const note of options.notes ?? []) lines.push(`<note>${escapeXml(clean(note))}</note>`)
  lines.push(`</reviewer_results>`)
  return lines.join("\n")
}

/** The tool's error output when it cannot run at all (no work dir, bad plan). */
export function renderFailure(error: string, plan: string | null): string {
  return [
    `<reviewer_results${attributes({ plan, reviewers: 0, failed: 0, status: "error" })}>`,
    `<error>${escapeXml(clean(error))}</error>`,
    `</reviewer_results>`,
  ].join("\n")
}

function attributes(values: Record<string, string | number | null>): string {
  return Object.entries(values)
    .filter((entry): entry is [string, string | number] => entry[1] !== null)
    .map(([key, value]) => ` ${key}="${escapeAttribute(clean(String(value)))}"`)
    .join("")
}

// XML 1.0 cannot carry most control characters, even escaped; provider error bodies sometimes do.
function clean(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text
}
