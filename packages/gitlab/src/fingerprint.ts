import { createHash } from "node:crypto"
import { normalizeCategory } from "@opencode-reviewer/core"

/**
 * A finding's stable identity across reviews: category, file and title (normalised), never the
 * line, so a finding that moves with the code keeps its thread. 16 hex digits of SHA-256.
 */
export function fingerprintOf(finding: { category: string; file: string; title: string }): string {
  const key = [normalizeCategory(finding.category).toLowerCase(), finding.file, normalizeTitle(finding.title)].join("\n")
  return createHash("sha256").update(key).digest("hex").slice(0, 16)
}

/**
 * Fingerprints for a list of findings, in order. A second finding with the same identity (same
 * title in the same file, another line) gets its own fingerprint, numbered by occurrence.
 */
export function fingerprintAll(findings: readonly { category: string; file: string; title: string }[]): string[] {
  const seen = new Map<string, number>()
  return findings.map((finding) => {
    const base = fingerprintOf(finding)
    const count = (seen.get(base) ?? 0) + 1
    seen.set(base, count)
    return count === 1 ? base : createHash("sha256").update(`${base}#${count}`).digest("hex").slice(0, 16)
  })
}

/** A title compared loosely: case, inner whitespace, backticks and trailing punctuation do not matter. */
export function normalizeTitle(title: string): string {
  return title.toLowerCase().replace(/`/g, "").replace(/\s+/g, " ").trim().replace(/[.!?;:,]+$/, "")
}
