import { cp, mkdtemp, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { renderReviewXml, submitReviewTool, tools } from "@opencode-reviewer/core"
import {
  createTempRepo,
  findingsReply,
  type ModelServer,
  type RecordedRequest,
  type Reply,
  startModelServer,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import type { Flags } from "./args"
import { findAssets } from "./assets"
import { finishReview } from "./finish"
import type { Io } from "./io"
import { prepare } from "./prepare"
import { runReview } from "./run"

const demoDir = findAssets().demoDir

// What the replay model says: the specialists of a lite review of the demo change, and a coordinator
// that runs them, keeps the two real problems and submits. Findings point at the seeded bug.
const reviewerReplies: Record<string, Reply> = {
  security: findingsReply(
    [
      {
        severity: "critical",
        file: "src/users.ts",
        line: 17,
        category: "security",
        title: "SQL injection through the admin search text",
        body: "`search` comes straight from the `q` query parameter and is spliced into the SQL string. A value such as `x' OR '1'='1` returns every user, and stacked statements may do worse. Pass it as a parameter: `WHERE name LIKE $1` with `[`${search}%`]`.",
      },
    ],
    { preamble: "Read the patch for src/users.ts and the route that calls it." },
  ),
  "code-quality": findingsReply([
    {
      severity: "warning",
      file: "src/users.ts",
      line: 18,
      category: "performance",
      title: "The limit is applied after loading every matching row",
      body: "The query has no LIMIT, so a short search text loads the whole users table into memory before `slice(0, limit)`. Put `LIMIT $2` in the query instead.",
    },
  ]),
  documentation: findingsReply([]),
  compliance: findingsReply([]),
}

const submittedReview = renderReviewXml({
  summary:
    "Adds an admin user search. The search text is concatenated into SQL, which is injectable by anyone who can reach the endpoint; the result limit is also applied in memory after loading all matches.",
  findings: [
    {
      severity: "critical",
      file: "src/users.ts",
      line: 17,
      category: "security",
      title: "SQL injection through the admin search text",
      body: "`search` comes from the `q` query parameter and is spliced into the SQL string (`x' OR '1'='1` returns every user). Bind it as a parameter: `WHERE name LIKE $1` with `[`${search}%`]`.",
    },
    {
      severity: "warning",
      file: "src/users.ts",
      line: 18,
      category: "performance",
      title: "The limit is applied after loading every matching row",
      body: "Without LIMIT in the query a short search text loads the whole users table before `slice(0, limit)`. Put `LIMIT $2` in the SQL.",
    },
  ],
  answer: null,
})

/**
 * Runs the whole review pipeline offline on the bundled sample change: a temp repository, the
 * replay model on a local port, the real opencode binary, the runtime plugin and the comment server.
 */
export async function demo(values: Flags, io: Io): Promise<number> {
  const server = await startModelServer({ latencyMs: 250 })
  const repo = await createTempRepo("opencode-reviewer-demo-")
  try {
    scriptReplayModel(server)
    await cp(join(demoDir, "base"), repo.dir, { recursive: true })
    repo.commit("Users service")
    repo.git("checkout", "-q", "-b", "admin-user-search")
    await cp(join(demoDir, "head"), repo.dir, { recursive: true })
    repo.commit("Add admin user search")
    const scratch = await mkdtemp(join(tmpdir(), "opencode-reviewer-demo-config-"))
    const configFile = join(scratch, "opencode-reviewer.json")
    await writeFile(configFile, JSON.stringify(demoConfig(server.url), null, 2))
    const outputDir =
      values["output-dir"] === undefined ? join(scratch, "output") : resolve(io.cwd, values["output-dir"])
    io.stderr(`demo: sample change in ${repo.dir}; replay model at ${server.url}\n`)
    const prepared = await prepare(
      {
        ...values,
        repo: repo.dir,
        config: configFile,
        "output-dir": outputDir,
        "description-file": join(demoDir, "description.md"),
      },
      { ...io, cwd: repo.dir },
      "demo",
    )
    const record = await finishReview(prepared, await runReview(prepared, io), io)
    io.stderr(`demo: review.json and review.md are in ${outputDir}\n`)
    io.stderr(
      `demo: decision ${record.decision}; in CI this ${record.decision === "significant_concerns" ? "fails the job (exit 2) and blocks the merge" : "lets the job pass"}\n`,
    )
    return 0
  } finally {
    await server.close()
    await repo.remove()
  }
}

function scriptReplayModel(server: ModelServer): void {
  const from = (agent: string) => (request: RecordedRequest) => request.model === `demo-${agent}`
  for (const [name, reply] of Object.entries(reviewerReplies)) server.rule(from(name), reply)
  // The verifier (the same replay model: the demo's top tier has one) confirms the SQL injection,
  // quoting the line it read; the warning is not verified (verify: "critical").
  server.rule(
    (request) => request.model === "demo-coordinator" && request.system.includes("You verify code review findings"),
    text(
      JSON.stringify({
        verdicts: [
          {
            finding: 1,
            confirmed: true,
            reason: "the search text is interpolated into the SQL string",
            evidence: [
              {
                file: "src/users.ts",
                start_line: 17,
                end_line: 17,
                quote: "WHERE name LIKE '${search}%' ORDER BY name",
              },
            ],
          },
        ],
      }),
    ),
  )
  server.rule(from("coordinator"), (request) => {
    if (request.toolResults.length === 0)
      return toolCall(tools.spawnReviewers, {}, { text: "Running the specialists planned for this change." })
    if (request.toolResults.length === 1) return toolCall(submitReviewTool, { review: submittedReview })
    return text("Review submitted.")
  })
}

function demoConfig(baseURL: string) {
  const names = ["coordinator", ...Object.keys(reviewerReplies)]
  const cost = { input: 3, output: 15, cache_read: 0.3 }
  return {
    provider: {
      demo: {
        npm: "@ai-sdk/openai-compatible",
        name: "opencode-reviewer demo replay model",
        options: { baseURL, apiKey: "demo" },
        models: Object.fromEntries(
          names.map((name) => [`demo-${name}`, { limit: { context: 200_000, output: 8_000 }, cost }]),
        ),
      },
    },
    models: { top: ["demo/demo-coordinator"], standard: ["demo/demo-coordinator"], light: ["demo/demo-coordinator"] },
    reviewers: Object.fromEntries(Object.keys(reviewerReplies).map((name) => [name, { model: `demo/demo-${name}` }])),
    limits: { heartbeatSeconds: 10 },
  }
}
