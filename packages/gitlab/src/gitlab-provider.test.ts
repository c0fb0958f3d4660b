import {
  buildReviewRecord,
  type Finding,
  gitDiffArgs,
  type ReviewFinding,
  type ReviewRecord,
} from "@opencode-reviewer/core"
import {
  createTempRepo,
  type GitlabFake,
  type GitlabFakeOptions,
  startGitlabFake,
  type TempRepo,
} from "@opencode-reviewer/testkit"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { GitlabAuthError } from "./errors"
import { createGitlabProvider, type GitlabChange, type GitlabProviderOptions } from "./gitlab-provider"

// Every test runs the provider through real HTTP against the testkit's GitLab fake, over a real
// git repository: main holds the base, feature the change.

const base = {
  "src/db.ts": [
    "export function find(id: string) {",
    "  return db.query('SELECT * FROM users WHERE id = ?', [id])",
    "}",
    "",
    "export const limit = 10",
    "",
  ].join("\n"),
  "README.md": "# demo\n",
  "opencode-reviewer.json": '{ "failOn": "significant_concerns" }\n',
}
const feature = {
  "src/db.ts": [
    "export function find(id: string) {",
    "  return db.query('SELECT * FROM users WHERE id = ' + id)",
    "}",
    "",
    "export const limit = 10",
    "export const retries = 3",
    "",
  ].join("\n"),
  "src/a&b.ts": "export const ampersand = true\n",
}

let repo: TempRepo
let fake: GitlabFake
let head: string

beforeEach(async () => {
  repo = await createTempRepo()
  await repo.write(base)
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write(feature)
  head = repo.commit("feature: build the query by hand")
  repo.git("checkout", "-q", "main")
})

afterEach(async () => {
  await fake?.close()
  await repo.remove()
})

async function start(options: Partial<GitlabFakeOptions> = {}) {
  fake = await startGitlabFake({
    repoDir: repo.dir,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Query users",
    description: "Adds retries.",
    ...options,
  })
  return fake
}

function env(token = fake.tokens.bot): Record<string, string | undefined> {
  return {
    CI_API_V4_URL: fake.apiUrl,
    CI_SERVER_URL: fake.url,
    CI_PROJECT_ID: "999",
    CI_MERGE_REQUEST_PROJECT_ID: String(fake.projectId),
    CI_MERGE_REQUEST_IID: String(fake.iid),
    CI_PIPELINE_SOURCE: "merge_request_event",
    GITLAB_TOKEN: token,
    CI_JOB_TOKEN: fake.tokens.job,
  }
}

function provider(options: Partial<GitlabProviderOptions> = {}) {
  return createGitlabProvider({ env: env(), repoDir: repo.dir, sleep: async () => {}, ...options })
}

const glass = { phrase: "break glass", minAccess: "write" as const }

const readLocalDiff = async (from: string, to: string) =>
  new TextEncoder().encode(repo.git(...gitDiffArgs, from, to, "--"))

const sqlFinding = (over: Partial<ReviewFinding> = {}): ReviewFinding => ({
  id: "f1",
  reviewer: "security",
  severity: "critical",
  category: "security",
  file: "src/db.ts",
  line: 2,
  title: "SQL built from request input",
  body: "The id is concatenated into the query; use a parameter.",
  status: "new",
  thread: null,
  ...over,
})

// A record as review.json would have it after this change: core matches the findings to the
// provider's previous threads (what is fixed, dismissed or still open).
function judged(change: GitlabChange, findings: Finding[]): ReviewRecord {
  return buildReviewRecord({
    review: { summary: "Re-review.", findings, answer: null },
    plan: {
      tier: "lite",
      files: [{ path: "src/db.ts", noise: null }],
      agents: [{ name: "review_coordinator", role: "coordinator" }],
    },
    reviewers: [],
    durationMs: 1,
    breakGlass: false,
    previous: change.previousFindings,
  })
}

function record(findings: ReviewFinding[], over: Partial<ReviewRecord> = {}): ReviewRecord {
  const critical = findings.some((finding) => finding.severity === "critical")
  return {
    decision: critical ? "significant_concerns" : findings.length > 0 ? "approved_with_comments" : "approved",
    tier: "lite",
    breakGlass: false,
    injectionSuspected: false,
    findings,
    resolved: [],
    dismissed: [],
    stillOpen: [],
    coverage: {
      reviewedFiles: 2,
      filtered: [],
      failedReviewers: [],
      unreviewed: [],
      complete: true,
      unjudgedFindings: 0,
    },
    usage: { byAgent: {}, byModel: {}, costUsd: 0.12, cacheHitRate: 0 },
    durationMs: 42_000,
    reasons: critical ? ["1 critical finding"] : [],
    summary: "The change builds SQL by hand.",
    answer: null,
    notes: [],
    breakGlassIgnored: [],
    ...over,
  }
}

const summaryNotes = () =>
  fake.state.notes.filter(
    (note) => note.author.bot && note.type === null && note.body.includes("opencode-reviewer:summary"),
  )
const diffNotes = () => fake.state.notes.filter((note) => note.type === "DiffNote")

describe("reading the merge request", () => {
  test("reads title, branches, diff_refs and the diff from the API, and human comments", async () => {
    await start()
    fake.addHumanNote("Please check the query @bob")
    fake.addSystemNote("changed the description")
    const change = await provider().readChange()
    const version = fake.state.versions.at(-1)!
    expect(change.mergeRequest).toMatchObject({
      title: "Query users",
      description: "Adds retries.",
      author: "alice",
      sourceBranch: "feature",
      targetBranch: "main",
      baseSha: version.baseSha,
      headSha: head,
    })
    expect(change.source).toContain("GitLab merge request !7 diffs")
    const diff = new TextDecoder().decode(change.diff)
    expect(diff).toContain("diff --git a/src/a&b.ts b/src/a&b.ts")
    expect(diff).toContain("+  return db.query('SELECT * FROM users WHERE id = ' + id)")
    expect(change.comments).toEqual([expect.objectContaining({ author: "alice", body: "Please check the query @bob" })])
    expect(change.previousReview).toBeNull()
    expect(change.unreviewed).toEqual([])
  })

  test("the API diff and the local git diff agree; local git is used when given", async () => {
    await start()
    const fromApi = await provider().readChange()
    const fromGit = await provider({ readLocalDiff }).readChange()
    expect(fromGit.source).toMatch(/^git diff /)
    const { parseDiff } = await import("@opencode-reviewer/core")
    const shape = (bytes: Uint8Array) =>
      parseDiff(bytes).files.map((file) => ({
        path: file.path,
        status: file.status,
        hunks: file.hunks.map((hunk) => hunk.lines),
      }))
    expect(shape(fromApi.diff)).toEqual(shape(fromGit.diff))
  })

  test("more than one page of /diffs is followed through the Link header", async () => {
    repo.git("checkout", "-q", "feature")
    await repo.write(
      Object.fromEntries(
        Array.from({ length: 120 }, (_, index) => [`many/file-${String(index).padStart(3, "0")}.txt`, `${index}\n`]),
      ),
    )
    repo.commit("many files")
    repo.git("checkout", "-q", "main")
    await start()
    const change = await provider().readChange()
    const { parseDiff } = await import("@opencode-reviewer/core")
    expect(parseDiff(change.diff).files).toHaveLength(122)
    const pages = fake.state.requests.filter((request) => request.path.endsWith("/diffs"))
    expect(pages.map((request) => request.query.page ?? "1")).toEqual(["1", "2"])
    expect(pages[0]!.query.per_page).toBe("100")
  })

  test("a collapsed file is unreviewed, not unchanged", async () => {
    await start({ collapsedPaths: ["src/a&b.ts"] })
    const gitlab = provider()
    const change = await gitlab.readChange()
    expect(change.unreviewed).toEqual([{ path: "src/a&b.ts", reason: expect.stringContaining("collapsed") }])
    expect(gitlab.unreviewed).toEqual(change.unreviewed)
    expect(new TextDecoder().decode(change.diff)).not.toContain("a&b.ts")
  })

  test("files /diffs leaves out past GitLab's diff_max_files are named as not reviewed; local git reads them all", async () => {
    await start({ maxDiffFiles: 1 })
    const change = await provider().readChange()
    const { parseDiff } = await import("@opencode-reviewer/core")
    expect(parseDiff(change.diff).files.map((file) => file.path)).toEqual(["src/a&b.ts"])
    expect(change.unreviewed).toEqual([
      {
        files: null,
        path: "every changed file after the first 1",
        reason: `GitLab's /diffs stops at its diff limits, listing 1 of more than 1 changed files, changes_count "1+"; fetch the merge request's commits, GIT_DEPTH: 0, so git reads the whole diff`,
      },
    ])
    const fromGit = await provider({ readLocalDiff }).readChange()
    expect(parseDiff(fromGit.diff).files).toHaveLength(2)
    expect(fromGit.unreviewed).toEqual([])
  })

  test("a suggestion that applies is posted as GitLab's suggestion block; one neutralising would change is not", async () => {
    await start()
    const fix = { startLine: 2, lines: ["  return db.query('SELECT * FROM users WHERE id = ?', [id])"] }
    // Two lines up to line 3 (the closing brace) of the changed function: `-1+0` on line 3.
    const wide = {
      startLine: 2,
      lines: ["  return db.query('SELECT * FROM users WHERE id = ?', [id])", "} // parameterised"],
    }
    const unsafe = { startLine: 2, lines: ["/merge"] }
    const result = await provider().publish(
      record([
        sqlFinding({ suggestion: fix }),
        sqlFinding({ id: "f2", line: 3, title: "Close it", suggestion: wide }),
        sqlFinding({ id: "f3", line: 2, title: "Quick action", suggestion: unsafe }),
      ]),
    )
    expect(result.threads.created).toHaveLength(3)
    const bodies = result.threads.created.map(
      ({ discussionId }) => fake.state.discussions.find((candidate) => candidate.id === discussionId)!.notes[0]!.body,
    )
    expect(bodies[0]).toContain(`\`\`\`suggestion:-0+0\n${fix.lines[0]}\n\`\`\``)
    expect(bodies[1]).toContain(`\`\`\`suggestion:-1+0\n${wide.lines.join("\n")}\n\`\`\``)
    // Inside a fence GitLab's neutralisation indents a column-0 "/merge": the block would commit
    // something else than it shows, so the finding is posted without one.
    expect(bodies[2]).not.toContain("suggestion:")
  })

  test("human replies in the bot's threads travel with the previous review, and count for break glass", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const discussionId = first.threads.created[0]!.discussionId
    fake.addHumanNote("I disagree, this id is validated upstream. Break glass.", { discussionId, author: "dave" })
    fake.setMember("dave", 30)
    const gitlab = provider()
    const change = await gitlab.readChange()
    expect(change.comments).toEqual([])
    expect(change.previousReview?.threads[0]?.notes.map((note) => note.author)).toEqual(["project_42_bot", "dave"])
    expect(change.previousReview?.threads[0]?.notes[0]?.body).not.toContain("<!--")
    expect((await gitlab.breakGlass(glass)).honoured).toEqual({ by: "dave", at: expect.any(String) })
  })

  test("break glass: a note with the phrase, any case, from a Developer or above; the bot's own notes never count", async () => {
    await start()
    const gitlab = provider()
    await gitlab.readChange()
    expect(await gitlab.breakGlass(glass)).toEqual({ honoured: null, ignored: [] })
    fake.addHumanNote("Prod is down, BREAK   Glass please", { author: "carol" })
    fake.setMember("carol", 30)
    await gitlab.readChange()
    expect((await gitlab.breakGlass(glass)).honoured).toEqual({ by: "carol", at: expect.any(String) })
  })

  test("break glass from a Reporter or a non-member is ignored and said; a Maintainer's counts when Maintainer is the least", async () => {
    await start()
    fake.addHumanNote("break glass", { author: "rita" })
    fake.setMember("rita", 20)
    fake.addHumanNote("break glass!", { author: "stranger" })
    const gitlab = provider()
    await gitlab.readChange()
    expect(await gitlab.breakGlass(glass)).toEqual({
      honoured: null,
      ignored: [
        { by: "rita", at: expect.any(String), reason: "read access; breaking the glass needs write access or above" },
        { by: "stranger", at: expect.any(String), reason: "no access; breaking the glass needs write access or above" },
      ],
    })
    fake.addHumanNote("break glass", { author: "dev" })
    fake.setMember("dev", 30)
    fake.addHumanNote("break glass", { author: "mona" })
    fake.setMember("mona", 40)
    await gitlab.readChange()
    const maintainers = await gitlab.breakGlass({ phrase: "break glass", minAccess: "maintain" })
    expect(maintainers.honoured).toEqual({ by: "mona", at: expect.any(String) })
    expect(maintainers.ignored.map((entry) => entry.by)).toEqual(["rita", "stranger", "dev"])
  })

  test("readTrustedFile reads the target branch, never the change, null when missing", async () => {
    await start()
    // The change under review rewrites the config to make itself pass: that copy must not be read.
    repo.git("checkout", "-q", "feature")
    await repo.write({ "opencode-reviewer.json": '{ "failOn": "approved" }\n' })
    repo.commit("relax the review")
    repo.git("checkout", "-q", "main")
    await fake.push()
    const gitlab = provider()
    expect(await gitlab.readTrustedFile("does-not-exist.json")).toBeNull()
    const config = await gitlab.readTrustedFile("opencode-reviewer.json")
    expect(config).toBe(base["opencode-reviewer.json"])
  })

  test("listTrustedFiles lists a folder of the target branch through every tree page, never the change's", async () => {
    await repo.write(
      Object.fromEntries(
        Array.from({ length: 120 }, (_, index) => [
          `docs/standards/ENG-${String(index + 1).padStart(3, "0")}.md`,
          `# ENG-${index + 1}\n`,
        ]),
      ),
    )
    await repo.write({ "docs/standards/http/ENG-500.md": "# ENG-500\n" })
    repo.commit("standards")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-edit", "main")
    await repo.write({ "docs/standards/ENG-999.md": "# ENG-999: added by the change\n" })
    repo.commit("a standard of my own")
    repo.git("checkout", "-q", "main")
    await start()
    const gitlab = provider()
    const files = await gitlab.listTrustedFiles!("docs/standards/")
    expect(files).toHaveLength(121)
    expect(files).toContain("docs/standards/http/ENG-500.md")
    expect(files).not.toContain("docs/standards/ENG-999.md")
    // 121 blobs + 1 tree at 100 per page: two pages, the second reached through the Link header.
    expect(
      fake.state.requests
        .filter((request) => request.path.endsWith("/repository/tree"))
        .map((request) => request.query.page),
    ).toEqual([undefined, "2"])
    expect(await gitlab.listTrustedFiles!("docs/missing")).toBeNull()
    expect(await gitlab.listTrustedFiles!("README.md")).toBeNull()
  })

  test("CI_JOB_TOKEN alone stops with the clear error before any request", async () => {
    await start()
    const error = (() => {
      try {
        createGitlabProvider({ env: { ...env(), GITLAB_TOKEN: undefined } })
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(GitlabAuthError)
    expect((error as Error).message).toMatch(
      /CI_JOB_TOKEN cannot post.*project access token.*`api` scope.*GITLAB_TOKEN/,
    )
    expect(fake.state.requests).toHaveLength(0)
  })

  test("a token GitLab refuses is a GitlabAuthError", async () => {
    await start()
    await expect(
      createGitlabProvider({ env: env("glpat-wrong"), sleep: async () => {} }).readChange(),
    ).rejects.toBeInstanceOf(GitlabAuthError)
  })
})

describe("publishing", () => {
  test("a 429 on the summary note honours Retry-After and posts it once", async () => {
    await start()
    const delays: number[] = []
    fake.failNext({ method: "POST", path: /\/notes$/ }, { status: 429, retryAfter: 3 })
    const result = await provider({ sleep: async (ms) => void delays.push(ms) }).publish(record([]))
    expect(delays).toEqual([3000])
    expect(summaryNotes()).toHaveLength(1)
    expect(result.summaryNote?.action).toBe("created")
  })

  test("a 502 after GitLab stored the summary note does not duplicate it", async () => {
    await start()
    fake.failNext({ method: "POST", path: /\/notes$/ }, { status: 502, afterStore: true })
    const result = await provider().publish(record([]))
    expect(summaryNotes()).toHaveLength(1)
    expect(result.summaryNote).toEqual({ id: summaryNotes()[0]!.id, action: "created" })
  })

  test("a critical finding: one summary note, one DiffNote on the line, request changes by GraphQL", async () => {
    await start()
    const gitlab = provider()
    await gitlab.readChange()
    const result = await gitlab.publish(record([sqlFinding()]))

    expect(summaryNotes()).toHaveLength(1)
    expect(summaryNotes()[0]!.body).toContain("significant concerns")
    expect(diffNotes()).toHaveLength(1)
    const thread = diffNotes()[0]!
    expect(thread.position).toMatchObject({ new_path: "src/db.ts", old_path: "src/db.ts", new_line: 2 })
    expect(thread.position?.old_line ?? null).toBeNull()
    expect(thread.position?.head_sha).toBe(head)
    expect(thread.body).toContain("SQL built from request input")
    expect(result.threads.created).toEqual([{ findingId: "f1", discussionId: thread.discussionId }])
    expect(result.approval).toMatchObject({ action: "requested_changes", via: "graphql" })
    expect(fake.state.requestChanges).toEqual([expect.objectContaining({ via: "graphql", applied: true })])
    // GraphQL variables go out snake_case and untouched (gitbeaker would decamelize them: docs/gitlab.md#multipart-and-decamelised-bodies).
    const graphql = fake.state.requests.find((request) => request.path === "/api/graphql")!
    expect((graphql.body as { variables: unknown }).variables).toEqual({
      project_path: fake.projectPath,
      iid: String(fake.iid),
    })
    expect(fake.state.executedQuickActions).toEqual([])
    expect(result.files).toEqual([])
    expect(result.warnings).toEqual([])
  })

  test("without the GraphQL mutation: the bot becomes a reviewer and posts /request_changes, the only quick action", async () => {
    await start({ requestChangesMutation: false })
    const gitlab = provider()
    await gitlab.readChange()
    const result = await gitlab.publish(record([sqlFinding()]))
    expect(result.approval).toMatchObject({ action: "requested_changes", via: "quick_action" })
    expect(fake.state.executedQuickActions.map((action) => [action.name, action.user.bot, action.applied])).toEqual([
      ["request_changes", true, true],
    ])
    expect(fake.state.reviewers.map((reviewer) => [reviewer.user.bot, reviewer.state])).toContainEqual([
      true,
      "requested_changes",
    ])
  })

  test("when GitLab can record no change request at all, the review still publishes and says so", async () => {
    await start({ requestChangesMutation: false })
    fake.failNext({ method: "PUT", path: /\/merge_requests\/7$/ }, { status: 403 })
    const result = await provider().publish(record([sqlFinding()]))
    expect(result.approval.action).toBe("request_changes_unavailable")
    expect(result.approval.detail).toContain("the failing review job is the merge gate")
    expect(result.warnings).toEqual([expect.stringContaining("cannot record")])
    expect(summaryNotes()).toHaveLength(1)
    expect(diffNotes()).toHaveLength(1)
  })

  test("a clean record approves with the reviewed head sha", async () => {
    await start()
    const gitlab = provider()
    await gitlab.readChange()
    const result = await gitlab.publish(record([]))
    expect(result.approval).toEqual({ action: "approved", via: "rest", sha: head, detail: null })
    expect(fake.state.approvals.map((approval) => [approval.user.bot, approval.sha])).toEqual([[true, head]])
    expect(summaryNotes()[0]!.body).toContain("No findings.")
  })

  test("a re-run on the same head edits the same note and opens no new thread", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const second = await provider().publish(record([sqlFinding({ line: 2 })]))
    expect(first.summaryNote?.action).toBe("created")
    expect(second.summaryNote).toEqual({ id: first.summaryNote!.id, action: "updated" })
    expect(summaryNotes()).toHaveLength(1)
    expect(diffNotes()).toHaveLength(1)
    expect(second.threads.created).toEqual([])
    expect(second.threads.kept).toEqual([
      { findingId: "f1", discussionId: first.threads.created[0]!.discussionId, resolved: false },
    ])
  })

  test("after a push with the fix, the thread is answered and resolved, and the MR approved", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    repo.git("checkout", "-q", "feature")
    await repo.write({ "src/db.ts": feature["src/db.ts"].replace("' + id)", "?', [id])") })
    const fixed = repo.commit("use a parameter")
    repo.git("checkout", "-q", "main")
    await fake.push()

    const gitlab = provider()
    const change = await gitlab.readChange()
    expect(change.previousReview?.threads).toEqual([
      expect.objectContaining({
        id: first.threads.created[0]!.discussionId,
        file: "src/db.ts",
        line: 2,
        resolved: false,
      }),
    ])
    expect(change.previousFindings).toEqual([
      expect.objectContaining({ title: "SQL built from request input", file: "src/db.ts" }),
    ])
    expect(change.previousReview?.summary).toContain("significant concerns")
    expect(change.previousReview?.summary).not.toContain("<!--")

    expect(change.previousFindings[0]!.trace).toEqual({ file: "src/db.ts", line: null, changed: true })
    const result = await gitlab.publish(judged(change, []))
    const discussion = fake.state.discussions.find(
      (candidate) => candidate.id === first.threads.created[0]!.discussionId,
    )!
    expect(discussion.resolved).toBe(true)
    expect(discussion.notes.at(-1)!.body).toContain(`Fixed in ${fixed.slice(0, 8)}: the code at this line changed`)
    expect(result.threads.resolved).toEqual([{ discussionId: discussion.id }])
    expect(result.approval).toMatchObject({ action: "approved", sha: fixed })
    expect(summaryNotes()).toHaveLength(1)
  })

  test('a "won\'t fix" reply resolves the thread as acknowledged once the finding is dropped', async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const discussionId = first.threads.created[0]!.discussionId
    fake.addHumanNote("Won't fix: this table is internal and ids are numeric.", { discussionId })
    const gitlab = provider()
    const change = await gitlab.readChange()
    expect(change.previousFindings[0]!.reply).toEqual({
      by: "alice",
      kind: "acknowledged",
      trusted: true,
      words: "won't fix",
    })
    const result = await gitlab.publish(judged(change, []))
    const discussion = fake.state.discussions.find((candidate) => candidate.id === discussionId)!
    expect(discussion.resolved).toBe(true)
    expect(discussion.notes.at(-1)!.body).toContain("Dismissed, not fixed: dismissed by alice: won't fix.")
    expect(result.threads).toMatchObject({ resolved: [], dismissed: [{ discussionId }] })
  })

  test('a "won\'t fix" from a Reporter, or a question, dismisses nothing: the members API says who may', async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const discussionId = first.threads.created[0]!.discussionId
    fake.setMember("rita", 20)
    fake.addHumanNote("Won't fix, by design.", { discussionId, author: "rita" })
    const change = await provider().readChange()
    expect(change.previousFindings[0]!.reply).toMatchObject({ by: "rita", kind: "acknowledged", trusted: false })
    fake.addHumanNote("Is this intended?", { discussionId })
    const asked = await provider().readChange()
    expect(asked.previousFindings[0]!.reply).toEqual({ by: "alice", kind: "argued", trusted: true })
    expect(fake.state.requests.some((request) => /\/members\/all\/\d+$/.test(request.path))).toBe(true)
  })

  test('an unfixed finding left out on a push that did not touch its code keeps its thread open, never "fixed"', async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    repo.git("checkout", "-q", "feature")
    await repo.write({ "README.md": "# service\n\nMore words.\n" })
    repo.commit("docs only")
    repo.git("checkout", "-q", "main")
    await fake.push()
    const gitlab = provider()
    const change = await gitlab.readChange()
    expect(change.previousFindings[0]!.trace).toMatchObject({ file: "src/db.ts", line: 2, changed: false })
    const reviewed = judged(change, [])
    expect(reviewed.stillOpen).toEqual([
      expect.objectContaining({
        id: first.threads.created[0]!.discussionId,
        reason: "not reported again, but the code at its lines did not change",
      }),
    ])
    const result = await gitlab.publish(reviewed)
    expect(result.threads.resolved).toEqual([])
    expect(
      fake.state.discussions.find((candidate) => candidate.id === first.threads.created[0]!.discussionId)!.resolved,
    ).toBe(false)
    expect(summaryNotes()[0]!.body).toContain("Earlier findings still open")
  })

  test("a reworded, re-categorised finding the coordinator says continues a thread keeps that thread", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const discussionId = first.threads.created[0]!.discussionId
    const gitlab = provider()
    const change = await gitlab.readChange()
    const reworded = { ...sqlFinding(), category: "code-quality", title: "Unparameterised query", thread: discussionId }
    const reviewed = judged(change, [reworded])
    expect(reviewed.findings[0]).toMatchObject({ status: "persisting", thread: discussionId })
    const result = await gitlab.publish(reviewed)
    expect(result.threads.created).toEqual([])
    expect(result.threads.kept).toEqual([{ findingId: "f1", discussionId, resolved: false }])
    expect(fake.state.discussions.filter((candidate) => !candidate.individualNote)).toHaveLength(1)
  })

  test("a disagreement the coordinator rejects gets its rebuttal once, in the same thread", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding()]))
    const discussionId = first.threads.created[0]!.discussionId
    fake.addHumanNote("I disagree, the id is validated upstream.", { discussionId })
    const rebuttal = sqlFinding({
      body: "The route passes `req.params.id` straight through; nothing upstream validates it.",
    })
    for (let run = 0; run < 2; run += 1) {
      const gitlab = provider()
      await gitlab.readChange()
      await gitlab.publish(record([rebuttal]))
    }
    const discussion = fake.state.discussions.find((candidate) => candidate.id === discussionId)!
    expect(discussion.resolved).toBe(false)
    expect(discussion.notes.filter((note) => note.body.includes("nothing upstream validates it"))).toHaveLength(1)
    expect(fake.state.discussions.filter((candidate) => !candidate.individualNote)).toHaveLength(1)
  })

  test("a finding outside the diff goes into the summary, not an error", async () => {
    await start()
    const result = await provider().publish(
      record([
        sqlFinding({ severity: "warning", file: "README.md", line: 1, title: "Document retries" }),
        sqlFinding({ id: "f2", severity: "suggestion", line: 40, title: "Far away" }),
      ]),
    )
    expect(diffNotes()).toHaveLength(0)
    expect(result.threads.movedToSummary).toEqual([
      { findingId: "f1", reason: "file not in the diff" },
      { findingId: "f2", reason: "line 40 is not in the diff" },
    ])
    const body = summaryNotes()[0]!.body
    expect(body).toContain("Document retries")
    expect(body).toContain("Far away")
  })

  test("GitLab refusing a position (400) moves the finding into the summary", async () => {
    await start()
    fake.failNext(
      { method: "POST", path: /\/discussions$/ },
      {
        status: 400,
        body: { message: '400 Bad request - Note {:line_code=>["can\'t be blank", "must be a valid line code"]}' },
      },
    )
    const result = await provider().publish(record([sqlFinding()]))
    expect(diffNotes()).toHaveLength(0)
    expect(result.threads.movedToSummary).toEqual([
      { findingId: "f1", reason: expect.stringContaining("GitLab refused the line position") },
    ])
    expect(summaryNotes()[0]!.body).toContain("SQL built from request input")
  })

  test("a path with & is anchored whole (JSON, not gitbeaker's multipart)", async () => {
    await start()
    const result = await provider().publish(
      record([sqlFinding({ severity: "suggestion", file: "src/a&b.ts", line: 1, title: "Name the flag" })]),
    )
    expect(result.threads.created).toHaveLength(1)
    expect(diffNotes()[0]!.position).toMatchObject({ new_path: "src/a&b.ts", old_path: "src/a&b.ts", new_line: 1 })
    const post = fake.state.requests.find(
      (request) => request.method === "POST" && request.path.endsWith("/discussions"),
    )!
    expect(post.bodyKind).toBe("json")
  })

  test("a 502 after GitLab stored the thread does not duplicate it", async () => {
    await start()
    fake.failNext({ method: "POST", path: /\/discussions$/ }, { status: 502, afterStore: true })
    const result = await provider().publish(record([sqlFinding()]))
    expect(diffNotes()).toHaveLength(1)
    expect(result.threads.created).toHaveLength(1)
    expect(
      fake.state.requests.filter((request) => request.method === "POST" && request.path.endsWith("/discussions")),
    ).toHaveLength(1)
  })

  test("quick actions and mentions in model text are neutralised; nothing but our own command runs", async () => {
    await start({ requestChangesMutation: false })
    const hostile = sqlFinding({
      title: "/merge now @all",
      body: "/approve\n/label ~critical\nCC @alice and #12 !3\n<!-- opencode-reviewer:summary=x -->",
    })
    const result = await provider().publish(record([hostile], { summary: "/unapprove\n@bob look", answer: "/close" }))
    expect(fake.state.executedQuickActions.map((action) => action.name)).toEqual(["request_changes"])
    expect(result.neutralized).toBeGreaterThan(0)
    for (const note of fake.state.notes.filter((candidate) => candidate.author.bot && !candidate.system)) {
      expect(note.body).not.toMatch(/^\/\w/m)
      expect(note.body).not.toMatch(/(^|\s)@(all|alice|bob)\b/)
    }
    expect(summaryNotes()).toHaveLength(1)
  })

  test("a thread a person resolved stays resolved, unless the finding got worse", async () => {
    await start()
    const first = await provider().publish(record([sqlFinding({ severity: "warning" })]))
    const discussionId = first.threads.created[0]!.discussionId
    fake.resolveAsHuman(discussionId)

    const same = await provider().publish(record([sqlFinding({ severity: "warning" })]))
    expect(same.threads.kept).toEqual([{ findingId: "f1", discussionId, resolved: true }])
    expect(fake.state.discussions.find((discussion) => discussion.id === discussionId)!.resolved).toBe(true)

    const worse = await provider().publish(record([sqlFinding({ severity: "critical" })]))
    expect(worse.threads.reopened).toEqual([{ findingId: "f1", discussionId }])
    const discussion = fake.state.discussions.find((candidate) => candidate.id === discussionId)!
    expect(discussion.resolved).toBe(false)
    expect(discussion.notes.at(-1)!.body).toContain("Reopened: this is now **critical**")
    expect(diffNotes().filter((note) => note.discussionId !== discussionId)).toHaveLength(0)
  })

  test("minor issues revoke an earlier bot approval; 404 when there is none is fine", async () => {
    await start()
    const gitlab = provider()
    expect((await gitlab.publish(record([], { decision: "minor_issues" }))).approval.action).toBe(
      "nothing_to_unapprove",
    )
    await provider().publish(record([]))
    expect(fake.state.approvals).toHaveLength(1)
    const result = await provider().publish(record([], { decision: "minor_issues" }))
    expect(result.approval.action).toBe("unapproved")
    expect(fake.state.approvals).toHaveLength(0)
  })

  test("a head that moved during the review is not approved at all, and the summary says what the review covers", async () => {
    await start()
    const gitlab = provider()
    await gitlab.readChange()
    repo.git("checkout", "-q", "feature")
    await repo.write({ "README.md": "# demo\nmore\n" })
    const moved = repo.commit("more")
    repo.git("checkout", "-q", "main")
    await fake.push()
    const result = await gitlab.publish(record([]))
    expect(result.approval).toMatchObject({ action: "not_approved", sha: head })
    expect(result.approval.detail).toContain(moved.slice(0, 8))
    expect(fake.state.approvals).toHaveLength(0)
    expect(fake.state.requests.filter((request) => request.path.endsWith("/approve"))).toHaveLength(0)
    expect(summaryNotes()[0]!.body).toContain(
      `moved from ${head.slice(0, 8)} to ${moved.slice(0, 8)} during the review: this review covers ${head.slice(0, 8)} only`,
    )
  })

  test("a head that moves between the check and the approval: GitLab's 409 is reported, not retried", async () => {
    await start()
    const gitlab = provider()
    await gitlab.readChange()
    fake.failNext(
      { method: "POST", path: /\/approve$/ },
      { status: 409, body: { message: "SHA does not match HEAD of source branch: 0123456789abcdef" } },
    )
    const result = await gitlab.publish(record([]))
    expect(result.approval).toMatchObject({ action: "not_approved", sha: head })
    expect(fake.state.approvals).toHaveLength(0)
    expect(fake.state.requests.filter((request) => request.path.endsWith("/approve"))).toHaveLength(1)
  })

  test("break glass and partial coverage are stated in the summary", async () => {
    await start()
    fake.addHumanNote("break glass", { author: "carol" })
    fake.setMember("carol", 30)
    const gitlab = provider()
    await gitlab.readChange()
    await gitlab.breakGlass(glass)
    await gitlab.publish(
      record([], {
        breakGlass: true,
        coverage: {
          reviewedFiles: 2,
          filtered: [],
          failedReviewers: [{ name: "performance", error: "timeout" }],
          unreviewed: [],
          complete: true,
          unjudgedFindings: 0,
        },
      }),
    )
    const body = summaryNotes()[0]!.body
    expect(body).toContain("approved because carol asked for it")
    expect(body).toContain("Partial review.")
    expect(body).toContain("not a clean result")
  })
})
