import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundledCorpusDirectory } from "@opencode-reviewer/eval"
import {
  createTempRepo,
  findingsReply,
  gitEnv,
  type RecordedRequest,
  type Reply,
  startModelServer,
  statusReply,
  text,
} from "@opencode-reviewer/testkit"
import { main } from "opencode-reviewer"
import { afterEach, describe, expect, test } from "vitest"
import type { EvalReport } from "../../packages/cli/src/eval"
import { cleanUp, cleanups, descendantsOf, judge, specialists } from "./harness"

// `opencode-reviewer eval` end to end: every case goes through the real pipeline (plan, the real
// opencode binary, the runtime plugin, the comment server) against a replay model, and is scored by
// the benchmark's matching with a replay judge. The numbers come from the findings the pipeline
// produced; the corpora here are built so the right answer is known. Every case is a whole review
// (about 6 s of CPU), so each test reviews as few cases as its point needs: 12 reviews in the file
// (one more the kill interrupts). Pure scoring rules are proved in packages/eval's unit tests.

afterEach(cleanUp)

const cliBin = fileURLToPath(new URL("../../packages/cli/bin/opencode-reviewer.ts", import.meta.url))

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function scratch(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  return dir
}

async function evaluate(args: string[], cwd: string) {
  let stdout = ""
  let stderr = ""
  const code = await main({
    argv: ["eval", ...args],
    env: { ...gitEnv(cwd) },
    cwd,
    stdout: (chunk) => void (stdout += chunk),
    stderr: (chunk) => void (stderr += chunk),
    stdin: async () => new Uint8Array(),
    execPath: process.execPath,
  })
  const report = await readFile(join(cwd, "out", "eval.json"), "utf8").then(
    (text) => JSON.parse(text) as EvalReport,
    () => null,
  )
  return { code, stdout, stderr, report, outputDir: join(cwd, "out") }
}

/**
 * The demo corpus copied, with other findings for the replay model (the verdicts stay), more cases,
 * and without the cases named in `without`.
 */
async function corpusWith(
  findings: Record<string, object[]>,
  extraCases: object[] = [],
  without: string[] = [],
): Promise<string> {
  const dir = join(await scratch("ocr-eval-corpus-"), "corpus")
  await cp(bundledCorpusDirectory("demo"), dir, { recursive: true })
  const replay = JSON.parse(await readFile(join(dir, "replay.json"), "utf8")) as { findings: object }
  await writeFile(join(dir, "replay.json"), JSON.stringify({ ...replay, findings }))
  for (const extra of extraCases) {
    const { id } = extra as { id: string }
    await writeFile(join(dir, "cases", `${id}.json`), JSON.stringify(extra))
  }
  for (const id of without) await rm(join(dir, "cases", `${id}.json`))
  return dir
}

const finding = (title: string, file: string, line: number, severity = "critical") => ({
  severity,
  file,
  line,
  category: "security",
  title,
  body: `${title}, in a few words.`,
})

/** A pull request case whose diff cannot be fetched (nothing listens on port 9). */
const unreachable = {
  id: "unreachable-pr",
  repository: "acme/api",
  title: "A change we cannot fetch",
  diff: { kind: "pull-request", url: "https://127.0.0.1:9/acme/api/pull/12" },
  golden: [{ text: "Something is wrong.", severity: "warning" }],
}

/** Whether a request belongs to the review of case `id` (each case is reviewed in `cases/<id>.run<N>`). */
const aboutCase = (request: RecordedRequest, id: string) => JSON.stringify(request.body).includes(`/cases/${id}`)

interface ScriptedEvalOptions {
  /** What the generalist reviewer answers, by case id or a prefix of it ("fix-" for --from-git's cases). */
  findings: Record<string, object[]>
  /** The verifier model (fake/verifier); without it, `verify` is off. */
  verifier?: (request: RecordedRequest) => Reply
  /** Instead of the demo corpus copied. */
  corpusArgs?: string[]
  /** Cases whose coordinator model answers HTTP 401: their reviews fail. */
  refused?: string[]
}

/**
 * An eval against a scripted model server: the generalist reviewer answers `findings` per case, the
 * coordinator keeps every finding, the judge model matches only the SQL pair and the logged-token
 * pair, and a verifier (fake/verifier) answers as `verifier` says, when given.
 */
async function scriptedEval(options: ScriptedEvalOptions) {
  const { findings: findingsFor, verifier, corpusArgs, refused = [] } = options
  const server = await startModelServer()
  cleanups.push(() => server.close())
  server.rule(
    (request) => request.model === "code-quality",
    (request) => {
      const id = Object.keys(findingsFor).find((key) => aboutCase(request, key))
      return findingsReply((id ? findingsFor[id] : []) as never)
    },
  )
  // A refused key is not retried: the review fails at the coordinator's first call.
  server.rule(
    (request) => request.model === "coordinator" && refused.some((id) => aboutCase(request, id)),
    statusReply(401, { message: "Invalid API key (coordinator)", headers: { "retry-after-ms": "0" } }),
  )
  server.rule((request) => request.model === "coordinator", judge)
  // The judge model: a match only for the SQL pair and the token pair, said in prose around the JSON it is asked for.
  server.rule(
    (request) => request.model === "judge",
    (request) => {
      const asked = request.lastUser
      const match =
        (asked.includes("SQL injection through") && asked.includes("interpolated")) ||
        (asked.includes("The session token is logged") && asked.includes("The session token is written"))
      return text(`Looking at both.\n{"reasoning": "same problem or not", "match": ${match}, "confidence": 0.9}`)
    },
  )
  if (verifier) server.rule((request) => request.model === "verifier", verifier)
  server.rule(
    () => true,
    () => findingsReply([]),
  )
  const models = [
    "coordinator",
    "code-quality",
    "judge",
    "verifier",
    ...specialists.filter((name) => name !== "code-quality"),
  ]
  const cwd = await scratch("ocr-eval-judge-")
  await writeFile(
    join(cwd, "review.json"),
    JSON.stringify({
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: server.url, apiKey: "test-key" },
          models: Object.fromEntries(
            models.map((model) => [
              model,
              { limit: { context: 200_000, output: 8_000 }, cost: { input: 3, output: 15 } },
            ]),
          ),
        },
      },
      models: {
        top: verifier ? ["fake/coordinator", "fake/verifier"] : ["fake/coordinator"],
        standard: ["fake/coordinator"],
        light: ["fake/coordinator"],
      },
      reviewers: Object.fromEntries(specialists.map((name) => [name, { model: `fake/${name}` }])),
      verify: verifier ? "critical" : "off",
    }),
  )
  const run = await evaluate(
    [
      ...(corpusArgs ?? ["--corpus", await corpusWith({})]),
      "--config",
      "review.json",
      "--judge-model",
      "fake/judge",
      "--output-dir",
      "out",
    ],
    cwd,
  )
  return { run, server }
}

describe("opencode-reviewer eval", () => {
  // Reviews: the 3 demo cases once (1 or 2 in the killed process, the rest on resuming), the third
  // run none. Before, a separate --demo test reviewed 3 more.
  test("--demo: a killed run resumes with only the unfinished cases, prints precision, recall and F1 of the pipeline's findings, and a third run reuses every case", async () => {
    const cwd = await scratch("ocr-eval-resume-")
    const child = Bun.spawn([process.execPath, cliBin, "eval", "--demo", "--output-dir", "out"], {
      cwd,
      env: { ...gitEnv(cwd), PWD: cwd },
      stdout: "ignore",
      stderr: "pipe",
    })
    const casesDir = join(cwd, "out", "cases")
    const finished = async () =>
      (await readdir(casesDir).catch(() => [] as string[])).filter((name) => /\.run1\.json$/.test(name))
    const deadline = Date.now() + 60_000
    while ((await finished()).length === 0 && Date.now() < deadline) await Bun.sleep(100)
    // Killed as a CI runner cancels a job: the whole process tree. (The CLI does not yet stop its
    // opencode child on a signal; an orphan would keep writing the killed case's OpenCode home.)
    const tree = descendantsOf(child.pid).map((entry) => entry.pid)
    child.kill("SIGKILL")
    for (const pid of tree) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // already gone
      }
    }
    await child.exited
    const deadlineGone = Date.now() + 10_000
    while (tree.some((pid) => alive(pid)) && Date.now() < deadlineGone) await Bun.sleep(50)
    const done = await finished()
    expect(done.length).toBeGreaterThanOrEqual(1)
    expect(done.length).toBeLessThan(3)
    const stamps = await Promise.all(done.map(async (name) => (await stat(join(casesDir, name))).mtimeMs))

    const resumed = await evaluate(["--demo", "--output-dir", "out"], cwd)
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr.match(/as stored by an earlier run/g)).toHaveLength(done.length)
    expect(await Promise.all(done.map(async (name) => (await stat(join(casesDir, name))).mtimeMs))).toEqual(stamps)
    expect(resumed.report!.cases).toHaveLength(3)
    // The replay reviewer finds the SQL injection and the logged token, misses the LIMIT and the
    // page range, and adds one naming remark: 2 found, 1 spurious, 2 missed.
    expect(resumed.stdout).toContain("| **overall** | 66.7 | 50.0 | 57.1 | 2 | 1 | 2 |")
    expect(resumed.stdout).toContain("Failed reviews: 0 of 3.")
    const byId = Object.fromEntries(resumed.report!.cases.map((result) => [result.id, result.score!]))
    expect(byId["users-sql"]!.matched.map((match) => match.golden.severity)).toEqual(["critical"])
    expect(byId["users-sql"]!.spurious.map((candidate) => candidate.text)).toEqual([
      expect.stringContaining("Name the function findUsers"),
    ])
    expect(byId["page-range"]!.missed).toHaveLength(1)
    expect(resumed.report!.costUsd).toBeGreaterThan(0)
    expect(await readFile(join(cwd, "out", "eval.md"), "utf8")).toContain(
      "- missed: Each page returns one item too many",
    )

    const again = await evaluate(["--demo", "--output-dir", "out"], cwd)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr.match(/as stored by an earlier run/g)).toHaveLength(3)
    expect(again.report!.score.overall).toEqual(resumed.report!.score.overall)
  })

  // Reviews: 3, one per reviewer (before: three evals of the three cases, 9).
  test("a perfect reviewer scores 1.0, a silent one 0 recall, a noisy one the precision its noise gives", async () => {
    const sql = finding("SQL injection through the search text", "src/users.ts", 8)
    const limit = finding("LIMIT after loading every row", "src/users.ts", 9, "warning")
    const page = finding("One item too many per page", "src/page.ts", 4, "warning")
    const noise = (n: number) => finding(`Unrelated remark ${n}`, "src/page.ts", 3, "suggestion")
    const dir = await corpusWith({
      // Perfect on users-sql, silent on token-log, noisy on page-range: one right finding of four.
      "users-sql": [sql, limit],
      "page-range": [page, noise(1), noise(2), noise(3)],
    })
    const golden = (await readdir(join(dir, "cases"))).map(
      async (name) =>
        (JSON.parse(await readFile(join(dir, "cases", name), "utf8")) as { golden: { text: string }[] }).golden,
    )
    const texts = (await Promise.all(golden)).flat().map((entry) => entry.text)
    const verdicts = [
      ["The search text is interpolated", sql.title],
      ["The limit is applied after", limit.title],
      ["Each page returns one item", page.title],
    ]
    const replay = JSON.parse(await readFile(join(dir, "replay.json"), "utf8")) as object
    await writeFile(
      join(dir, "replay.json"),
      JSON.stringify({
        ...replay,
        verdicts: verdicts.map(([start, title]) => ({
          golden: texts.find((text) => text.startsWith(start!))!,
          title,
          match: true,
        })),
      }),
    )
    const cwd = await scratch("ocr-eval-known-")
    const run = await evaluate(["--corpus", dir, "--replay", "--concurrency", "2", "--output-dir", "out"], cwd)
    expect(run.code, run.stderr).toBe(0)
    const metricsOf = (id: string) => run.report!.cases.find((result) => result.id === id)!.score!.metrics
    expect(metricsOf("users-sql")).toEqual({ tp: 2, fp: 0, fn: 0, precision: 1, recall: 1, f1: 1 })
    expect(metricsOf("token-log")).toEqual({ tp: 0, fp: 0, fn: 1, precision: null, recall: 0, f1: 0 })
    expect(metricsOf("page-range")).toMatchObject({ tp: 1, fp: 3, fn: 0, precision: 0.25, recall: 1 })
    // Summed over the cases, then divided.
    expect(run.report!.score.overall).toMatchObject({ tp: 3, fp: 3, fn: 1, precision: 0.5, recall: 0.75 })
  })

  // Reviews: 3, one of them failing at its first model call; the unreachable case is not reviewed
  // (before: 3 here and 3 in a test of its own for the unreachable case).
  test("with a judge model: each golden comment against each finding is one prompt; a failed review counts as finding nothing, an unfetchable diff is not scored", async () => {
    const { run, server } = await scriptedEval({
      findings: {
        "users-sql": [finding("SQL injection through the search text", "src/users.ts", 8)],
        "token-log": [finding("Unrelated remark", "src/session.ts", 1, "suggestion")],
      },
      corpusArgs: ["--corpus", await corpusWith({}, [unreachable])],
      refused: ["page-range"],
    })
    expect(run.code, run.stderr).toBe(0)
    const judged = server.requests.filter((request) => request.model === "judge")
    // users-sql: 2 golden × 1 finding; token-log: 1 × 1; page-range: its review failed, nothing to judge.
    expect(judged).toHaveLength(3)
    expect(judged.every((request) => request.tools.length === 0)).toBe(true)
    expect(run.report!.judgeModel).toBe("fake/judge")
    expect(run.report!.judgeCostUsd).toBeGreaterThan(0)
    expect(run.report!.unverifiedScore).toBeNull()

    // The failed review's golden comment is a miss in every total: left out, fn would be 2.
    const failed = run.report!.cases.find((result) => result.id === "page-range")!
    expect(failed.failed).toMatch(/401/)
    expect(failed.score!.missed.map((comment) => comment.text)).toEqual([
      expect.stringContaining("Each page returns one item too many"),
    ])
    expect(run.report!.score.overall).toMatchObject({ tp: 1, fp: 1, fn: 3 })
    expect(run.report!.score.bySeverity.warning).toMatchObject({ fn: 2 })
    expect(run.report!.score.byRepository["demo/users"]).toMatchObject({ tp: 1, fn: 2 })
    expect(run.report!.score.failed).toEqual(["page-range"])
    expect(run.stdout).toContain(
      "**Failed reviews: 1 of 3**, counted as finding nothing (1 golden comment missed); listed below.",
    )
    expect(run.stdout).toMatch(/Failed reviews \(1\), each counted as finding nothing:\n\n- `page-range`: .*401/)
    // Never stored: the next run reviews it again.
    expect(await readdir(join(run.outputDir, "cases"))).not.toContain("page-range.run1.json")

    // A diff that cannot be had says nothing about the reviewer: listed, counted nowhere.
    const skipped = run.report!.cases.find((result) => result.id === "unreachable-pr")!
    expect(skipped.score).toBeNull()
    expect(skipped.failed).toBeNull()
    expect(skipped.skipped).toContain("its diff could not be fetched from https://127.0.0.1:9/acme/api/pull/12.diff")
    expect(run.report!.score.scored).toBe(3)
    expect(run.report!.score.byRepository["acme/api"]).toBeUndefined()
    expect(run.stdout).toContain("Not scored (1):")
  })

  // Reviews: 2 (before: 3, the third case had nothing for the verifier).
  test("verified blockers, measured: a spurious critical the verifier rejects raises critical precision, a real one it rejects lowers critical recall", async () => {
    const { run } = await scriptedEval({
      findings: {
        "users-sql": [finding("SQL injection through the search text", "src/users.ts", 8)],
        "token-log": [
          finding("The session token is logged", "src/session.ts", 2),
          finding("Remote code execution in the logger", "src/session.ts", 2),
        ],
      },
      corpusArgs: ["--corpus", await corpusWith({}, [], ["page-range"])],
      // The verifier confirms the SQL injection, quoting the patched line, and rejects the others.
      verifier: (request) => {
        const numbers = [...request.lastUser.matchAll(/<finding number="(\d+)"[^>]*>\n<title>([^<]*)<\/title>/g)]
        return text(
          JSON.stringify({
            verdicts: numbers.map(([, number, title]) =>
              title!.startsWith("SQL")
                ? {
                    finding: Number(number),
                    confirmed: true,
                    reason: "interpolated",
                    evidence: [
                      { file: "src/users.ts", start_line: 8, end_line: 8, quote: "WHERE name LIKE '${search}%'" },
                    ],
                  }
                : { finding: Number(number), confirmed: false, reason: "the log line runs nothing" },
            ),
          }),
        )
      },
    })
    expect(run.code, run.stderr).toBe(0)
    // Criticals without the verifier: both golden comments found, the RCE claim spurious. With it:
    // the SQL injection still a critical, the logged token lowered (a blocker no longer flagged as
    // one: a miss), the RCE claim lowered (no longer a spurious critical).
    expect(run.report!.unverifiedScore!.bySeverity.critical).toMatchObject({ tp: 2, fp: 1, fn: 0, recall: 1 })
    expect(run.report!.score.bySeverity.critical).toMatchObject({ tp: 1, fp: 0, fn: 1, precision: 1, recall: 0.5 })
    expect(run.report!.score.overall).toEqual(run.report!.unverifiedScore!.overall)
    expect(run.stdout).toContain(
      "critical precision 100.0 and recall 50.0 with the verifier, 66.7 and 100.0 without it (it lowered 1 spurious critical and 1 real one)",
    )
  })

  // Reviews: 1.
  test("--from-git: a fix commit becomes a case reviewing the commit that wrote the bug, scored against the fix", async () => {
    const repo = await createTempRepo()
    cleanups.push(() => repo.remove())
    await repo.write({ "src/users.ts": "export const users = []\n" })
    repo.commit("Start")
    await repo.write({
      "src/users.ts":
        "export const users = []\nexport const find = (db, name) => db.query(`SELECT * FROM users WHERE name LIKE '${name}%'`)\n",
    })
    const introduced = repo.commit("Add user search")
    await repo.write({
      "src/users.ts":
        "export const users = []\nexport const find = (db, name) => db.query('SELECT * FROM users WHERE name LIKE $1', [`${name}%`])\n",
    })
    repo.commit("Fix SQL injection in user search: the name was interpolated into the SQL string")
    const { run } = await scriptedEval({
      findings: { "fix-": [finding("SQL injection through the search text", "src/users.ts", 2)] },
      corpusArgs: ["--from-git", "HEAD~2..HEAD", "--repo", repo.dir],
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.report!.cases).toHaveLength(1)
    const [only] = run.report!.cases
    expect(only!.score!.matched.map((match) => match.golden.text)).toEqual([
      "Fix SQL injection in user search: the name was interpolated into the SQL string",
    ])
    expect(run.report!.score.overall).toMatchObject({ tp: 1, fp: 0, fn: 0 })
    // The reviewed change was the commit that wrote the bug, not the fix.
    const reviewed = await readFile(
      join(run.outputDir, "cases", `${only!.id}.run1`, "work", "diff", "src__users.ts.patch"),
      "utf8",
    )
    expect(reviewed).toContain("+export const find = (db, name) => db.query(`SELECT")
    expect(only!.id).toMatch(/^fix-[0-9a-f]{12}$/)
    expect(introduced).toMatch(/^[0-9a-f]{40}$/)
  })
})
