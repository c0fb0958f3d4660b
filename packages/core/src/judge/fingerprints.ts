import { createHash } from "node:crypto"
import { normalizeCategory } from "../model/finding"
import { removeInvisible } from "../model/text"

/** What a fingerprint is computed from: any finding-shaped record has it. */
export interface FingerprintSource {
  category: string
  file: string
  title: string
  line: number | null
  body: string
}

/**
 * Fingerprints of the findings, in their order: a hash of category, file and normalised title
 * (never the line, so moved code keeps its fingerprint). Findings that share all three get an
 * occurrence index, counted in line order, so every fingerprint of a report is unique: GitLab's
 * MR widget collapses entries with the same fingerprint.
 */
export function findingFingerprints(findings: readonly FingerprintSource[]): string[] {
  const keys = findings.map((finding) =>
    [categorySlug(finding.category), reportPath(finding.file), normalizeTitle(finding.title)].join("\u0000"),
  )
  const order = findings
    .map((finding, index) => ({ finding, index }))
    .sort(
      (a, b) =>
        (a.finding.line ?? 0) - (b.finding.line ?? 0) ||
        compareText(a.finding.body, b.finding.body) ||
        a.index - b.index,
    )
  const seen = new Map<string, number>()
  const fingerprints: string[] = new Array<string>(findings.length).fill("")
  for (const { index } of order) {
    const key = keys[index] ?? ""
    const occurrence = seen.get(key) ?? 0
    seen.set(key, occurrence + 1)
    fingerprints[index] = hash(occurrence === 0 ? key : `${key}\u0000${occurrence}`)
  }
  return fingerprints
}

function hash(key: string): string {
  return createHash("sha256").update(`opencode-reviewer/v1\u0000${key}`).digest("hex").slice(0, 32)
}

// Case, spacing, Markdown emphasis and quotes, trailing punctuation and invisible characters do
// not make a different finding; models vary on exactly these between runs.
function normalizeTitle(title: string): string {
  return removeInvisible(title)
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[`*_"'“”‘’]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[.!?;:,]+$/, "")
}

export function categorySlug(category: string): string {
  const slug = normalizeCategory(category)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
  return slug || "general"
}

// Repository-relative with forward slashes: GitLab matches `location.path` against the diff.
export function reportPath(file: string): string {
  return file.replace(/\\/g, "/").replace(/^(?:\.\/|\/)+/, "")
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
