import { compareSeverity, type Severity, severityOrder } from "@opencode-reviewer/core/model/finding"
import type { GoldenComment } from "./corpus"
import type { Judge, JudgeVerdict } from "./judge"

// The procedure is the benchmark's own, read in withmartian/code-review-benchmark
// offline/code_review_benchmark/step3_judge_comments.py (evaluate_review) at commit 012d682 and its
// aggregation in offline/analysis/benchmark_dashboard.py:
// - every golden comment is judged against every candidate, one pair per judge call;
// - comments and candidates are keyed by their text, so identical texts count once;
// - a golden comment is found when any candidate matches it; it is credited to the matching
//   candidate with the highest confidence (the first one on a tie), and the judge's confidence must
//   be above 0 to count;
// - a candidate is not spurious when it was, at the moment it was judged, the best match so far of
//   some golden comment: one candidate may find several golden comments (each counts), and a golden
//   comment may clear several candidates (those that raised its best confidence in turn);
// - a case without golden comments is skipped; a case without candidates finds nothing;
// - totals are summed over cases: precision = tp / (tp + fp), recall = tp / (tp + fn),
//   F1 = 2PR / (P + R). tp counts golden comments found, fp unmatched candidates, fn golden missed.
// Ours, beyond the benchmark (docs/eval.md, "How a run is scored"):
// - a review that failed (the pipeline threw) counts as one that found nothing: its golden comments
//   are misses in every total, and the run lists it (`failed`), so a setup whose reviews crash never
//   scores as well as one that finds the bugs;
// - by severity, true and false positives are counted by one rule, the severity the finding was
//   given: under severity S, a golden comment of severity S is found only when it is credited to a
//   finding of severity S or more serious (else it is a miss), and a spurious finding of severity S
//   is a false positive. A finding without a severity is held to none: it finds nothing and is no
//   false positive by severity (it still counts overall). So a verifier that lowers a real critical
//   costs critical recall rather than buying critical precision.

/** One finding of the review under test, as the judge sees it (title and body joined, usually). */
export interface Candidate {
  text: string
  /** The severity the reviewer gave it: what `bySeverity` counts it under, found or spurious. */
  severity?: Severity
  file?: string
  line?: number | null
}

/** A golden comment the review found, with the candidate it is credited to. */
export interface Match {
  golden: GoldenComment
  candidate: Candidate
  confidence: number
  reason?: string
}

/** A pair the judge could not decide (an error or an unreadable answer): counted as no match. */
export interface JudgeFailure {
  golden: string
  candidate: string
  error: string
}

/**
 * Counts and ratios. precision is null without any candidate (tp + fp = 0), recall null without
 * golden comments; F1 is 2·tp / (2·tp + fp + fn), the same as 2PR/(P+R) when both exist, 0 when a
 * review said nothing about a change with known problems, and null only when there is nothing at all.
 */
export interface Metrics {
  tp: number
  fp: number
  fn: number
  precision: number | null
  recall: number | null
  f1: number | null
}

/** The outcome of one case: which golden comments were found or missed, which findings were noise. */
export interface CaseScore {
  /** True when the case has no golden comments: nothing is judged and it counts in no total. */
  skipped: boolean
  matched: Match[]
  missed: GoldenComment[]
  spurious: Candidate[]
  /** Pairs without a usable verdict; a case with any should be judged again, not cached. */
  failures: JudgeFailure[]
  /** The review's findings as given, duplicates included (for findings per review). */
  candidates: number
  /** The case's golden comments as given, duplicates included. */
  golden: number
  /** The judge calls made (unique golden × unique candidates). */
  judged: number
  metrics: Metrics
}

/** How `scoreCase` runs the judge. */
export interface ScoreOptions {
  /** Judge calls in flight at once (default 8); the verdicts are used in pair order regardless. */
  concurrency?: number
}

/** Scores one review against one case's golden comments with the benchmark's matching. */
export async function scoreCase(
  candidates: readonly Candidate[],
  golden: readonly GoldenComment[],
  judge: Judge,
  options: ScoreOptions = {},
): Promise<CaseScore> {
  const base = { candidates: candidates.length, golden: golden.length, failures: [], judged: 0 }
  if (golden.length === 0) {
    return { ...base, skipped: true, matched: [], missed: [], spurious: [], metrics: metricsOf(0, 0, 0) }
  }
  const goldens = uniqueBy(golden, (comment) => comment.text)
  const findings = uniqueBy(
    candidates.filter((candidate) => candidate.text.trim() !== ""),
    (candidate) => candidate.text,
  )
  const pairs = goldens.flatMap((comment) => findings.map((finding) => ({ golden: comment, candidate: finding })))
  const verdicts = await mapLimited(pairs, options.concurrency ?? 8, (pair) =>
    askJudge(judge, pair.golden.text, pair.candidate.text),
  )

  const best = new Map<GoldenComment, Match>()
  const cleared = new Set<Candidate>()
  const failures: JudgeFailure[] = []
  pairs.forEach((pair, index) => {
    const verdict = verdicts[index]!
    if (verdict.error !== undefined) {
      failures.push({ golden: pair.golden.text, candidate: pair.candidate.text, error: verdict.error })
      return
    }
    if (!verdict.match) return
    const confidence = verdict.confidence ?? 1
    if (confidence <= (best.get(pair.golden)?.confidence ?? 0)) return
    const match: Match = { golden: pair.golden, candidate: pair.candidate, confidence }
    if (verdict.reason !== undefined) match.reason = verdict.reason
    best.set(pair.golden, match)
    cleared.add(pair.candidate)
  })

  const matched = goldens.flatMap((comment) => best.get(comment) ?? [])
  const missed = goldens.filter((comment) => !best.has(comment))
  const spurious = findings.filter((finding) => !cleared.has(finding))
  return {
    ...base,
    skipped: false,
    matched,
    missed,
    spurious,
    failures,
    judged: pairs.length,
    metrics: metricsOf(matched.length, spurious.length, missed.length),
  }
}

/**
 * The score of a review that failed (the pipeline threw): it found nothing, so every golden comment
 * is missed and nothing is judged. A case without golden comments stays skipped.
 */
export function failedReviewScore(golden: readonly GoldenComment[]): CaseScore {
  const missed = uniqueBy(golden, (comment) => comment.text)
  return {
    skipped: golden.length === 0,
    matched: [],
    missed,
    spurious: [],
    failures: [],
    candidates: 0,
    golden: golden.length,
    judged: 0,
    metrics: metricsOf(0, 0, missed.length),
  }
}

/**
 * The same verdicts with some findings at another severity (keyed by the candidate's text), for
 * scoring a review again without new judge calls: matching ignores severity, `bySeverity` does not.
 */
export function withSeverities(score: CaseScore, severities: ReadonlyMap<string, Severity>): CaseScore {
  const restore = <T extends { text: string; severity?: Severity | undefined }>(candidate: T): T =>
    severities.has(candidate.text) ? { ...candidate, severity: severities.get(candidate.text) } : candidate
  return {
    ...score,
    spurious: score.spurious.map(restore),
    matched: score.matched.map((match) => ({ ...match, candidate: restore(match.candidate) })),
  }
}

/** One scored case of a run, with what `scoreRun` groups by. */
export interface ScoredCase {
  id: string
  repository: string
  score: CaseScore
  /** The review failed: `score` is {@link failedReviewScore}'s and the case is listed in `failed`. */
  failed?: boolean
}

/** A run's totals: overall, per severity, per repository, and how talkative the reviewer was. */
export interface RunScore {
  /** Cases given, scored or not. */
  cases: number
  /** Cases that counted (they had golden comments), failed reviews included. */
  scored: number
  /** Ids of the cases without golden comments. */
  skipped: string[]
  /** Ids of the cases whose review failed: counted as finding nothing (their golden comments are misses). */
  failed: string[]
  overall: Metrics
  /**
   * Under severity S: a golden comment of severity S found by a finding of severity S or more
   * serious is tp, else fn; a spurious finding of severity S is fp (one without a severity counts
   * only overall).
   */
  bySeverity: Record<Severity, Metrics>
  /** Keyed by repository, in code-unit order. */
  byRepository: Record<string, Metrics>
  /** Findings over all cases, duplicates included. */
  findings: number
  /** findings / the reviews that did not fail, null when there are none. */
  findingsPerReview: number | null
  /** Judge calls without a usable verdict, over all cases. */
  judgeFailures: number
}

/** Sums a run's case scores the way the benchmark does (micro-averaged: totals first, then ratios). */
export function scoreRun(cases: readonly ScoredCase[]): RunScore {
  const scored = cases.filter((item) => !item.score.skipped)
  const overall = sum(scored.map((item) => item.score.metrics))
  const bySeverity = Object.fromEntries(
    severityOrder.map((severity) => [severity, severityMetrics(scored, severity)]),
  ) as Record<Severity, Metrics>
  const repositories = [...new Set(scored.map((item) => item.repository))].sort()
  const byRepository = Object.fromEntries(
    repositories.map((repository) => [
      repository,
      sum(scored.filter((item) => item.repository === repository).map((item) => item.score.metrics)),
    ]),
  )
  const findings = cases.reduce((total, item) => total + item.score.candidates, 0)
  const failed = cases.filter((item) => item.failed).map((item) => item.id)
  const reviews = cases.length - failed.length
  return {
    cases: cases.length,
    scored: scored.length,
    skipped: cases.filter((item) => item.score.skipped).map((item) => item.id),
    failed,
    overall,
    bySeverity,
    byRepository,
    findings,
    findingsPerReview: reviews === 0 ? null : findings / reviews,
    judgeFailures: cases.reduce((total, item) => total + item.score.failures.length, 0),
  }
}

/** Metrics from counts; see {@link Metrics} for the zero cases. */
export function metricsOf(tp: number, fp: number, fn: number): Metrics {
  return {
    tp,
    fp,
    fn,
    precision: ratio(tp, tp + fp),
    recall: ratio(tp, tp + fn),
    f1: ratio(2 * tp, 2 * tp + fp + fn),
  }
}

function severityMetrics(cases: readonly ScoredCase[], severity: Severity): Metrics {
  let tp = 0
  let fp = 0
  let fn = 0
  // One rule for both sides: the severity the finding was given (see the header comment).
  const meets = (candidate: Candidate) =>
    candidate.severity !== undefined && compareSeverity(candidate.severity, severity) <= 0
  for (const { score } of cases) {
    const found = score.matched.filter((match) => match.golden.severity === severity)
    const flagged = found.filter((match) => meets(match.candidate)).length
    tp += flagged
    fn += found.length - flagged + score.missed.filter((comment) => comment.severity === severity).length
    fp += score.spurious.filter((candidate) => candidate.severity === severity).length
  }
  return metricsOf(tp, fp, fn)
}

function sum(metrics: readonly Metrics[]): Metrics {
  const total = (key: "tp" | "fp" | "fn") => metrics.reduce((value, item) => value + item[key], 0)
  return metricsOf(total("tp"), total("fp"), total("fn"))
}

function ratio(numerator: number, denominator: number): number | null {
  return denominator === 0 ? null : numerator / denominator
}

async function askJudge(judge: Judge, golden: string, candidate: string): Promise<JudgeVerdict> {
  try {
    const verdict = await judge(golden, candidate)
    if (typeof verdict?.match !== "boolean") return failed("the judge returned no verdict")
    return verdict
  } catch (error) {
    return failed(`the judge failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

function failed(error: string): JudgeVerdict {
  return { match: false, reason: error, error }
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>()
  return items.filter((item) => {
    const value = key(item)
    if (seen.has(value)) return false
    seen.add(value)
    return true
  })
}

async function mapLimited<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await run(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker))
  return results
}
