import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { ReviewRecord } from "@opencode-reviewer/core"
import { bundledCorpusDirectory } from "@opencode-reviewer/eval"
import { createTempRepo, type GithubFake, gitEnv, startGithubFake, type TempRepo } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { main } from "./main"

// With --json, stdout carries one JSON document and nothing else (docs/contracts.md, "The CLI"), so
// `opencode-reviewer review --json | jq` works in any provider. A change of noise only is reviewed
// without any model, so these runs need no OpenCode: the routing is what is tested here, the real
// reviews in test/e2e (github.test.ts, gitlab.test.ts).

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function cli(argv: string[], options: { cwd: string; env?: Record<string, string> }) {
  let stdout = ""
  let stderr = ""
  const code = await main({
    argv,
    env: { ...gitEnv(options.cwd), ...options.env },
    cwd: options.cwd,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdin: async () => new Uint8Array(),
    execPath: process.execPath,
  })
  return { code, stdout, stderr }
}

async function scratchDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

// `main` with a lockfile-only change on `feature`: every file is noise, so `review` calls no model.
async function noiseRepo(): Promise<TempRepo> {
  const repo = await createTempRepo("ocr-json-")
  cleanups.push(() => repo.remove())
  await repo.write({ "README.md": "# app\n", "src/app.ts": "export const a = 1\n" })
  repo.commit("init")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({ "package-lock.json": JSON.stringify({ lockfileVersion: 3, packages: {} }, null, 2) + "\n" })
  repo.commit("Lock dependencies")
  return repo
}

async function reviewJson(outputDir: string): Promise<ReviewRecord> {
  return JSON.parse(await readFile(join(outputDir, "review.json"), "utf8")) as ReviewRecord
}

describe("review --json with the local provider", () => {
  test("prints the record alone on stdout, and the human report on stderr", async () => {
    const repo = await noiseRepo()
    const outputDir = join(await scratchDir("ocr-json-out-"), "out")
    const run = await cli(["review", "--json", "--repo", repo.dir, "--output-dir", outputDir], { cwd: repo.dir })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual(await reviewJson(outputDir))
    expect(run.stderr).toContain("Decision: approved")
    expect(run.stderr).toContain(`Report: ${join(outputDir, "review.md")}`)
  })

  test("without --json, the human report is on stdout as before", async () => {
    const repo = await noiseRepo()
    const outputDir = join(await scratchDir("ocr-json-out-"), "out")
    const run = await cli(["review", "--repo", repo.dir, "--output-dir", outputDir], { cwd: repo.dir })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^Decision: approved/)
    expect(run.stdout).toContain(`Report: ${join(outputDir, "review.md")}`)
    expect(run.stderr).not.toContain("Decision:")
  })

  test("a change that cannot be read leaves stdout empty; the error is on stderr", async () => {
    const repo = await noiseRepo()
    const outputDir = join(await scratchDir("ocr-json-out-"), "out")
    const args = ["review", "--json", "--repo", repo.dir, "--output-dir", outputDir, "--base", "no-such-ref"]
    const run = await cli(args, { cwd: repo.dir })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(/^error: .*no-such-ref/m)
  })
})

describe("review --json in a GitHub Actions pull_request run", () => {
  test("prints the record alone on stdout; the report and what was posted go to stderr", async () => {
    const { repo, fake, env } = await githubRun()
    const outputDir = join(await scratchDir("ocr-json-out-"), "out")
    const run = await cli(["review", "--json", "--repo", repo.dir, "--output-dir", outputDir], { cwd: repo.dir, env })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual(await reviewJson(outputDir))
    expect(run.stderr).toContain("Decision: approved")
    expect(run.stderr).toMatch(/^GitHub: /m)
    expect(
      fake.state.issueComments.filter((comment) => comment.body.includes("opencode-reviewer:summary")),
    ).toHaveLength(1)
  })

  test("a review done but not published: stdout stays empty, never a half report", async () => {
    const { repo, fake, env } = await githubRun()
    // Writing the summary comment fails: the review exists, publishing it does not.
    fake.failNext({ method: "POST", path: /\/issues\/\d+\/comments$/ }, { status: 500 }, 5)
    const outputDir = join(await scratchDir("ocr-json-out-"), "out")
    const run = await cli(["review", "--json", "--repo", repo.dir, "--output-dir", outputDir], { cwd: repo.dir, env })
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr).toContain("Decision: approved")
    expect(run.stderr).toContain("the review was done but could not be published")
    expect((await reviewJson(outputDir)).decision).toBe("approved")
    expect(JSON.parse(await readFile(join(outputDir, "review-error.json"), "utf8"))).toMatchObject({
      error: "ReviewPublishError",
    })
  })
})

describe("--json of the other commands", () => {
  test("plan --json prints the plan alone on stdout; warnings stay on stderr", async () => {
    const repo = await noiseRepo()
    const scratch = await scratchDir("ocr-json-plan-")
    const config = join(scratch, "config.json")
    await writeFile(config, JSON.stringify({ unknownKey: true }))
    const run = await cli(["plan", "--json", "--repo", repo.dir, "--config", config], { cwd: repo.dir })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ totals: { files: 0 }, files: [{ noise: "lockfile" }] })
    expect(run.stderr).toContain("unknownKey")
  })

  test("demo takes no --json (nor any flag but --output-dir and -v): a usage error, nothing on stdout", async () => {
    const scratch = await scratchDir("ocr-json-demo-")
    for (const flags of [["--json"], ["--base", "main"], ["--vcs", "github"]]) {
      const run = await cli(["demo", ...flags], { cwd: scratch })
      expect(run.code, flags.join(" ")).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toContain(`demo takes only --output-dir and -v, not ${flags[0]}`)
    }
  })

  test("eval --json prints eval.json alone on stdout, with every case the run could not review", async () => {
    // The demo corpus with each case's diff a git range nobody has: every case is skipped, and says
    // why, before any review runs.
    const scratch = await scratchDir("ocr-json-eval-")
    const corpus = join(scratch, "corpus")
    await cp(bundledCorpusDirectory("demo"), corpus, { recursive: true })
    for (const name of await readdir(join(corpus, "cases"))) {
      const file = join(corpus, "cases", name)
      const testCase = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>
      await writeFile(file, JSON.stringify({ ...testCase, diff: { kind: "git", base: "no-base", head: "no-head" } }))
    }
    const outputDir = join(scratch, "out")
    const run = await cli(["eval", "--json", "--corpus", corpus, "--replay", "--output-dir", outputDir], {
      cwd: scratch,
    })
    expect(run.code, run.stderr).toBe(1)
    const report = JSON.parse(run.stdout) as { corpus: string; cases: { skipped: string | null }[] }
    expect(report).toEqual(JSON.parse(await readFile(join(outputDir, "eval.json"), "utf8")))
    expect(report.cases).toHaveLength(3)
    for (const result of report.cases) expect(result.skipped).toMatch(/^git diff no-base no-head gave no diff/)
    expect(run.stderr).toContain("eval: eval.json and eval.md are in")
  })
})

// A pull request of lockfile changes on the GitHub fake, and the environment of its Actions run.
async function githubRun(): Promise<{ repo: TempRepo; fake: GithubFake; env: Record<string, string> }> {
  const repo = await noiseRepo()
  const fake = await startGithubFake({
    repos: [
      {
        owner: "acme",
        name: "widgets",
        dir: repo.dir,
        pulls: [{ number: 7, author: "alice", title: "Lock dependencies", baseRef: "main", headRef: "feature" }],
      },
    ],
  })
  cleanups.push(() => fake.close())
  const pull = fake.pull("acme/widgets", 7)
  const head = fake.head("acme/widgets", 7)
  const repository = { id: 100001, full_name: "acme/widgets" }
  const payload = {
    action: "synchronize",
    pull_request: {
      number: pull.number,
      draft: pull.draft,
      user: { login: pull.author.login, type: pull.author.type },
      author_association: "CONTRIBUTOR",
      head: { sha: head.headSha, ref: pull.headRef, repo: repository },
      base: { sha: head.baseSha, ref: pull.baseRef, repo: repository },
    },
    repository,
  }
  const eventPath = join(await scratchDir("ocr-json-event-"), "event.json")
  await writeFile(eventPath, JSON.stringify(payload))
  const env = {
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: "pull_request",
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_SERVER_URL: fake.url,
    GITHUB_API_URL: fake.url,
    GITHUB_GRAPHQL_URL: `${fake.url}/graphql`,
    GITHUB_RUN_ID: "4242",
    GITHUB_TOKEN: fake.tokens["github-actions[bot]"]!,
  }
  return { repo, fake, env }
}
