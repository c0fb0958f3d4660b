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

/** Whether the whole planned review ran, so that its findings may speak for the change. */
export interface CoverageVerdict {
  /** False when any planned reviewer did not finish, or more changed files went unread than were read. */
  complete: boolean
  /** Why the review is incomplete, one line each; empty when complete. */
  reasons: string[]
}

/** Changed files the reviewers could read, and those they could not (null: unknown). */
export interface FileCoverage {
  read: number
  unread: number | null
}

/**
 * Reviewers whose absence is named first: without them nobody read the change for what can be
 * exploited, whatever else ran.
 */
export const essentialReviewers: readonly string[] = ["security"]

/**
 * Judges the coverage of a review: complete only when every planned reviewer finished (one that
 * failed after its failback chain, timed out, never ran or was skipped by the spend cap did not)
 * and no more changed files went unread than were read. A review without planned reviewers
 * (nothing to read) is complete as far as reviewers go.
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
    reasons.push(`the ${essential.map((reviewer) => reviewer.name).join(" and ")} review did not run`)
  reasons.push(
    `${missing.length} of ${planned.length} planned reviewers did not finish (${missing.map(describe).join("; ")})`,
  )
  return { complete: false, reasons }
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
