import type { Severity } from "@opencode-reviewer/core/model/finding"
import * as z from "zod"
import { type CorpusCase, type CorpusManifest, corpusFormat } from "./corpus"
import { compareCodeUnits } from "./order"
import type { PublishedResults, PublishedTool } from "./published"

// Pure conversion of the Martian Code Review Bench offline data (withmartian/code-review-benchmark,
// MIT) into our corpus format; scripts/import-martian.ts reads the files and writes the results.

/** The benchmark commit the bundled data was copied from. */
export const martianCommit = "012d68202e56280855b85abb956410086008a7b2"

/** The benchmark's repository. */
export const martianRepository = "https://github.com/withmartian/code-review-benchmark"

/** Each golden-comment file's project, as the upstream `owner/name` the changes come from. */
export const martianProjects: Readonly<Record<string, string>> = {
  cal_dot_com: "calcom/cal.com",
  discourse: "discourse/discourse",
  grafana: "grafana/grafana",
  keycloak: "keycloak/keycloak",
  sentry: "getsentry/sentry",
}

/**
 * The benchmark's four severities in our three: Critical and High are bugs that should block a
 * merge (critical), Medium a concrete risk (warning), Low worth considering (suggestion). The
 * original is kept in `sourceSeverity`.
 */
export const martianSeverities: Readonly<Record<string, Severity>> = {
  Critical: "critical",
  High: "critical",
  Medium: "warning",
  Low: "suggestion",
}

/** One entry of `offline/golden_comments/<project>.json`. */
export const MartianGoldenEntry = z.object({
  pr_title: z.string(),
  url: z.url(),
  original_url: z.url().nullish(),
  az_comment: z.string().nullish(),
  comments: z.array(z.object({ comment: z.string().min(1), severity: z.string() })),
})
export type MartianGoldenEntry = z.infer<typeof MartianGoldenEntry>

/** Our case id for a benchmark pull request: the repository's name and the number, e.g. `grafana-79265`. */
export function martianCaseId(url: string): string {
  const match = /^https:\/\/github\.com\/[^/]+\/([^/]+)\/pull\/(\d+)$/.exec(url)
  if (match === null) throw new Error(`not a GitHub pull request URL: ${url}`)
  const name = match[1]!
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
  return `${name}-${match[2]}`
}

/** One project's golden comments as cases, verbatim text, severities mapped; sorted by id. */
export function convertMartianGolden(project: string, entries: readonly MartianGoldenEntry[]): CorpusCase[] {
  const repository = martianProjects[project]
  if (repository === undefined) throw new Error(`unknown Martian project: ${project}`)
  return entries
    .map((entry): CorpusCase => {
      const testCase: CorpusCase = {
        id: martianCaseId(entry.url),
        repository,
        diff: { kind: "pull-request", url: entry.url },
        title: entry.pr_title,
        golden: entry.comments.map((comment) => ({
          text: comment.comment,
          severity: mapMartianSeverity(comment.severity),
          sourceSeverity: comment.severity,
        })),
      }
      if (entry.original_url) testCase.original = entry.original_url
      if (entry.az_comment) testCase.note = entry.az_comment
      return testCase
    })
    .sort((a, b) => compareCodeUnits(a.id, b.id))
}

/** Our severity for one of the benchmark's; an unknown one is an error (the mapping needs a decision). */
export function mapMartianSeverity(severity: string): Severity {
  const mapped = martianSeverities[severity]
  if (mapped === undefined) throw new Error(`unknown Martian severity: ${severity}`)
  return mapped
}

/** The bundled corpus's manifest. */
export function martianManifest(): CorpusManifest {
  return {
    format: corpusFormat,
    name: "martian",
    description:
      "Martian Code Review Bench, offline set: 50 pull requests from five open-source projects with the problems a reviewer should find. The diffs are fetched from GitHub when the eval runs.",
    source: `${martianRepository} at ${martianCommit}`,
    license: "MIT",
  }
}

const Counts = z.object({
  precision: z.number(),
  recall: z.number(),
  f1: z.number(),
  tp: z.number(),
  fp: z.number(),
  fn: z.number(),
  num_prs: z.number(),
})

/** The parts of `offline/analysis/benchmark_dashboard.json` the published table needs. */
export const MartianDashboard = z.object({
  default_model: z.string(),
  tool_display_names: z.record(z.string(), z.string()),
  models: z.record(z.string(), z.object({ overall_metrics: z.record(z.string(), Counts) })),
})
export type MartianDashboard = z.infer<typeof MartianDashboard>

/** The dashboard's overall table per judge model, the default judge first, tools by F1 then name. */
export function convertMartianDashboard(dashboard: MartianDashboard): PublishedResults {
  const judges = Object.keys(dashboard.models).sort((a, b) =>
    a === dashboard.default_model ? -1 : b === dashboard.default_model ? 1 : compareCodeUnits(a, b),
  )
  return {
    source: `${martianRepository} offline/analysis/benchmark_dashboard.json at ${martianCommit}`,
    defaultJudgeModel: dashboard.default_model,
    tables: judges.map((judgeModel) => {
      const metrics = dashboard.models[judgeModel]!.overall_metrics
      const tools = Object.entries(metrics).map(
        ([tool, counts]): PublishedTool => ({
          tool,
          name: dashboard.tool_display_names[tool] ?? tool,
          precision: counts.precision,
          recall: counts.recall,
          f1: counts.f1,
          tp: counts.tp,
          fp: counts.fp,
          fn: counts.fn,
          reviews: counts.num_prs,
        }),
      )
      tools.sort((a, b) => b.f1 - a.f1 || compareCodeUnits(a.tool, b.tool))
      return { judgeModel, tools }
    }),
  }
}

/** One tool's recorded review of one case and the benchmark's verdicts for it, for replay tests. */
export interface MartianReplayCase {
  id: string
  candidates: { text: string }[]
  /** The pairs the benchmark's judge matched (the others it did not), with its confidence. */
  matches: { golden: string; candidate: string; confidence: number }[]
  expected: { tp: number; fp: number; fn: number }
}

const RecordedCandidates = z.record(z.string(), z.record(z.string(), z.array(z.object({ text: z.string().nullish() }))))
const RecordedEvaluations = z.record(
  z.string(),
  z.record(
    z.string(),
    z.object({
      skipped: z.boolean().optional(),
      tp: z.number().optional(),
      fp: z.number().optional(),
      fn: z.number().optional(),
      true_positives: z
        .array(z.object({ golden_comment: z.string(), matched_candidate: z.string(), confidence: z.number() }))
        .optional(),
    }),
  ),
)

/** A tool's recorded candidates and matches from `results/<judge>/{candidates,evaluations}.json`. */
export function convertMartianReplay(candidates: unknown, evaluations: unknown, tool: string): MartianReplayCase[] {
  const recorded = RecordedCandidates.parse(candidates)
  const judged = RecordedEvaluations.parse(evaluations)
  const cases: MartianReplayCase[] = []
  for (const [url, tools] of Object.entries(judged)) {
    const result = tools[tool]
    if (result === undefined || result.skipped) continue
    cases.push({
      id: martianCaseId(url),
      candidates: (recorded[url]?.[tool] ?? []).flatMap((item) => (item.text ? [{ text: item.text }] : [])),
      matches: (result.true_positives ?? []).map((match) => ({
        golden: match.golden_comment,
        candidate: match.matched_candidate,
        confidence: match.confidence,
      })),
      expected: { tp: result.tp ?? 0, fp: result.fp ?? 0, fn: result.fn ?? 0 },
    })
  }
  return cases.sort((a, b) => compareCodeUnits(a.id, b.id))
}
