import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { applyModelEnv, type Config, parseConfigText, resolveConfig } from "@opencode-reviewer/core"
import {
  bundledCorpora,
  bundledCorpusDirectory,
  type CaseScore,
  type Corpus,
  type CorpusCase,
  cacheKey,
  casesFromGit,
  failedReviewScore,
  hashCase,
  hashText,
  type Judge,
  loadCorpus,
  loadPublishedResults,
  type Metrics,
  publishedTable,
  type RunScore,
  readCorpusDiff,
  scoreCase,
  scoreRun,
  withSeverities,
} from "@opencode-reviewer/eval"
import { startModelServer } from "@opencode-reviewer/testkit"
import pLimit from "p-limit"
import { findAssets } from "./assets"
import { CliUsageError, formatError } from "./errors"
import { startModelJudge } from "./eval-judge"
import { loadReplay } from "./eval-replay"
import { finishReview } from "./finish"
import { type Io, readText } from "./io"
import { prepare } from "./prepare"
import { runReview } from "./run"

// `opencode-reviewer eval`: replays a corpus of changes with known problems through the real review
// pipeline (plan, reviewers, coordinator; nothing posted) and scores each review's findings against
// the golden comments with the benchmark's matching (packages/eval, docs/eval.md). Each case's
// result is stored under its cache key as soon as it is scored, so an interrupted run picks up
// where it stopped and a finished case is never run again.

const options = {
  corpus: { type: "string" },
  demo: { type: "boolean" },
  replay: { type: "boolean" },
  "from-git": { type: "string" },
  repo: { type: "string" },
  limit: { type: "string" },
  concurrency: { type: "string" },
  "judge-model": { type: "string" },
  runs: { type: "string" },
  config: { type: "string" },
  "output-dir": { type: "string" },
  json: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const

/** One case of one run, as stored in `cases/<id>.run<N>.json` and in eval.json. */
export interface CaseResult {
  key: string
  id: string
  repository: string
  run: number
  /** Why the case was not scored: its diff could not be read or fetched (says nothing of the reviewer). */
  skipped: string | null
  /**
   * Why the review failed (the pipeline threw), or null. A failed review is scored as finding
   * nothing (`score` misses every golden comment) and is never stored for reuse.
   */
  failed: string | null
  score: CaseScore | null
  findings: number
  costUsd: number
  durationMs: number
  /**
   * The same review scored with the severities the coordinator gave, before the verifier lowered
   * any (null when it lowered none): what verification changed, measured.
   */
  unverified?: CaseScore | null
  /** Taken from an earlier run's stored result (same cache key): nothing was reviewed or judged again. */
  cached?: boolean
}

/** eval.json. */
export interface EvalReport {
  corpus: string
  judgeModel: string
  runs: number
  cases: CaseResult[]
  /** The score over every run's cases together. */
  score: RunScore
  /** The same with the severities from before verification, when the verifier lowered any finding. */
  unverifiedScore: RunScore | null
  /** Each run's overall score, for the spread. */
  perRun: Metrics[]
  /** What the reviews cost (the judge's calls are judgeCostUsd). */
  costUsd: number
  judgeCostUsd: number
  durationMs: number
  /** The benchmark's published results with the same judge, when the corpus has them. */
  published: { tool: string; precision: number | null; recall: number | null; f1: number | null }[] | null
}

export async function evaluate(args: string[], io: Io): Promise<number> {
  const values = parseFlags(args)
  if (values.help) {
    io.stdout(evalHelp)
    return 0
  }
  const limit = positive(values.limit, "--limit")
  const concurrency = positive(values.concurrency, "--concurrency") ?? 1
  const runs = positive(values.runs, "--runs") ?? 1
  const corpus = values["from-git"] === undefined ? await loadNamedCorpus(values, io) : historyCorpus(values, io)
  const cases = corpus.cases.slice(0, limit ?? corpus.cases.length)
  const outputDir = resolve(io.cwd, values["output-dir"] ?? join(".opencode-reviewer", "eval", corpus.manifest.name))
  await mkdir(join(outputDir, "cases"), { recursive: true })

  const scratch = await mkdtemp(join(tmpdir(), "opencode-reviewer-eval-"))
  let onExit = async () => {}
  const server = values.demo || values.replay ? await startModelServer() : null
  try {
    let judge: Judge
    let judgeModel: string
    let configFile: string
    let closeJudge = async () => {}
    let judgeCost = () => 0
    if (values.demo || values.replay) {
      const replay = await loadReplay(corpus)
      replay.script(server!)
      judge = replay.judge
      judgeModel = replay.judgeModel
      configFile = join(scratch, "opencode-reviewer.json")
      await writeFile(configFile, JSON.stringify(replay.config(server!.url)))
    } else {
      configFile = await reviewConfigFile(values.config ?? io.env.OPENCODE_REVIEWER_CONFIG, scratch, io)
      const reviewConfig = await readConfig(configFile, io)
      // The benchmark judges with one strong model; without --judge-model, the top tier's first.
      judgeModel = values["judge-model"] ?? reviewConfig.models.top[0]!
      const model = await startModelJudge({ config: reviewConfig, model: judgeModel, workDir: scratch, io })
      judge = model.judge
      closeJudge = model.close
      judgeCost = model.costUsd
    }
    onExit = closeJudge
    const config = await readConfig(configFile, io)
    const promptHash = await hashPrompts()
    const started = performance.now()
    const results: CaseResult[] = []
    const run = pLimit(concurrency)
    const jobs = Array.from({ length: runs }, (_, index) => index + 1).flatMap((runIndex) =>
      cases.map((testCase) =>
        run(async () => {
          const result = await evaluateCase({
            corpus,
            testCase,
            runIndex,
            judge,
            judgeModel,
            config,
            configFile,
            promptHash,
            outputDir,
            scratch,
            io,
          })
          results.push(result)
          io.stderr(`eval: ${describeCase(result)}\n`)
        }),
      ),
    )
    await Promise.all(jobs)
    results.sort((a, b) => a.run - b.run || cases.indexOf(caseById(cases, a.id)) - cases.indexOf(caseById(cases, b.id)))

    const scored = (list: readonly CaseResult[]) =>
      scoreRun(
        list.flatMap((result) =>
          result.score
            ? [{ id: result.id, repository: result.repository, score: result.score, failed: result.failed !== null }]
            : [],
        ),
      )
    const published = await loadPublishedResults(corpus.directory).catch(() => null)
    const verifiedAny = results.some((result) => result.unverified)
    const report: EvalReport = {
      corpus: corpus.manifest.name,
      judgeModel,
      runs,
      cases: results,
      score: scored(results),
      unverifiedScore: verifiedAny
        ? scored(results.map((result) => ({ ...result, score: result.unverified ?? result.score })))
        : null,
      perRun: Array.from(
        { length: runs },
        (_, index) => scored(results.filter((result) => result.run === index + 1)).overall,
      ),
      costUsd: results.reduce((sum, result) => sum + result.costUsd, 0),
      judgeCostUsd: judgeCost(),
      durationMs: Math.round(performance.now() - started),
      // Published as percentages; ours are fractions.
      published: published
        ? publishedTable(published).tools.map((tool) => ({
            tool: tool.name,
            precision: tool.precision / 100,
            recall: tool.recall / 100,
            f1: tool.f1 / 100,
          }))
        : null,
    }
    await writeFile(join(outputDir, "eval.json"), JSON.stringify(report, null, 2) + "\n")
    const markdown = renderReport(report)
    await writeFile(join(outputDir, "eval.md"), markdown)
    io.stdout(values.json ? JSON.stringify(report, null, 2) + "\n" : markdown)
    io.stderr(`eval: eval.json and eval.md are in ${outputDir}\n`)
    // Success needs at least one review that finished and counted; failed ones are scored, as nothing.
    return results.some((result) => result.failed === null && result.score?.skipped === false) ? 0 : 1
  } finally {
    await onExit().catch(() => {})
    await server?.close()
    await rm(scratch, { recursive: true, force: true })
  }
}

interface CaseInput {
  corpus: Corpus
  testCase: CorpusCase
  runIndex: number
  judge: Judge
  judgeModel: string
  config: Config
  configFile: string
  promptHash: string
  outputDir: string
  scratch: string
  io: Io
}

async function evaluateCase(input: CaseInput): Promise<CaseResult> {
  const { corpus, testCase, runIndex, io } = input
  const base = {
    id: testCase.id,
    repository: testCase.repository,
    run: runIndex,
    findings: 0,
    costUsd: 0,
    durationMs: 0,
  }
  const read = await caseDiff(corpus, testCase, join(input.outputDir, "diffs"), io)
  if (!read.ok) return { ...base, key: "", skipped: read.why, failed: null, score: null }
  const diff = read.diff
  const key = `${cacheKey({
    caseId: testCase.id,
    caseHash: hashCase(testCase, diff),
    modelChains: modelChains(input.config),
    promptHash: input.promptHash,
    judgeModel: input.judgeModel,
  })}-${runIndex}`
  const stored = join(input.outputDir, "cases", `${testCase.id}.run${runIndex}.json`)
  const cached = await readFile(stored, "utf8").then(
    (text) => JSON.parse(text) as CaseResult,
    () => null,
  )
  // Only finished reviews are stored; `failed` is checked anyway, as a stored file is input too.
  if (cached && cached.key === key && cached.skipped === null && !cached.failed)
    return { ...cached, failed: null, cached: true }

  const work = join(input.scratch, `${testCase.id}-${runIndex}`)
  await mkdir(work, { recursive: true })
  const patch = join(work, "change.diff")
  await writeFile(patch, diff)
  const description = join(work, "description.md")
  await writeFile(description, testCase.description ?? "")
  // The review's own progress and review.md go to a log beside the case, not the terminal.
  const log: string[] = []
  const quiet: Io = {
    ...io,
    cwd: work,
    stdout: (chunk) => void log.push(chunk),
    stderr: (chunk) => void log.push(chunk),
  }
  const caseDir = join(input.outputDir, "cases", `${testCase.id}.run${runIndex}`)
  // What a stopped run left of this case (its OpenCode database, a half-written work dir) must not
  // poison the new attempt.
  await rm(caseDir, { recursive: true, force: true })
  const started = performance.now()
  try {
    const prepared = await prepare(
      {
        repo: work,
        patch,
        title: testCase.title ?? testCase.id,
        "description-file": description,
        config: input.configFile,
        "output-dir": caseDir,
      },
      quiet,
      "review",
    )
    const record = await finishReview(prepared, await runReview(prepared, quiet), quiet)
    const candidates = record.findings.map((finding) => ({
      text: `${finding.title}\n\n${finding.body}`,
      severity: finding.severity,
      file: finding.file,
      ...(finding.line === null ? {} : { line: finding.line }),
    }))
    const score = await scoreCase(candidates, testCase.golden, input.judge)
    // Lowered findings at the severity the coordinator gave: no new judge call, matching ignores severity.
    const lowered = new Map(
      record.findings.flatMap((finding, index) =>
        finding.verification && finding.verification.originalSeverity !== finding.severity
          ? [[candidates[index]!.text, finding.verification.originalSeverity] as const]
          : [],
      ),
    )
    const result: CaseResult = {
      ...base,
      key,
      skipped: null,
      failed: null,
      score,
      findings: record.findings.length,
      unverified: lowered.size === 0 ? null : withSeverities(score, lowered),
      costUsd: record.usage.costUsd,
      durationMs: Math.round(performance.now() - started),
    }
    // A judge that could not answer leaves the case to be judged again next time.
    if (score.failures.length === 0) await writeAtomically(stored, JSON.stringify(result, null, 2) + "\n")
    return result
  } catch (error) {
    // Counted as a review that found nothing, not left out: a setup whose reviews crash must not
    // score as well as one that finds the bugs. Not stored, so the next run reviews it again.
    return {
      ...base,
      key,
      skipped: null,
      failed: formatError(error)
        .replace(/^error: /, "")
        .trim(),
      score: failedReviewScore(testCase.golden),
      durationMs: Math.round(performance.now() - started),
    }
  } finally {
    await writeFile(join(input.outputDir, "cases", `${testCase.id}.run${runIndex}.log`), log.join("")).catch(() => {})
  }
}

/**
 * A case's diff: from the corpus, or a public pull request's `.diff` fetched once and kept in
 * `diffs/` (a case whose diff cannot be had is skipped, and says why, never scored).
 */
async function caseDiff(
  corpus: Corpus,
  testCase: CorpusCase,
  cacheDir: string,
  io: Io,
): Promise<{ ok: true; diff: string } | { ok: false; why: string }> {
  const source = testCase.diff
  if (source.kind === "file") {
    const diff = await readCorpusDiff(corpus, testCase)
    return diff === null ? { ok: false, why: `its diff file ${source.path} cannot be read` } : { ok: true, diff }
  }
  if (source.kind === "git") {
    if (source.remote !== undefined)
      return { ok: false, why: "git cases with a remote are not read by this version yet" }
    const diff = gitIn(
      corpus.directory,
      io,
    )(["diff", "--no-color", "--no-ext-diff", "-M", source.base, source.head, "--"])
    return diff === null || diff.trim() === ""
      ? { ok: false, why: `git diff ${source.base} ${source.head} gave no diff in ${corpus.directory}` }
      : { ok: true, diff }
  }
  const cached = join(cacheDir, `${testCase.id}.diff`)
  const kept = await readFile(cached, "utf8").catch(() => null)
  if (kept !== null) return { ok: true, diff: kept }
  // github.com and GitLab both serve a pull (merge) request's diff at its address plus `.diff`.
  const url = `${source.url.replace(/\/+$/, "")}.diff`
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(30_000), redirect: "follow" })
    if (!answer.ok) return { ok: false, why: `its diff could not be fetched: ${url} answered HTTP ${answer.status}` }
    const diff = await answer.text()
    if (!/^diff --git /m.test(diff)) return { ok: false, why: `${url} did not answer with a diff` }
    await mkdir(cacheDir, { recursive: true })
    await writeAtomically(cached, diff)
    return { ok: true, diff }
  } catch (error) {
    return {
      ok: false,
      why: `its diff could not be fetched from ${url}: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
}

function caseById(cases: readonly CorpusCase[], id: string): CorpusCase {
  return cases.find((candidate) => candidate.id === id)!
}

// Each tier's chain and every reviewer's own model: what the review's results depend on.
function modelChains(config: Config): Record<string, string[]> {
  const chains: Record<string, string[]> = { ...config.models }
  for (const [name, settings] of Object.entries(config.reviewers)) if (settings.model) chains[name] = settings.model
  return chains
}

async function hashPrompts(): Promise<string> {
  const dir = findAssets().promptsDir
  const names = (await readdir(dir)).sort()
  const parts = await Promise.all(names.map(async (name) => `${name}\0${await readFile(join(dir, name), "utf8")}`))
  return hashText(parts.join("\0"))
}

// --config (or OPENCODE_REVIEWER_CONFIG) must exist; without either, ./opencode-reviewer.json when
// there is one, else the built-in defaults (written out, since every case's review reads a file).
async function reviewConfigFile(explicit: string | undefined, scratch: string, io: Io): Promise<string> {
  if (explicit !== undefined && explicit !== "") {
    const path = resolve(io.cwd, explicit)
    await readText(path, "config file")
    return path
  }
  const local = resolve(io.cwd, "opencode-reviewer.json")
  if (
    await readFile(local).then(
      () => true,
      () => false,
    )
  )
    return local
  const defaults = join(scratch, "opencode-reviewer.json")
  await writeFile(defaults, "{}\n")
  return defaults
}

async function readConfig(file: string, io: Io): Promise<Config> {
  const read = parseConfigText(await readFile(file, "utf8"), file)
  for (const warning of read.warnings) io.stderr(`warning: ${file}: ${warning}\n`)
  return applyModelEnv(read.config ?? resolveConfig({}), io.env)
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, text)
  await rename(temporary, path)
}

async function loadNamedCorpus(values: ReturnType<typeof parseFlags>, io: Io): Promise<Corpus> {
  const corpusDir = corpusDirectory(values, io)
  const loaded = await loadCorpus(corpusDir)
  for (const problem of loaded.problems) io.stderr(`warning: corpus ${problem.file}: ${problem.message}\n`)
  if (!loaded.corpus) throw new CliUsageError(`no corpus at ${corpusDir}: ${loaded.problems[0]?.message ?? ""}`, null)
  return loaded.corpus
}

// --from-git RANGE: the repository's fix commits as cases (packages/eval/src/from-git.ts).
function historyCorpus(values: ReturnType<typeof parseFlags>, io: Io): Corpus {
  if (values.demo || values.corpus !== undefined || values.replay)
    throw new CliUsageError("--from-git makes its own corpus; leave out --demo, --corpus and --replay", "eval")
  const repoDir = resolve(io.cwd, values.repo ?? ".")
  const range = values["from-git"]!
  const { cases, skipped } = casesFromGit(repoDir, range, gitIn(repoDir, io))
  for (const reason of skipped) io.stderr(`eval: no case from ${reason}\n`)
  if (cases.length === 0)
    throw new CliUsageError(
      `no fix commit in ${range} gave a case (a fix must change lines an earlier commit wrote)`,
      "eval",
    )
  return { directory: repoDir, manifest: { format: 1, name: `git-${basename(repoDir)}` }, cases }
}

function gitIn(repoDir: string, io: Io) {
  return (args: string[]): string | null => {
    const result = Bun.spawnSync(["git", ...args], {
      cwd: repoDir,
      env: { ...io.env, GIT_TERMINAL_PROMPT: "0" } as Record<string, string>,
      stdout: "pipe",
      stderr: "pipe",
    })
    return result.exitCode === 0 ? result.stdout.toString() : null
  }
}

function corpusDirectory(values: ReturnType<typeof parseFlags>, io: Io): string {
  if (values.demo) {
    if (values.corpus !== undefined)
      throw new CliUsageError(
        "--demo brings its own corpus; for another replay corpus use --corpus DIR --replay",
        "eval",
      )
    return bundledCorpusDirectory("demo")
  }
  const name = values.corpus ?? "martian"
  return (bundledCorpora as readonly string[]).includes(name)
    ? bundledCorpusDirectory(name as (typeof bundledCorpora)[number])
    : resolve(io.cwd, name)
}

function parseFlags(args: string[]) {
  try {
    return parseArgs({ args, options, allowPositionals: false, strict: true }).values
  } catch (error) {
    throw new CliUsageError((error as Error).message, "eval")
  }
}

function positive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const number = Number(value)
  if (!Number.isInteger(number) || number < 1)
    throw new CliUsageError(`${flag} must be a whole number of 1 or more`, "eval")
  return number
}

function describeCase(result: CaseResult): string {
  const name = `${result.id}${result.run > 1 ? ` (run ${result.run})` : ""}`
  if (result.skipped !== null || result.score === null) return `${name}: skipped, ${result.skipped}`
  const score = result.score
  if (result.failed !== null)
    return `${name}: the review failed, counted as finding nothing (${score.missed.length} missed): ${oneLine(result.failed)}`
  if (result.cached)
    return `${name}: as stored by an earlier run (${score.matched.length} found, ${score.missed.length} missed, ${score.spurious.length} spurious)`
  return `${name}: ${result.findings} findings; ${score.matched.length} found, ${score.missed.length} missed, ${score.spurious.length} spurious (${(result.durationMs / 1000).toFixed(1)} s, ${result.costUsd.toFixed(2)} USD)`
}

const percent = (value: number | null) => (value === null ? "—" : `${(value * 100).toFixed(1)}`)
// In a sentence, a ratio without a denominator reads better as words than as a dash.
const stated = (value: number | null) => (value === null ? "n/a" : percent(value))
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

/** The readable report: the score table, the spread over runs, the published table, each case. */
export function renderReport(report: EvalReport): string {
  const { score } = report
  const row = (name: string, metrics: Metrics) =>
    `| ${name} | ${percent(metrics.precision)} | ${percent(metrics.recall)} | ${percent(metrics.f1)} | ${metrics.tp} | ${metrics.fp} | ${metrics.fn} |`
  const lines = [
    `# Review quality on ${report.corpus}`,
    "",
    `${score.scored} of ${report.cases.length} cases scored, judge ${report.judgeModel}, ${report.runs} run${report.runs === 1 ? "" : "s"}.`,
    "",
    "| | precision | recall | F1 | found | spurious | missed |",
    "|---|---|---|---|---|---|---|",
    row("**overall**", score.overall),
    ...Object.entries(score.bySeverity).map(([severity, metrics]) => row(severity, metrics)),
    ...Object.entries(score.byRepository).map(([repository, metrics]) => row(repository, metrics)),
    "",
    failedLine(report),
    `Findings per review ${score.findingsPerReview === null ? "—" : score.findingsPerReview.toFixed(2)}; reviews cost ${report.costUsd.toFixed(2)} USD, the judge ${report.judgeCostUsd.toFixed(2)} USD; ${(report.durationMs / 1000).toFixed(1)} s.`,
    perReview(report),
  ]
  if (report.unverifiedScore) {
    const before = report.unverifiedScore.bySeverity.critical
    const after = score.bySeverity.critical
    const both = (metrics: Metrics) => `${stated(metrics.precision)} and ${stated(metrics.recall)}`
    lines.push(
      `Verified blockers: critical precision ${stated(after.precision)} and recall ${stated(after.recall)} with the verifier, ${both(before)} without it (it lowered ${plural(before.fp - after.fp, "spurious critical")} and ${plural(before.tp - after.tp, "real one")}).`,
    )
  }
  if (report.runs > 1) {
    const f1 = report.perRun.map((metrics) => metrics.f1).filter((value): value is number => value !== null)
    if (f1.length > 0)
      lines.push(`F1 over ${report.runs} runs: ${percent(Math.min(...f1))} to ${percent(Math.max(...f1))}.`)
  }
  if (report.published) {
    lines.push(
      "",
      "Published results of the benchmark (same judge):",
      "",
      "| tool | precision | recall | F1 |",
      "|---|---|---|---|",
    )
    for (const tool of report.published)
      lines.push(`| ${tool.tool} | ${percent(tool.precision)} | ${percent(tool.recall)} | ${percent(tool.f1)} |`)
  }
  const skipped = report.cases.filter((result) => result.skipped !== null)
  if (skipped.length > 0) {
    lines.push("", `Not scored (${skipped.length}):`, "")
    for (const result of skipped) lines.push(`- \`${result.id}\`: ${result.skipped}`)
  }
  const failed = report.cases.filter((result) => result.failed !== null)
  if (failed.length > 0) {
    lines.push("", `Failed reviews (${failed.length}), each counted as finding nothing:`, "")
    for (const result of failed)
      lines.push(`- \`${result.id}\`${report.runs > 1 ? ` (run ${result.run})` : ""}: ${oneLine(result.failed!)}`)
  }
  lines.push("", "## Cases", "")
  for (const result of report.cases.filter((entry) => entry.score)) {
    const caseScore = result.score!
    lines.push(`### ${result.id}${report.runs > 1 ? ` (run ${result.run})` : ""}`, "")
    if (result.failed !== null) lines.push(`- the review failed: ${oneLine(result.failed)}`)
    for (const match of caseScore.matched) lines.push(`- found: ${oneLine(match.golden.text)}`)
    for (const missed of caseScore.missed) lines.push(`- missed: ${oneLine(missed.text)}`)
    for (const spurious of caseScore.spurious) lines.push(`- spurious: ${oneLine(spurious.text)}`)
    lines.push("")
  }
  return lines.join("\n")
}

// Right under the table: how many reviews failed, which the recall and F1 above count as finding nothing.
function failedLine(report: EvalReport): string {
  const reviews = report.cases.filter((result) => result.skipped === null)
  const failed = reviews.filter((result) => result.failed !== null)
  if (failed.length === 0) return `Failed reviews: 0 of ${reviews.length}.`
  const missed = failed.reduce((total, result) => total + (result.score?.metrics.fn ?? 0), 0)
  return `**Failed reviews: ${failed.length} of ${reviews.length}**, counted as finding nothing (${plural(missed, "golden comment")} missed); listed below.`
}

// The median review of the run: what one change costs and how long its review takes.
function perReview(report: EvalReport): string {
  const reviewed = report.cases.filter((result) => result.score !== null && result.failed === null)
  if (reviewed.length === 0) return "No review finished."
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    const middle = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  }
  const cost = median(reviewed.map((result) => result.costUsd))
  const seconds = median(reviewed.map((result) => result.durationMs)) / 1000
  return `Per review (median of ${reviewed.length}): ${cost.toFixed(2)} USD, ${seconds.toFixed(1)} s.`
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 200)
}

export const evalHelp = `Usage: opencode-reviewer eval [--demo | --corpus NAME|DIR] [options]

Replays a corpus of changes with known problems through the real review pipeline (nothing is
posted) and scores the findings against the corpus's golden comments: precision, recall and F1
overall, per severity and per repository, findings per review, cost and time. Writes eval.json and
eval.md; each case's result is kept, so a run that was stopped picks up where it stopped.

  --demo                  the bundled demo corpus, a replay model and a replay judge: offline, no keys
  --replay                use the corpus's replay.json as the model and the judge (how --demo runs)
  --from-git RANGE        the fix commits of RANGE in --repo (default .) as cases: each reviews the commit
                          that wrote the lines the fix changed, scored against the fix's message
  --corpus NAME|DIR       a bundled corpus (${bundledCorpora.join(", ")}) or a corpus directory (docs/eval.md)
  --limit N               the first N cases only
  --concurrency N         cases reviewed at once (default 1)
  --runs N                review every case N times and report the spread
  --judge-model MODEL     the judge's model (provider/model; default: the config's models.top first)
  --config FILE           the review configuration: models, reviewers, provider blocks (default
                          $OPENCODE_REVIEWER_CONFIG, then ./opencode-reviewer.json)
  --output-dir DIR        where eval.json, eval.md and the cases go (default .opencode-reviewer/eval/<corpus>)
  --json                  print eval.json instead of the report
  -v, --verbose           debug logs on stderr
`
