import type { Decision } from "../model/finding"
import { decisionRank } from "./decision"

/** Changed files the provider could not give the reviewers (no content from the API, past its limits). */
export interface UnreadFile {
  path: string
  reason: string
  /** How many changed files the entry stands for: 1 when absent, null when unknown. */
  files?: number | null
}

/** A planned reviewer that did not finish, with why ("did not run" when it never started). */
export interface MissingReviewer {
  name: string
  error: string
}

/** Whether enough of the planned review ran to let the findings speak for the change. */
export interface CoverageVerdict {
  /** False when a security-relevant or a majority part of the planned review did not run. */
  complete: boolean
  /** Why the review is incomplete, one line each; empty when complete. */
  reasons: string[]
}

/** Changed files the reviewers could read, and those the provider could not give them (null: unknown). */
export interface FileCoverage {
  read: number
  unread: number | null
}

/**
 * Reviewers whose absence alone makes a review incomplete: without them nobody read the change
 * for what can be exploited, whatever else ran.
 */
export const essentialReviewers: readonly string[] = ["security"]

/**
 * Judges the coverage of a review: incomplete when an essential reviewer that was planned did not
 * finish, or when more than half of the planned reviewers did not. A review without planned
 * reviewers (nothing to read) is complete.
 */
export function assessCoverage(
  planned: readonly string[],
  missing: readonly MissingReviewer[],
  files: FileCoverage = { read: 0, unread: 0 },
): CoverageVerdict {
  const reasons: string[] = []
  // More changed files unread than read (or an unknown number past a provider's limits): whatever
  // the reviewers said covers the lesser part of the change.
  if (files.unread === null || files.unread > files.read) {
    const unread = files.unread === null ? "an unknown number of" : files.unread.toLocaleString("en-US")
    reasons.push(`${unread} changed files could not be read, against ${files.read.toLocaleString("en-US")} reviewed`)
  }
  if (planned.length === 0 || missing.length === 0) return { complete: reasons.length === 0, reasons }
  const essential = missing.filter((reviewer) => essentialReviewers.includes(reviewer.name))
  if (essential.length > 0)
    reasons.push(
      `the ${essential.map((reviewer) => reviewer.name).join(" and ")} review did not run (${essential.map(describe).join("; ")})`,
    )
  if (missing.length * 2 > planned.length) {
    reasons.push(
      `${missing.length} of ${planned.length} planned reviewers did not finish (${missing.map(describe).join("; ")})`,
    )
  }
  return { complete: reasons.length === 0, reasons }
}

/**
 * The decision an incomplete review may carry: never an approval (at least `minor_issues`, which
 * revokes an earlier approval by the bot); a worse decision from the findings that did arrive
 * stands. The reasons say first that the review is incomplete.
 */
export function capForCoverage(
  decision: Decision,
  reasons: readonly string[],
  coverage: CoverageVerdict,
): { decision: Decision; reasons: string[] } {
  if (coverage.complete) return { decision, reasons: [...reasons] }
  const why = `the review is incomplete: ${coverage.reasons.join("; ")}`
  if (decisionRank(decision) >= decisionRank("minor_issues")) return { decision, reasons: [...reasons, why] }
  return {
    decision: "minor_issues",
    reasons: [`${why}; what did not run was not reviewed, so the change is not approved`, ...reasons],
  }
}

function describe(reviewer: MissingReviewer): string {
  return `${reviewer.name}: ${reviewer.error}`
}
