import { existsSync, readFileSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { bundledCorpusDirectory } from "./load"
import {
  convertMartianDashboard,
  convertMartianGolden,
  MartianDashboard,
  MartianGoldenEntry,
  mapMartianSeverity,
  martianCaseId,
  martianProjects,
} from "./martian"
import { loadPublishedResults, publishedTable } from "./published"

describe("Martian conversion", () => {
  it("names a case after the pull request's repository and number", () => {
    expect(martianCaseId("https://github.com/grafana/grafana/pull/79265")).toBe("grafana-79265")
    expect(martianCaseId("https://github.com/calcom/cal.com/pull/8087")).toBe("cal-com-8087")
    expect(martianCaseId("https://github.com/ai-code-review-evaluation/sentry-greptile/pull/5")).toBe(
      "sentry-greptile-5",
    )
    expect(() => martianCaseId("https://gitlab.com/a/b/-/merge_requests/1")).toThrow(/not a GitHub pull request/)
  })

  it("maps Critical and High to critical, Medium to warning, Low to suggestion, and refuses others", () => {
    expect(["Critical", "High", "Medium", "Low"].map(mapMartianSeverity)).toEqual([
      "critical",
      "critical",
      "warning",
      "suggestion",
    ])
    expect(() => mapMartianSeverity("Blocker")).toThrow(/unknown Martian severity/)
  })

  it("keeps the golden text verbatim, the source severity, the original link and the note", () => {
    const [converted] = convertMartianGolden("sentry", [
      {
        pr_title: "Fix it",
        url: "https://github.com/ai-code-review-evaluation/sentry-greptile/pull/2",
        original_url: "https://github.com/getsentry/sentry/pull/92393",
        az_comment: "reviewed commit is not in the repo",
        comments: [{ comment: "  Trailing space kept. ", severity: "High" }],
      },
    ])
    expect(converted).toEqual({
      id: "sentry-greptile-2",
      repository: "getsentry/sentry",
      diff: { kind: "pull-request", url: "https://github.com/ai-code-review-evaluation/sentry-greptile/pull/2" },
      title: "Fix it",
      original: "https://github.com/getsentry/sentry/pull/92393",
      note: "reviewed commit is not in the repo",
      golden: [{ text: "  Trailing space kept. ", severity: "critical", sourceSeverity: "High" }],
    })
  })
})

describe("the bundled published results", () => {
  it("lead with the default judge's table, Augment first at F1 53.8 and precision 47.0", async () => {
    const results = (await loadPublishedResults(bundledCorpusDirectory("martian")))!
    expect(results.defaultJudgeModel).toBe("anthropic_claude-opus-4-5-20251101")
    const table = publishedTable(results)
    expect(table.judgeModel).toBe(results.defaultJudgeModel)
    expect(table.tools).toHaveLength(12)
    expect(table.tools[0]).toMatchObject({ name: "Augment", precision: 47.0, recall: 62.8, f1: 53.8, reviews: 50 })
    expect(publishedTable(results, "openai_gpt-5.2").tools[0]).toMatchObject({ tool: "augment", f1: 45.8 })
  })

  it("agree with their own counts (precision, recall and F1 recomputed from tp, fp, fn)", async () => {
    const results = (await loadPublishedResults(bundledCorpusDirectory("martian")))!
    const round = (value: number) => Math.round(value * 1000) / 10
    for (const table of results.tables) {
      for (const tool of table.tools) {
        const precision = tool.tp / (tool.tp + tool.fp)
        const recall = tool.tp / (tool.tp + tool.fn)
        expect([round(precision), round(recall), round((2 * precision * recall) / (precision + recall))]).toEqual([
          tool.precision,
          tool.recall,
          tool.f1,
        ])
        expect(tool.tp + tool.fn).toBe(137)
      }
    }
  })
})

// The benchmark's data is outside the repository; where it is present, the bundled corpus must be
// exactly what the import script makes from it.
const dataDirectory = "/work/shared/eval-data/martian-code-review-bench"

describe.skipIf(!existsSync(dataDirectory))("the bundled corpus against the benchmark's data", () => {
  it("holds every golden comment verbatim, and the dashboard's table", async () => {
    const corpusDirectory = bundledCorpusDirectory("martian")
    const expected = Object.keys(martianProjects).flatMap((project) =>
      convertMartianGolden(
        project,
        MartianGoldenEntry.array().parse(
          JSON.parse(readFileSync(join(dataDirectory, "offline/golden_comments", `${project}.json`), "utf8")),
        ),
      ),
    )
    const files = await readdir(join(corpusDirectory, "cases"))
    expect(files.sort()).toEqual(expected.map((item) => `${item.id}.json`).sort())
    for (const item of expected) {
      expect(JSON.parse(await readFile(join(corpusDirectory, "cases", `${item.id}.json`), "utf8"))).toEqual(item)
    }
    const dashboard = MartianDashboard.parse(
      JSON.parse(readFileSync(join(dataDirectory, "offline/analysis/benchmark_dashboard.json"), "utf8")),
    )
    expect(await loadPublishedResults(corpusDirectory)).toEqual(convertMartianDashboard(dashboard))
    expect(await readFile(join(corpusDirectory, "LICENSE"), "utf8")).toBe(
      readFileSync(join(dataDirectory, "LICENSE"), "utf8"),
    )
  })
})
