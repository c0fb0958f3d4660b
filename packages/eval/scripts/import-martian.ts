// Converts the Martian Code Review Bench offline data into the bundled corpus (corpora/martian/)
// and the replay fixture of the scoring tests. Re-runnable; the output depends only on the input.
//   bun packages/eval/scripts/import-martian.ts [DATA_DIR]
// DATA_DIR holds the benchmark's files at their repository paths (LICENSE, offline/...).
import { createHash } from "node:crypto"
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { casesDirectory, manifestFile } from "../src/corpus"
import {
  convertMartianDashboard,
  convertMartianGolden,
  convertMartianReplay,
  MartianDashboard,
  MartianGoldenEntry,
  martianCommit,
  martianManifest,
  martianProjects,
  martianRepository,
} from "../src/martian"
import { publishedResultsFile } from "../src/published"

const dataDirectory = process.argv[2] ?? "/work/shared/eval-data/martian-code-review-bench"
const packageDirectory = fileURLToPath(new URL("..", import.meta.url))
const corpusDirectory = join(packageDirectory, "corpora", "martian")
const fixtureFile = join(packageDirectory, "src", "__fixtures__", "martian-claude-code-replay.json")
const judgeModel = "anthropic_claude-opus-4-5-20251101"
const replayTool = "claude"

const inputs = [
  "LICENSE",
  ...Object.keys(martianProjects)
    .sort()
    .map((project) => `offline/golden_comments/${project}.json`),
  "offline/analysis/benchmark_dashboard.json",
  `offline/results/${judgeModel}/candidates.json`,
  `offline/results/${judgeModel}/evaluations.json`,
]

const read = (path: string) => readFile(join(dataDirectory, path), "utf8")
const json = async (path: string): Promise<unknown> => JSON.parse(await read(path))
const write = (path: string, value: unknown) => writeFile(path, `${JSON.stringify(value, null, 2)}\n`)

const cases = []
for (const project of Object.keys(martianProjects).sort()) {
  const entries = MartianGoldenEntry.array().parse(await json(`offline/golden_comments/${project}.json`))
  cases.push(...convertMartianGolden(project, entries))
}
const ids = new Set(cases.map((testCase) => testCase.id))
if (ids.size !== cases.length) throw new Error("two benchmark pull requests map to the same case id")

const casesPath = join(corpusDirectory, casesDirectory)
await rm(casesPath, { recursive: true, force: true })
await mkdir(casesPath, { recursive: true })
await write(join(corpusDirectory, manifestFile), martianManifest())
for (const testCase of cases) await write(join(casesPath, `${testCase.id}.json`), testCase)

const dashboard = MartianDashboard.parse(await json("offline/analysis/benchmark_dashboard.json"))
await write(join(corpusDirectory, publishedResultsFile), convertMartianDashboard(dashboard))
await writeFile(join(corpusDirectory, "LICENSE"), await read("LICENSE"))

const replay = convertMartianReplay(
  await json(`offline/results/${judgeModel}/candidates.json`),
  await json(`offline/results/${judgeModel}/evaluations.json`),
  replayTool,
)
await mkdir(join(packageDirectory, "src", "__fixtures__"), { recursive: true })
await write(fixtureFile, {
  source: `${martianRepository} offline/results/${judgeModel}/ at ${martianCommit} (MIT, see corpora/martian/LICENSE)`,
  tool: replayTool,
  judgeModel,
  cases: replay,
})

const digests = await Promise.all(
  inputs.map(
    async (path) =>
      `- \`${path}\` (sha256 ${createHash("sha256")
        .update(await read(path))
        .digest("hex")})`,
  ),
)
await writeFile(join(corpusDirectory, "SOURCE.md"), sourceNote(digests, cases.length))
console.log(`wrote ${cases.length} cases to ${corpusDirectory} (${(await readdir(casesPath)).length} files)`)

function sourceNote(digests: string[], count: number): string {
  return `# Source of this corpus

The Martian Code Review Bench, offline set: ${martianRepository}
at commit \`${martianCommit}\` (2026-03-05), MIT licence (\`LICENSE\`, copied verbatim).

Written by \`packages/eval/scripts/import-martian.ts\` from these files of that commit:

${digests.join("\n")}

What was taken, and how:

- \`cases/*.json\` (${count} cases): one per entry of \`offline/golden_comments/*.json\`. The golden comment
  texts are the benchmark's, verbatim; their severity is mapped (Critical and High → \`critical\`,
  Medium → \`warning\`, Low → \`suggestion\`) and the original kept as \`sourceSeverity\`. The diff is
  the benchmark's pull request URL (\`url\`: the pull request the tools reviewed, sometimes a copy
  in the \`ai-code-review-evaluation\` organisation); \`original_url\` is kept as \`original\` and the
  benchmark's \`az_comment\` as \`note\`.
- \`published-results.json\`: \`overall_metrics\` of \`offline/analysis/benchmark_dashboard.json\` for both
  judge models (the dashboard's default, ${judgeModel}, first): each tool's precision, recall and F1
  in percent as published, and the tp / fp / fn counts behind them.
- \`src/__fixtures__/martian-claude-code-replay.json\` (a test fixture, not part of the corpus): the
  candidates the benchmark extracted from the "${replayTool}" tool's reviews and the matches its judge
  recorded (\`offline/results/${judgeModel}/\`), to replay the benchmark's own verdicts through our scoring.

No code or prompt text of the benchmark is copied.
`
}
