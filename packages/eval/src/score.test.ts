import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import type { GoldenComment } from "./corpus"
import type { Judge, JudgeVerdict } from "./judge"
import type { MartianReplayCase } from "./martian"
import { type Candidate, failedReviewScore, type ScoredCase, scoreCase, scoreRun, withSeverities } from "./score"

const golden: GoldenComment[] = [
  { text: "SQL injection in the search query", severity: "critical" },
  { text: "Off-by-one in the pagination loop", severity: "warning" },
  { text: "The helper name is misleading", severity: "suggestion" },
]

/** A replay judge: the pairs it matches, with an optional confidence; every other pair is no match. */
function replayJudge(matches: Record<string, Record<string, number | true>>, calls: string[] = []): Judge {
  return async (goldenText, candidate) => {
    calls.push(`${goldenText} | ${candidate}`)
    const hit = matches[goldenText]?.[candidate]
    if (hit === undefined) return { match: false, reason: "different problem" }
    return hit === true ? { match: true, reason: "same problem" } : { match: true, confidence: hit }
  }
}

const perfect = replayJudge({
  "SQL injection in the search query": { "search builds SQL from user input": true },
  "Off-by-one in the pagination loop": { "loop skips the last page": true },
  "The helper name is misleading": { "rename fmt() to formatDate()": true },
})
const perfectFindings: Candidate[] = [
  { text: "search builds SQL from user input", severity: "critical" },
  { text: "loop skips the last page", severity: "warning" },
  { text: "rename fmt() to formatDate()", severity: "suggestion" },
]

describe("scoreCase", () => {
  it("scores a perfect reviewer 1.0 on precision, recall and F1", async () => {
    const score = await scoreCase(perfectFindings, golden, perfect)
    expect(score.metrics).toEqual({ tp: 3, fp: 0, fn: 0, precision: 1, recall: 1, f1: 1 })
    expect(score.matched.map((match) => match.candidate.text)).toEqual(perfectFindings.map((item) => item.text))
    expect(score.missed).toEqual([])
    expect(score.spurious).toEqual([])
    expect(score.judged).toBe(9)
  })

  it("gives a silent reviewer 0 recall, null precision and F1 0, without calling the judge", async () => {
    const calls: string[] = []
    const score = await scoreCase([], golden, replayJudge({}, calls))
    expect(score.metrics).toEqual({ tp: 0, fp: 0, fn: 3, precision: null, recall: 0, f1: 0 })
    expect(score.missed).toEqual(golden)
    expect(calls).toEqual([])
  })

  it("gives a noisy reviewer with 1 right finding of 4 a precision of 0.25", async () => {
    const findings: Candidate[] = [
      { text: "search builds SQL from user input", severity: "critical" },
      { text: "consider a constant here", severity: "suggestion" },
      { text: "this log line is noisy", severity: "suggestion" },
      { text: "maybe a race in the cache", severity: "warning" },
    ]
    const score = await scoreCase(findings, golden, perfect)
    expect(score.metrics.precision).toBe(0.25)
    expect(score.metrics.recall).toBeCloseTo(1 / 3)
    expect(score.metrics.f1).toBeCloseTo((2 * 0.25 * (1 / 3)) / (0.25 + 1 / 3))
    expect(score.spurious.map((item) => item.text)).toEqual(findings.slice(1).map((item) => item.text))
    expect(score.missed.map((item) => item.text)).toEqual([golden[1]!.text, golden[2]!.text])
  })

  it("skips a case without golden comments: nothing judged, no false positives counted", async () => {
    const calls: string[] = []
    const score = await scoreCase(perfectFindings, [], replayJudge({}, calls))
    expect(score.skipped).toBe(true)
    expect(score.metrics).toEqual({ tp: 0, fp: 0, fn: 0, precision: null, recall: null, f1: null })
    expect(score.candidates).toBe(3)
    expect(calls).toEqual([])
  })

  it("counts identical texts once, on both sides, and judges each distinct pair once", async () => {
    const calls: string[] = []
    const judge = replayJudge(
      { "SQL injection in the search query": { "search builds SQL from user input": true } },
      calls,
    )
    const findings = [perfectFindings[0]!, { ...perfectFindings[0]! }, { text: "unrelated" }, { text: "unrelated" }]
    const score = await scoreCase(findings, [golden[0]!, { ...golden[0]! }], judge)
    expect(score.metrics).toMatchObject({ tp: 1, fp: 1, fn: 0 })
    expect(score.candidates).toBe(4)
    expect(score.golden).toBe(2)
    expect(calls).toHaveLength(2)
  })

  it("lets one finding cover two golden comments, each counted as found", async () => {
    const both = "pagination uses unescaped SQL and stops one page early"
    const judge = replayJudge({
      "SQL injection in the search query": { [both]: true },
      "Off-by-one in the pagination loop": { [both]: true },
    })
    const score = await scoreCase([{ text: both }], golden.slice(0, 2), judge)
    expect(score.metrics).toEqual({ tp: 2, fp: 0, fn: 0, precision: 1, recall: 1, f1: 1 })
  })

  it("credits a golden comment to its most confident match, the first one on a tie", async () => {
    const judge = replayJudge({ "SQL injection in the search query": { a: 0.6, b: 0.9, c: 0.9 } })
    const score = await scoreCase([{ text: "a" }, { text: "b" }, { text: "c" }], golden.slice(0, 1), judge)
    expect(score.matched).toHaveLength(1)
    expect(score.matched[0]).toMatchObject({ candidate: { text: "b" }, confidence: 0.9 })
    // As in the benchmark: "a" raised the best confidence when it was judged, so it is not spurious;
    // "c" only tied, so it is.
    expect(score.spurious.map((item) => item.text)).toEqual(["c"])
    expect(score.metrics).toMatchObject({ tp: 1, fp: 1, fn: 0 })
  })

  it("leaves a later, less confident match spurious", async () => {
    const judge = replayJudge({ "SQL injection in the search query": { a: 0.9, b: 0.5 } })
    const score = await scoreCase([{ text: "a" }, { text: "b" }], golden.slice(0, 1), judge)
    expect(score.spurious.map((item) => item.text)).toEqual(["b"])
  })

  it("does not count a match the judge gives zero confidence", async () => {
    const judge = replayJudge({ "SQL injection in the search query": { a: 0 } })
    const score = await scoreCase([{ text: "a" }], golden.slice(0, 1), judge)
    expect(score.metrics).toMatchObject({ tp: 0, fp: 1, fn: 1 })
  })

  it("records a throwing judge or a verdict-less answer as a failure and no match, never a crash", async () => {
    const judge: Judge = async (_golden, candidate) => {
      if (candidate === "boom") throw new Error("rate limited")
      if (candidate === "odd") return {} as JudgeVerdict
      if (candidate === "garbage") return { match: false, error: "no verdict in the judge's answer: hmm" }
      return { match: true }
    }
    const score = await scoreCase(
      [{ text: "boom" }, { text: "odd" }, { text: "garbage" }, { text: "fine" }],
      golden.slice(0, 1),
      judge,
    )
    expect(score.failures.map((failure) => failure.error)).toEqual([
      "the judge failed: rate limited",
      "the judge returned no verdict",
      "no verdict in the judge's answer: hmm",
    ])
    expect(score.metrics).toMatchObject({ tp: 1, fp: 3, fn: 0 })
  })

  it("uses verdicts in pair order whatever order the judge answers in", async () => {
    let pending: (() => void)[] = []
    const judge: Judge = (goldenText, candidate) =>
      new Promise((resolve) => {
        pending.push(() => resolve({ match: true, confidence: candidate === "first" ? 0.5 : 0.8 }))
        if (pending.length === 2) {
          const waiting = pending
          pending = []
          for (const release of waiting.reverse()) release()
        }
        void goldenText
      })
    const score = await scoreCase([{ text: "first" }, { text: "second" }], golden.slice(0, 1), judge, {
      concurrency: 2,
    })
    expect(score.matched[0]!.candidate.text).toBe("second")
    expect(score.spurious).toEqual([])
  })

  it("ignores empty findings", async () => {
    const score = await scoreCase([{ text: "  " }], golden.slice(0, 1), perfect)
    expect(score.judged).toBe(0)
    expect(score.metrics).toMatchObject({ tp: 0, fp: 0, fn: 1 })
  })
})

describe("scoreRun", () => {
  it("sums counts before dividing, per severity and per repository, with findings per review", async () => {
    const cases: ScoredCase[] = [
      { id: "a-1", repository: "acme/api", score: await scoreCase(perfectFindings, golden, perfect) },
      {
        id: "a-2",
        repository: "acme/api",
        score: await scoreCase([{ text: "noise", severity: "critical" }], golden.slice(0, 1), perfect),
      },
      { id: "b-1", repository: "acme/web", score: await scoreCase([], golden.slice(1), perfect) },
      { id: "c-1", repository: "acme/cli", score: await scoreCase([{ text: "unscored" }], [], perfect) },
    ]
    const run = scoreRun(cases)
    expect(run).toMatchObject({
      cases: 4,
      scored: 3,
      skipped: ["c-1"],
      failed: [],
      findings: 5,
      findingsPerReview: 1.25,
    })
    expect(run.overall).toMatchObject({ tp: 3, fp: 1, fn: 3, precision: 0.75, recall: 0.5 })
    expect(run.overall.f1).toBeCloseTo(0.6)
    expect(run.bySeverity.critical).toMatchObject({ tp: 1, fp: 1, fn: 1, precision: 0.5, recall: 0.5 })
    expect(run.bySeverity.warning).toMatchObject({ tp: 1, fp: 0, fn: 1, precision: 1, recall: 0.5 })
    expect(run.bySeverity.suggestion).toMatchObject({ tp: 1, fp: 0, fn: 1 })
    expect(Object.keys(run.byRepository)).toEqual(["acme/api", "acme/web"])
    expect(run.byRepository["acme/web"]).toEqual({ tp: 0, fp: 0, fn: 2, precision: null, recall: 0, f1: 0 })
    expect(run.byRepository["acme/api"]).toMatchObject({ tp: 3, fp: 1, fn: 1, precision: 0.75, recall: 0.75 })
  })

  it("counts a failed review as finding nothing: its golden comments are misses overall, by severity and repository", async () => {
    const found = await scoreCase(perfectFindings, golden, perfect)
    const failed = failedReviewScore(golden)
    expect(failed).toMatchObject({
      skipped: false,
      matched: [],
      spurious: [],
      missed: golden,
      judged: 0,
      candidates: 0,
    })
    const run = scoreRun([
      { id: "ok", repository: "acme/api", score: found },
      { id: "crashed", repository: "acme/web", score: failed, failed: true },
    ])
    expect(run).toMatchObject({ cases: 2, scored: 2, failed: ["crashed"], skipped: [] })
    // Left out, the crash would leave a perfect 1.0; counted, it halves recall.
    expect(run.overall).toMatchObject({ tp: 3, fp: 0, fn: 3, precision: 1, recall: 0.5 })
    expect(run.bySeverity.critical).toMatchObject({ tp: 1, fp: 0, fn: 1, recall: 0.5 })
    expect(run.byRepository["acme/web"]).toEqual({ tp: 0, fp: 0, fn: 3, precision: null, recall: 0, f1: 0 })
    // How talkative the reviewer is counts the reviews that finished only.
    expect(run.findingsPerReview).toBe(3)
  })

  it("scores a failed review of a case without golden comments as skipped, each golden text once", () => {
    expect(failedReviewScore([]).skipped).toBe(true)
    expect(failedReviewScore([golden[0]!, { ...golden[0]! }]).metrics).toMatchObject({ tp: 0, fp: 0, fn: 1 })
  })

  it("reports nulls, not NaN, for an empty run", () => {
    const run = scoreRun([])
    expect(run.overall).toEqual({ tp: 0, fp: 0, fn: 0, precision: null, recall: null, f1: null })
    expect(run.findingsPerReview).toBeNull()
    expect(JSON.stringify(run)).not.toContain("NaN")
  })
})

describe("by severity: found and spurious counted by the severity the finding was given", () => {
  const blocker: GoldenComment = { text: "SQL injection in the search query", severity: "critical" }
  const real = "search builds SQL from user input"
  const invented = "remote code execution in the logger"
  const judge = replayJudge({ [blocker.text]: { [real]: true } })
  const bySeverityOf = (score: ScoredCase["score"]) => scoreRun([{ id: "a", repository: "acme/api", score }]).bySeverity

  it("a verifier that lowers only the spurious critical looks better; one that lowers both looks worse", async () => {
    const score = await scoreCase(
      [
        { text: real, severity: "critical" },
        { text: invented, severity: "critical" },
      ],
      [blocker],
      judge,
    )
    expect(bySeverityOf(score).critical).toMatchObject({ tp: 1, fp: 1, fn: 0, precision: 0.5, recall: 1 })
    const spuriousLowered = withSeverities(score, new Map([[invented, "warning"]]))
    expect(bySeverityOf(spuriousLowered).critical).toMatchObject({ tp: 1, fp: 0, fn: 0, precision: 1, recall: 1 })
    // Lowering the real blocker too is not "precision 1.0": the blocker is no longer flagged as one.
    const bothLowered = withSeverities(
      score,
      new Map([
        [real, "warning"],
        [invented, "warning"],
      ]),
    )
    expect(bySeverityOf(bothLowered).critical).toEqual({ tp: 0, fp: 0, fn: 1, precision: null, recall: 0, f1: 0 })
    expect(bySeverityOf(bothLowered).warning).toMatchObject({ tp: 0, fp: 1, fn: 0 })
    // Matching ignores severity: overall is the same whatever the verifier did.
    expect(scoreRun([{ id: "a", repository: "r", score: bothLowered }]).overall).toEqual(
      scoreRun([{ id: "a", repository: "r", score }]).overall,
    )
  })

  it("counts a golden comment found by a finding at its severity or above, a miss below it or without one", async () => {
    const warning: GoldenComment = { text: "Off-by-one in the pagination loop", severity: "warning" }
    const judgeBoth = replayJudge({
      [blocker.text]: { "too mild": true },
      [warning.text]: { "too loud": true },
    })
    const score = await scoreCase(
      [
        { text: "too mild", severity: "suggestion" },
        { text: "too loud", severity: "critical" },
      ],
      [blocker, warning],
      judgeBoth,
    )
    const bySeverity = bySeverityOf(score)
    expect(bySeverity.critical).toMatchObject({ tp: 0, fp: 0, fn: 1 })
    expect(bySeverity.warning).toMatchObject({ tp: 1, fp: 0, fn: 0 })
    expect(bySeverity.suggestion).toMatchObject({ tp: 0, fp: 0, fn: 0 })
    const unrated = await scoreCase([{ text: real }], [blocker], judge)
    expect(bySeverityOf(unrated).critical).toMatchObject({ tp: 0, fp: 0, fn: 1 })
    expect(scoreRun([{ id: "a", repository: "r", score: unrated }]).overall).toMatchObject({ tp: 1, fn: 0 })
  })
})

interface Replay {
  cases: MartianReplayCase[]
}

describe("the benchmark's own verdicts replayed", () => {
  const replay: Replay = JSON.parse(
    readFileSync(new URL("./__fixtures__/martian-claude-code-replay.json", import.meta.url), "utf8"),
  )
  const corpus = new Map(
    replay.cases.map((item) => [
      item.id,
      JSON.parse(readFileSync(new URL(`../corpora/martian/cases/${item.id}.json`, import.meta.url), "utf8")),
    ]),
  )

  it("reproduces Claude Code's published counts and its 33.1 / 35.8 / 34.4 on the Martian set", async () => {
    const cases: ScoredCase[] = []
    for (const item of replay.cases) {
      const matches: Record<string, Record<string, number>> = {}
      for (const match of item.matches) (matches[match.golden] ??= {})[match.candidate] = match.confidence
      const testCase = corpus.get(item.id)
      const score = await scoreCase(item.candidates, testCase.golden, replayJudge(matches))
      expect({ id: item.id, tp: score.metrics.tp, fp: score.metrics.fp, fn: score.metrics.fn }).toEqual({
        id: item.id,
        ...item.expected,
      })
      cases.push({ id: item.id, repository: testCase.repository, score })
    }
    const run = scoreRun(cases)
    expect(run.scored).toBe(50)
    expect(run.overall).toMatchObject({ tp: 49, fp: 99, fn: 88 })
    const percent = (value: number | null) => Math.round(value! * 1000) / 10
    expect([percent(run.overall.precision), percent(run.overall.recall), percent(run.overall.f1)]).toEqual([
      33.1, 35.8, 34.4,
    ])
  })
})
