import { readdirSync, readFileSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Finding, parseFindings, type ReviewRecord, renderReviewXml } from "@opencode-reviewer/core"
import {
  createTempRepo,
  findingsReply,
  type GithubFake,
  type GithubFakeOptions,
  type GitlabFake,
  type GitlabFakeOptions,
  gitEnv,
  type ModelServer,
  type ModelServerOptions,
  type RecordedRequest,
  type Reply,
  startGithubFake,
  startGitlabFake,
  startModelServer,
  type TempRepo,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import { main } from "opencode-reviewer"

// Shared by the end-to-end review suites: a temp repo with a change, the scripted model playing a
// coordinator that keeps every reviewer finding, and the CLI run in-process against the real opencode.

/** Every specialist reviewer, in the order core plans them. */
export const specialists = [
  "security",
  "code-quality",
  "performance",
  "compliance",
  "documentation",
  "release",
  "agents-md",
] as const
export type Specialist = (typeof specialists)[number]

export interface Run {
  code: number
  stdout: string
  stderr: string
  record: ReviewRecord | null
}

/** Runs after each test: servers closed, temp dirs removed. */
export const cleanups: (() => Promise<void>)[] = []

export async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup()
}

/** A coordinator that runs the reviewers, keeps every finding they report, and submits. */
export function judge(request: RecordedRequest): Reply {
  if (request.toolResults.length === 0) return toolCall("spawn_reviewers", {})
  if (request.toolResults.length === 1) {
    const output = request.toolResults[0]!.content
    const findings: Finding[] = [...output.matchAll(/<findings>[\s\S]*?<\/findings>/g)].flatMap((match) => {
      const parsed = parseFindings(match[0])
      return parsed.ok ? parsed.findings : []
    })
    const failed = [...output.matchAll(/name="([^"]+)" status="failed"/g)].map((match) => match[1])
    const summary = `Judged ${findings.length} findings.${failed.length ? ` Failed reviewers: ${failed.join(", ")}.` : ""}`
    return toolCall("review_submit_review", { review: renderReviewXml({ summary, findings, answer: null }) })
  }
  return text("Submitted.")
}

/**
 * A coordinator like `judge` that, when the prompt marks a comment `asked="true"` (a question that
 * started the run), answers it in `<answer>`, quoting it: the answer proves the question arrived.
 */
export function answeringJudge(request: RecordedRequest): Reply {
  const reply = judge(request)
  const asked = /asked=\\"true\\">\\n([^<]*)/.exec(JSON.stringify(request.body))?.[1]
  if (!asked || reply.type !== "tool" || reply.name !== "review_submit_review") return reply
  const answer = `You asked: ${asked.replace(/\\n/g, " ").trim().slice(0, 80)}. It is not: the name is concatenated.`
  return toolCall("review_submit_review", {
    review: (reply.args as { review: string }).review.replace("</review>", `  <answer>${answer}</answer>\n</review>`),
  })
}

export const sqlFinding = {
  severity: "critical" as const,
  file: "src/auth/login.ts",
  line: 2,
  category: "security",
  title: "SQL built from the request",
  body: "The user name is concatenated into the query.",
}

export const loginSource =
  "export function login(db, name) {\n  return db.query(`SELECT * FROM users WHERE name = '${name}'`)\n}\n"

export interface ScenarioOptions {
  /** Extra files of the base commit on `main` (the trusted side), besides README.md and src/app.ts. */
  baseFiles?: Record<string, string>
  files?: Record<string, string>
  replies?: Record<string, Reply | ((request: RecordedRequest) => Reply)>
  coordinator?: string[]
  config?: Record<string, unknown>
  contextLimit?: number
  /** Options of the scripted model server (its simulated prompt cache, say). */
  server?: ModelServerOptions
}

export interface Scenario {
  server: ModelServer
  repo: TempRepo
  outputDir: string
  /** The opencode-reviewer config pointing at the scripted model. */
  configFile: string
  /** Replaces the scripted reply of one model (e.g. "fake/security") for the following requests. */
  setReply(model: string, reply: Reply | ((request: RecordedRequest) => Reply)): void
  /** Runs `opencode-reviewer review` once more (same repo, config and model); `outputDir` for a run beside another. */
  run(options?: { args?: string[]; env?: Record<string, string>; outputDir?: string }): Promise<Run>
}

/** A repo on `feature` with a change against `main`, a scripted model, and a config pointing at it. */
export async function createScenario(options: ScenarioOptions = {}): Promise<Scenario> {
  const server = await startModelServer(options.server)
  const repo = await createTempRepo()
  cleanups.push(
    () => server.close(),
    () => repo.remove(),
  )
  await repo.write({ "README.md": "# app\n", "src/app.ts": "export const a = 1\n", ...options.baseFiles })
  repo.commit("init")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write(options.files ?? { "src/auth/login.ts": loginSource })
  repo.commit("Add login")

  const coordinator = options.coordinator ?? ["fake/coordinator"]
  const replies: Record<string, Reply | ((request: RecordedRequest) => Reply)> = {
    "fake/coordinator": judge,
    ...Object.fromEntries(
      specialists.map((name) => [
        `fake/${name}`,
        findingsReply(name === "security" ? [sqlFinding] : [], { usage: { input: 1000, output: 50, cacheRead: 200 } }),
      ]),
    ),
    ...options.replies,
  }
  // One rule per model that looks its reply up when the request arrives, so a test can change it.
  for (const model of Object.keys(replies)) {
    server.rule(
      (request) => `fake/${request.model}` === model,
      (request) => {
        const reply = replies[model]!
        return typeof reply === "function" ? reply(request) : reply
      },
    )
  }
  const models = [...new Set([...coordinator, ...Object.keys(replies)])].map((model) => model.slice("fake/".length))
  const config = {
    provider: {
      fake: {
        npm: "@ai-sdk/openai-compatible",
        options: { baseURL: server.url, apiKey: "test-key" },
        models: Object.fromEntries(
          models.map((model) => [
            model,
            {
              limit: { context: options.contextLimit ?? 200_000, output: 8_000 },
              cost: { input: 3, output: 15, cache_read: 0.3 },
            },
          ]),
        ),
      },
    },
    models: { top: coordinator, standard: coordinator, light: coordinator },
    reviewers: Object.fromEntries(specialists.map((name) => [name, { model: `fake/${name}` }])),
    limits: { heartbeatSeconds: 30 },
    // The scripted models play no verifier; the tests of verified blockers turn it on.
    verify: "off",
    ...options.config,
  }
  const scratch = await mkdtemp(join(tmpdir(), "ocr-review-e2e-"))
  cleanups.push(() => rm(scratch, { recursive: true, force: true }))
  const configFile = join(scratch, "config.json")
  await writeFile(configFile, JSON.stringify(config))
  const outputDir = join(scratch, "out")

  return {
    server,
    repo,
    outputDir,
    configFile,
    setReply(model, reply) {
      replies[model] = reply
    },
    async run(runOptions = {}) {
      const output = runOptions.outputDir ?? outputDir
      await rm(join(output, "review.json"), { force: true })
      let stdout = ""
      let stderr = ""
      const code = await main({
        argv: [
          "review",
          "--repo",
          repo.dir,
          "--config",
          configFile,
          "--output-dir",
          output,
          ...(runOptions.args ?? []),
        ],
        env: { ...gitEnv(repo.dir), ...runOptions.env },
        cwd: repo.dir,
        stdout: (chunk) => void (stdout += chunk),
        stderr: (chunk) => void (stderr += chunk),
        stdin: async () => new Uint8Array(),
        execPath: process.execPath,
      })
      const record = await readFile(join(output, "review.json"), "utf8").then(
        (json) => JSON.parse(json) as ReviewRecord,
        () => null,
      )
      return { code, stdout, stderr, record }
    },
  }
}

/** A scenario whose change is merge request !7 of a GitLab fake, with the CI variables of its pipeline. */
export async function gitlabScenario(
  options: { description?: string; scenario?: ScenarioOptions; fake?: Partial<GitlabFakeOptions> } = {},
): Promise<{ scenario: Scenario; fake: GitlabFake; env: Record<string, string> }> {
  const scenario = await createScenario(options.scenario)
  const fake = await startGitlabFake({
    repoDir: scenario.repo.dir,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Add login",
    ...(options.description ? { description: options.description } : {}),
    ...options.fake,
  })
  cleanups.push(() => fake.close())
  return { scenario, fake, env: { ...mergeRequestPipeline(fake), GITLAB_TOKEN: fake.tokens.bot } }
}

/** The predefined variables of a merge request pipeline for the fake's merge request (no bot token). */
export function mergeRequestPipeline(fake: GitlabFake): Record<string, string> {
  return {
    CI: "true",
    CI_PIPELINE_SOURCE: "merge_request_event",
    CI_SERVER_URL: fake.url,
    CI_API_V4_URL: fake.apiUrl,
    CI_MERGE_REQUEST_PROJECT_ID: String(fake.projectId),
    CI_MERGE_REQUEST_IID: String(fake.iid),
    CI_JOB_TOKEN: fake.tokens.job,
  }
}

/** Every note the bot (not the MR author, not GitLab) stored on the fake. */
export function botNotes(fake: GitlabFake) {
  return fake.state.notes.filter((note) => !note.system && note.author.username !== "alice")
}

/** The bot's summary notes (there must only ever be one). */
export function summaryNotes(fake: GitlabFake) {
  return botNotes(fake).filter((note) => note.body.includes("opencode-reviewer:summary"))
}

/** Inline threads (not plain comments) on the fake. */
export function threads(fake: GitlabFake) {
  return fake.state.discussions.filter((discussion) => !discussion.individualNote)
}

/** The repository and pull request of the GitHub scenarios. */
export const githubRepo = "acme/widgets"
export const githubPull = 7

/**
 * A scenario whose change is pull request #7 of acme/widgets on the GitHub fake (its diff and files
 * read from the scenario's git repository), and the environment of a GitHub Actions run for it.
 */
export async function githubScenario(
  options: {
    scenario?: ScenarioOptions
    fake?: Partial<GithubFakeOptions>
    author?: string
    /** The repository lets GitHub Actions approve pull requests (GitHub's default: it may not). */
    actionsCanApprove?: boolean
  } = {},
): Promise<{ scenario: Scenario; fake: GithubFake; env: Record<string, string> }> {
  const scenario = await createScenario(options.scenario)
  const fake = await startGithubFake({
    ...options.fake,
    repos: [
      {
        owner: "acme",
        name: "widgets",
        dir: scenario.repo.dir,
        actionsCanApprove: options.actionsCanApprove ?? false,
        pulls: [
          {
            number: githubPull,
            author: options.author ?? "alice",
            title: "Add login",
            baseRef: "main",
            headRef: "feature",
          },
        ],
      },
    ],
  })
  cleanups.push(() => fake.close())
  return { scenario, fake, env: await githubActionsEnv(fake, "pull_request") }
}

/**
 * The variables GitHub Actions sets for a `pull_request` run (or a comment event, with `comment`)
 * of the fake's pull request, with GITHUB_TOKEN and the event payload written to a file.
 */
export async function githubActionsEnv(
  fake: GithubFake,
  eventName: "pull_request" | "issue_comment" | "pull_request_review_comment",
  comment?: {
    id: number
    body: string
    login: string
    type?: "User" | "Bot"
    association?: string
    /** For a review comment: the comment it answers. */
    inReplyToId?: number
  },
  /** The pull request's head lives in this fork (owner/name) as the payload tells it. */
  fork?: string,
): Promise<Record<string, string>> {
  const pull = fake.pull(githubRepo, githubPull)
  const head = fake.head(githubRepo, githubPull)
  const repository = { id: 100001, full_name: githubRepo }
  const pullRequest = {
    number: pull.number,
    draft: pull.draft,
    user: { login: pull.author.login, type: pull.author.type },
    author_association: "CONTRIBUTOR",
    head: { sha: head.headSha, ref: pull.headRef, repo: fork ? { id: 200001, full_name: fork } : repository },
    base: { sha: head.baseSha, ref: pull.baseRef, repo: repository },
  }
  const user = comment ? { login: comment.login, type: comment.type ?? "User" } : null
  const payload =
    eventName === "pull_request"
      ? { action: "synchronize", pull_request: pullRequest, repository }
      : eventName === "issue_comment"
        ? {
            action: "created",
            issue: {
              number: pull.number,
              pull_request: { url: `${fake.url}/repos/${githubRepo}/pulls/${pull.number}` },
            },
            comment: {
              id: comment!.id,
              body: comment!.body,
              user,
              author_association: comment!.association ?? "MEMBER",
            },
            repository,
          }
        : {
            action: "created",
            pull_request: pullRequest,
            comment: {
              id: comment!.id,
              body: comment!.body,
              user,
              author_association: comment!.association ?? "MEMBER",
              path: "src/auth/login.ts",
              ...(comment!.inReplyToId === undefined ? {} : { in_reply_to_id: comment!.inReplyToId }),
            },
            repository,
          }
  const scratch = await mkdtemp(join(tmpdir(), "ocr-github-event-"))
  cleanups.push(() => rm(scratch, { recursive: true, force: true }))
  const eventPath = join(scratch, "event.json")
  await writeFile(eventPath, JSON.stringify(payload))
  return {
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: githubRepo,
    GITHUB_SERVER_URL: fake.url,
    GITHUB_API_URL: fake.url,
    GITHUB_GRAPHQL_URL: `${fake.url}/graphql`,
    GITHUB_RUN_ID: "4242",
    GITHUB_TOKEN: fake.tokens["github-actions[bot]"]!,
  }
}

/** `opencode-reviewer review` run by a test as a real process: what it printed, its pid, review.json. */
export interface CliRun extends Run {
  pid: number
  ms: number
}

const cliBin = fileURLToPath(new URL("../../packages/cli/bin/opencode-reviewer.ts", import.meta.url))

/**
 * Runs `opencode-reviewer review` as a child process, for what only a real process shows: its own
 * stderr (pino writes to fd 2), its process tree, its memory. Asynchronous, since the model server
 * and the GitLab fake answer from this process (AGENTS.md). `onStart` gets the pid at once.
 */
export async function runCli(
  scenario: Scenario,
  env: Record<string, string>,
  options: { repoDir?: string; args?: string[]; onStart?: (pid: number) => void } = {},
): Promise<CliRun> {
  const repoDir = options.repoDir ?? scenario.repo.dir
  const started = performance.now()
  const child = Bun.spawn(
    [
      process.execPath,
      cliBin,
      "review",
      "--repo",
      repoDir,
      "--config",
      scenario.configFile,
      "--output-dir",
      scenario.outputDir,
      ...(options.args ?? []),
    ],
    {
      cwd: repoDir,
      env: { ...gitEnv(repoDir), PWD: repoDir, ...env },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    },
  )
  options.onStart?.(child.pid)
  const [stdout, stderr] = await Promise.all([drain(child.stdout), drain(child.stderr)])
  const code = await child.exited
  const record = await readFile(join(scenario.outputDir, "review.json"), "utf8").then(
    (json) => JSON.parse(json) as ReviewRecord,
    () => null,
  )
  return { code, stdout, stderr, record, pid: child.pid, ms: Math.round(performance.now() - started) }
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder()
  let text = ""
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true })
  return text + decoder.decode()
}

/** Every live process below `root` (not `root` itself), with its parent, read from /proc. */
export function descendantsOf(root: number): { pid: number; ppid: number }[] {
  const children = new Map<number, number[]>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const ppid = parentOf(entry)
    if (ppid !== null) children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)])
  }
  const found: { pid: number; ppid: number }[] = []
  const queue = (children.get(root) ?? []).map((pid) => ({ pid, ppid: root }))
  while (queue.length > 0) {
    const next = queue.shift()!
    found.push(next)
    queue.push(...(children.get(next.pid) ?? []).map((pid) => ({ pid, ppid: next.pid })))
  }
  return found
}

function parentOf(pid: string): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
    // The command name (in parentheses) may hold spaces; the fields after it are fixed.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
  } catch {
    return null
  }
}
