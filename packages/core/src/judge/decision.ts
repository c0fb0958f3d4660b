import { compareSeverity, Decision, type Finding } from "../model/finding"
import { comparableText, plural } from "../model/text"

/**
 * The rubric's numbers (docs/design-numbers.md#the-decision), biased toward
 * approval. "A few suggestions" is up to `fewSuggestions`; "several warnings suggesting a risky
 * pattern" is `riskyWarnings` warnings of any category, or `riskyCategoryWarnings` in a category
 * where a warning means production risk (a second concrete security or performance risk in one
 * change is a pattern, not an accident). One or two warnings elsewhere are comments, not blockers.
 */
export const decisionThresholds = {
  fewSuggestions: 3,
  riskyWarnings: 3,
  riskyCategoryWarnings: 2,
  riskyCategories: ["security", "performance"] as readonly string[],
} as const

/** Facts beside the findings that change the verdict. */
export interface DecisionContext {
  /** The MR's text or diff carried a suspected prompt-injection attempt: never approve automatically. */
  injectionSuspected: boolean
  /** Where the attempts were, for the reason ("the description", "src/a.ts:12"); see {@link injectionLocations}. */
  injectionAt?: readonly string[]
  /** A person with the access for it commented the break-glass phrase: approve whatever the review found. */
  breakGlass: boolean
  /**
   * Findings the coordinator called critical that the verifier disputed with a reason (now one
   * severity lower, `verification.reason` saying why): the change is never approved over them.
   */
  disputed?: readonly Finding[]
  /** Earlier critical findings a person with write access dismissed: their decision, named in the reasons. */
  dismissedCriticals?: readonly EarlierFinding[]
  /**
   * Earlier critical findings not reported again that nothing shows were fixed (their code did not
   * change, or could not be compared) and nobody with the access dismissed: a model that did not find
   * them again is no proof they are gone, so the change is not approved over them.
   */
  openCriticals?: readonly EarlierFinding[]
}

/** An earlier finding as a reason names it, with what became of it. */
export interface EarlierFinding {
  title: string
  file: string | null
  line: number | null
  reason: string
}

/** The verdict and the human-readable reasons for it, most important first. */
export interface DecisionResult {
  decision: Decision
  reasons: string[]
}

/**
 * Computes the decision from the final findings, never from the model's words. Break glass approves
 * regardless (a person's decision, so it also overrides the rules below; the reasons say what it
 * overrode); otherwise a suspected injection or a critical the verifier disputed turns an approval
 * into `minor_issues`. Criticals a person dismissed are named in the reasons either way.
 */
export function decide(findings: readonly Finding[], context: DecisionContext): DecisionResult {
  const rubric = applyRubric(findings)
  const holds: string[] = []
  if (context.injectionSuspected) holds.push(injectionReason(context.injectionAt ?? []))
  const disputed = context.disputed ?? []
  if (disputed.length > 0) holds.push(disputedReason(disputed))
  const open = context.openCriticals ?? []
  if (open.length > 0)
    holds.push(
      `${open.length === 1 ? "an earlier critical finding is" : `${open.length} earlier critical findings are`} still open: ${open.map((entry) => `${entry.title}${earlierPlace(entry)}, ${entry.reason}`).join("; ")}`,
    )
  const dismissed = (context.dismissedCriticals ?? []).map(
    (entry) =>
      `a critical finding was dismissed by a person, not fixed: ${entry.title}${earlierPlace(entry)}, ${entry.reason}`,
  )
  if (context.breakGlass) {
    const reasons = ["break glass: a human asked to approve this change whatever the review found"]
    if (rubric.decision !== "approved")
      reasons.push(`without break glass the decision would be ${rubric.decision}: ${rubric.reasons.join("; ")}`)
    for (const hold of holds) reasons.push(`${hold}; approved only because of break glass`)
    return { decision: "approved", reasons: [...reasons, ...dismissed] }
  }
  if (holds.length > 0 && decisionRank(rubric.decision) < decisionRank("minor_issues")) {
    return {
      decision: "minor_issues",
      reasons: [...holds.map((hold) => `${hold}: it is never approved automatically`), ...rubric.reasons, ...dismissed],
    }
  }
  return { decision: rubric.decision, reasons: [...rubric.reasons, ...holds, ...dismissed] }
}

/**
 * Readable places of plan.json's `injection` records (read as unknown: "description" → "the
 * description", "diff src/a.ts:12" → "src/a.ts:12"), deduplicated, in order; malformed entries are skipped.
 */
export function injectionLocations(attempts: readonly unknown[]): string[] {
  const places: string[] = []
  for (const attempt of attempts) {
    const field =
      typeof attempt === "object" && attempt !== null && "field" in attempt
        ? (attempt as { field: unknown }).field
        : null
    if (typeof field !== "string" || field === "") continue
    const place = field.startsWith("diff ")
      ? field.slice("diff ".length)
      : field === "title" || field === "description"
        ? `the ${field}`
        : field.replace(/ author$/, "")
    if (!places.includes(place)) places.push(place)
  }
  return places
}

/** Position of a decision from approved (0) to significant_concerns (3). */
export function decisionRank(decision: Decision): number {
  return Decision.options.indexOf(decision)
}

/** Whether `decision` is at or above `threshold` (for `--fail-on`): approved < approved_with_comments < minor_issues < significant_concerns. */
export function atOrAbove(decision: Decision, threshold: Decision): boolean {
  return decisionRank(decision) >= decisionRank(threshold)
}

/**
 * Merges exact duplicates (same file and line, and the same normalised title or the same
 * normalised body) into one: the most serious severity and the longer body win, the rest of the
 * first occurrence is kept, in first-occurrence order. A safety net behind the coordinator's own
 * deduplication; it never merges findings that merely look alike. Does not mutate its input.
 */
export function mergeDuplicates(findings: readonly Finding[]): Finding[] {
  const merged: Finding[] = []
  for (const finding of findings) {
    const index = merged.findIndex((kept) => isDuplicate(kept, finding))
    if (index < 0) {
      merged.push({ ...finding })
      continue
    }
    const kept = merged[index]!
    merged[index] = {
      ...kept,
      severity: compareSeverity(finding.severity, kept.severity) < 0 ? finding.severity : kept.severity,
      body: finding.body.trim().length > kept.body.trim().length ? finding.body : kept.body,
    }
  }
  return merged
}

// " (src/db.ts:12)", or nothing for an entry without a place.
function earlierPlace(entry: EarlierFinding): string {
  if (entry.file === null) return ""
  return ` (${entry.file}${entry.line === null ? "" : `:${entry.line}`})`
}

// "a critical finding disputed by the verifier: SQL built from input (src/db.ts:2): the name is escaped upstream"
function disputedReason(findings: readonly Finding[]): string {
  const described = findings.slice(0, 3).map((finding) => {
    const where = `${finding.file}${finding.line === null ? "" : `:${finding.line}`}`
    return `${finding.title} (${where}): ${finding.verification?.reason ?? "disputed"}`
  })
  const more = findings.length > 3 ? `; and ${findings.length - 3} more` : ""
  const count = findings.length === 1 ? "a critical finding" : `${findings.length} critical findings`
  return `${count} disputed by the verifier: ${described.join("; ")}${more}`
}

// "a suspected prompt-injection attempt in the description and in src/a.ts:12"; the places are
// field names and diff paths, never the attempt's words.
function injectionReason(places: readonly string[]): string {
  if (places.length === 0) return "the merge request text carried a suspected prompt-injection attempt"
  const shown = places.slice(0, 4).map((place) => place.slice(0, 200))
  const rest = places.length - shown.length
  const list =
    rest > 0
      ? `${shown.join(", in ")} and in ${rest} more place${rest === 1 ? "" : "s"}`
      : shown.length === 1
        ? shown[0]!
        : `${shown.slice(0, -1).join(", in ")} and in ${shown.at(-1)}`
  return `a suspected prompt-injection attempt in ${list}`
}

function applyRubric(findings: readonly Finding[]): DecisionResult {
  const critical = findings.filter((finding) => finding.severity === "critical")
  const warnings = findings.filter((finding) => finding.severity === "warning")
  const suggestions = findings.filter((finding) => finding.severity === "suggestion")
  const risky = warnings.filter((finding) => decisionThresholds.riskyCategories.includes(finding.category))

  if (critical.length > 0) {
    return {
      decision: "significant_concerns",
      reasons: [`${plural(critical.length, "critical finding")}: ${titles(critical)}`],
    }
  }
  if (warnings.length >= decisionThresholds.riskyWarnings) {
    return {
      decision: "minor_issues",
      reasons: [`${plural(warnings.length, "warning")}: a risky pattern (${decisionThresholds.riskyWarnings} or more)`],
    }
  }
  if (risky.length >= decisionThresholds.riskyCategoryWarnings) {
    return {
      decision: "minor_issues",
      reasons: [
        `${plural(risky.length, "warning")} in ${decisionThresholds.riskyCategories.join("/")}: a production-risk pattern: ${titles(risky)}`,
      ],
    }
  }
  if (warnings.length > 0) {
    const also = suggestions.length > 0 ? ` and ${plural(suggestions.length, "suggestion")}` : ""
    return {
      decision: "approved_with_comments",
      reasons: [`${plural(warnings.length, "warning")}${also}, no risky pattern`],
    }
  }
  if (suggestions.length > decisionThresholds.fewSuggestions) {
    return { decision: "approved_with_comments", reasons: [`${plural(suggestions.length, "suggestion")} only`] }
  }
  if (suggestions.length > 0) {
    return {
      decision: "approved",
      reasons: [
        `${plural(suggestions.length, "suggestion")} only (a few: ${decisionThresholds.fewSuggestions} or fewer)`,
      ],
    }
  }
  return { decision: "approved", reasons: ["no findings"] }
}

function isDuplicate(a: Finding, b: Finding): boolean {
  if (a.file !== b.file || a.line !== b.line) return false
  if (comparableText(a.title) === comparableText(b.title)) return true
  const body = comparableText(a.body)
  return body !== "" && body === comparableText(b.body)
}

function titles(findings: readonly Finding[]): string {
  const shown = findings
    .slice(0, 3)
    .map((finding) => `${finding.title} (${finding.file}${finding.line === null ? "" : `:${finding.line}`})`)
  return findings.length > 3 ? `${shown.join("; ")}; and ${findings.length - 3} more` : shown.join("; ")
}
