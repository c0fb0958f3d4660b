import * as z from "zod"

/** How bad a finding is: outage/exploitable, concrete risk, or worth considering. */
export const Severity = z.enum(["critical", "warning", "suggestion"])
export type Severity = z.infer<typeof Severity>

/** The review's verdict, ordered from most to least favourable. */
export const Decision = z.enum(["approved", "approved_with_comments", "minor_issues", "significant_concerns"])
export type Decision = z.infer<typeof Decision>

/** The categories the reviewers and the coordinator use; any other non-empty word is kept as given. */
export const knownCategories = [
  "security",
  "performance",
  "code-quality",
  "documentation",
  "release",
  "compliance",
  "agents-md",
] as const

/** The most lines one suggested change may replace; a longer one is a rewrite, not a suggestion. */
export const maxSuggestionLines = 30

/**
 * Replacement text for lines `startLine` to the finding's `line` of the new file, offered as a
 * committable suggestion. `lines` is the new text, one entry per line, verbatim (indentation kept).
 */
export const Suggestion = z.object({
  startLine: z.number().int().positive(),
  lines: z.array(z.string()).min(1).max(maxSuggestionLines),
})
export type Suggestion = z.infer<typeof Suggestion>

/**
 * What the verifier said about one finding (judge/verify.ts), as review.json records it
 * (`findings[].verification`): `confirmed` with evidence that checked out against the code,
 * `not_confirmed` (an explicit, reasoned dispute: the only verdict that lowers a finding), or
 * `unverified` (no usable verdict: the finding keeps its severity).
 */
export const Verification = z.object({
  status: z.enum(["confirmed", "not_confirmed", "unverified"]),
  /** The verifier's model. */
  by: z.string(),
  reason: z.string(),
  /** The evidence that checked out against the code (file:start-end). */
  evidence: z.array(z.string()),
  /** The severity the coordinator gave, before a downgrade. */
  originalSeverity: Severity,
})
export type Verification = z.infer<typeof Verification>

/** One finding, as a reviewer or the coordinator reports it; `line` is null for a file-level finding. */
export const Finding = z.object({
  severity: Severity,
  file: z.string().min(1),
  line: z.number().int().positive().nullable(),
  category: z.string().min(1),
  title: z.string().min(1),
  body: z.string(),
  /**
   * The coordinator's claim, on re-review, that this finding continues the earlier inline thread of
   * that id (`<review_thread id>`), however reworded. Reviewers never set it.
   */
  thread: z.string().min(1).optional(),
  /** A committable replacement for the finding's lines; posted only where it applies (judge/suggestion.ts). */
  suggestion: Suggestion.optional(),
  /**
   * The coordinator's claim that a person's comment on the change (`<mr_comment id>`) already raised
   * this problem: then it is not posted again (judge/already-raised.ts checks the place first).
   */
  raisedBy: z.string().min(1).optional(),
  /** What the verifier said about it; set by code after the coordinator (judge/verify.ts), never read from a model. */
  verification: Verification.optional(),
})
export type Finding = z.infer<typeof Finding>

/**
 * A finding established by code (a plugin's deterministic check), not by a model: recorded with the
 * plugin that made it, carried in plan.json, and merged into review.json beside the coordinator's.
 */
export const CodeFinding = z.object({ plugin: z.string().min(1), finding: Finding })
export type CodeFinding = z.infer<typeof CodeFinding>

/**
 * A category in its canonical spelling: case, spaces and underscores do not matter for the known
 * ones ("Code Quality" → "code-quality"); an unknown category is kept as given, trimmed.
 */
export function normalizeCategory(category: string): string {
  const trimmed = category.trim()
  const key = trimmed.toLowerCase().replace(/[\s_]+/g, "-")
  const known = knownCategories.find((name) => name === key || name.replace(/-/g, "") === key.replace(/-/g, ""))
  return known ?? trimmed.replace(/\s+/g, " ")
}

/** Severities from the most to the least serious. */
export const severityOrder: readonly Severity[] = Severity.options

/** Negative when `a` is more serious than `b`; for sorting findings most serious first. */
export function compareSeverity(a: Severity, b: Severity): number {
  return severityOrder.indexOf(a) - severityOrder.indexOf(b)
}
