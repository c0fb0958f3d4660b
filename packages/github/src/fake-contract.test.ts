import { symlinkSync } from "node:fs"
import { join } from "node:path"
import { GraphqlResponseError, graphql } from "@octokit/graphql"
import { Octokit } from "@octokit/rest"
import {
  createTempRepo,
  type GithubFake,
  type GithubFakeOptions,
  startGithubFake,
  type TempRepo,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest"

// The GitHub fake (packages/testkit/src/github-fake.ts) proven THROUGH @octokit/rest and
// @octokit/graphql, so that it cannot drift from what the clients send and parse. The facts and
// where they were verified: docs/github.md.

const lines = (count: number, edit: (n: number) => string | string[] = (n) => `export const v${n} = ${n}`) =>
  `${Array.from({ length: count }, (_, i) => edit(i + 1))
    .flat()
    .join("\n")}\n`

let repo: TempRepo
let mergeBase: string
let featureSha: string
let mainSha: string

beforeAll(async () => {
  repo = await createTempRepo("github-fake-contract-")
  await repo.write({
    "src/app.ts": lines(30),
    "docs/old.md": lines(12, (n) => `Paragraph ${n} of a document that gets renamed.`),
    "lib/gone.ts": "export const gone = true\n",
  })
  mergeBase = repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({
    // line 5 changed (old 5 deleted, new 5 added), a line added after 25: two hunks
    "src/app.ts": lines(30, (n) =>
      n === 5
        ? "export const v5 = 500"
        : n === 25
          ? ["export const v25 = 25", "export const added = true"]
          : `export const v${n} = ${n}`,
    ),
    "docs/new.md": lines(12, (n) =>
      n === 12 ? "Paragraph 12, reworded." : `Paragraph ${n} of a document that gets renamed.`,
    ),
    "src/new.ts": "export const fresh = 1\nexport const second = 2\n",
    "assets/logo.bin": new Uint8Array([0, 1, 2, 3, 255, 0, 7]),
  })
  repo.git("rm", "-q", "docs/old.md", "lib/gone.ts")
  featureSha = repo.commit("feature work")
  repo.git("checkout", "-q", "main")
  await repo.write({ "README.md": "main moved on\n" })
  mainSha = repo.commit("main moves after the fork point")
})

afterAll(() => repo?.remove())

const forkDiff = [
  "diff --git a/README.md b/README.md",
  "index 1111111..2222222 100644",
  "--- a/README.md",
  "+++ b/README.md",
  "@@ -1,3 +1,3 @@",
  " # Tools",
  "-old line",
  "+new line",
  " end",
  "",
].join("\n")

async function start(overrides: Partial<GithubFakeOptions> = {}): Promise<GithubFake> {
  const fake = await startGithubFake({
    actors: [
      { login: "github-actions[bot]", permission: "write" },
      { login: "reviewer-app[bot]", permission: "write" },
      { login: "readonly[bot]", permission: "read" },
      { login: "alice", permission: "admin" },
      { login: "bob", permission: "read" },
      { login: "carol", permission: "maintain" },
      { login: "mallory", permission: "none" },
    ],
    repos: [
      {
        owner: "acme",
        name: "widgets",
        id: 4242,
        dir: repo.dir,
        pulls: [
          {
            number: 7,
            author: "alice",
            title: "Feature work",
            body: "Please review",
            headRef: "feature",
            git: { dir: repo.dir, base: "main", head: "feature" },
          },
          {
            number: 8,
            author: "reviewer-app[bot]",
            title: "Bot PR",
            git: { dir: repo.dir, base: "main", head: "feature" },
          },
        ],
      },
      {
        owner: "acme",
        name: "tools",
        private: false,
        pulls: [{ number: 3, author: "bob", draft: true, headRepo: "bob/tools", headRef: "fix", diff: forkDiff }],
      },
    ],
    ...overrides,
  })
  onTestFinished(() => fake.close())
  return fake
}

// @octokit/plugin-request-log reports every failed request through `log.error` (console.error by default).
const log = { debug() {}, info() {}, warn() {}, error() {} }

const client = (fake: GithubFake, login = "github-actions[bot]") =>
  new Octokit({ baseUrl: fake.url, auth: fake.tokens[login], request: { retries: 0 }, log })

const gql = (fake: GithubFake, login = "github-actions[bot]") =>
  graphql.defaults({ baseUrl: fake.url, headers: { authorization: `bearer ${fake.tokens[login]}` } })

const inRepo = { owner: "acme", repo: "widgets" } as const
const at = { ...inRepo, pull_number: 7 } as const
const issue = { ...inRepo, issue_number: 7 } as const

interface HttpError extends Error {
  status: number
  response: { data: any; headers: Record<string, string> }
}

async function httpError(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(Error)
  expect((error as Error).name).toBe("HttpError")
  return error as HttpError
}

async function graphqlError(promise: Promise<unknown>): Promise<{ errors: any[]; data: unknown }> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(GraphqlResponseError)
  const { errors, data } = error as GraphqlResponseError<unknown>
  expect(errors).toEqual(expect.any(Array))
  return { errors: errors ?? [], data }
}

const threadsQuery = `query($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 1, after: $after) {
        nodes { id isResolved isOutdated path line diffSide resolvedBy { login }
          comments(first: 10) { nodes { id databaseId body author { login } } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}`

interface ThreadsPage {
  repository: {
    pullRequest: {
      reviewThreads: {
        nodes: {
          id: string
          isResolved: boolean
          isOutdated: boolean
          path: string
          line: number | null
          diffSide: string
          resolvedBy: { login: string } | null
          comments: { nodes: { id: string; databaseId: number; body: string; author: { login: string } }[] }
        }[]
        pageInfo: { hasNextPage: boolean; endCursor: string | null }
      }
    }
  }
}

async function allThreads(fake: GithubFake, login?: string) {
  const threads: ThreadsPage["repository"]["pullRequest"]["reviewThreads"]["nodes"] = []
  let after: string | null = null
  do {
    const page: ThreadsPage = await gql(fake, login)<ThreadsPage>(threadsQuery, {
      owner: "acme",
      name: "widgets",
      number: 7,
      after,
    })
    threads.push(...page.repository.pullRequest.reviewThreads.nodes)
    after = page.repository.pullRequest.reviewThreads.pageInfo.hasNextPage
      ? page.repository.pullRequest.reviewThreads.pageInfo.endCursor
      : null
  } while (after)
  return threads
}

describe("authentication and access", () => {
  test("an unknown token is 401 Bad credentials; `token` and `Bearer` are both accepted", async () => {
    const fake = await start()
    const bad = new Octokit({ baseUrl: fake.url, auth: "ghp_not_a_token", log })
    const error = await httpError(bad.rest.pulls.get(at))
    expect(error.status).toBe(401)
    expect(error.response.data).toEqual({
      message: "Bad credentials",
      documentation_url: "https://docs.github.com/rest",
      status: "401",
    })
    expect(fake.state.requests[0]!.headers.authorization).toBe("token ghp_not_a_token")

    const bearer = await fetch(`${fake.url}/repos/acme/widgets/pulls/7`, {
      headers: { authorization: `Bearer ${fake.tokens.alice}` },
    })
    expect(bearer.status).toBe(200)
    expect(((await bearer.json()) as { number: number }).number).toBe(7)
  })

  test("without access a private repository is 404, never 403; a public one is readable anonymously", async () => {
    const fake = await start()
    const hidden = await httpError(client(fake, "mallory").rest.pulls.get(at))
    expect(hidden.status).toBe(404)
    expect(hidden.response.data).toEqual({
      message: "Not Found",
      documentation_url: "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
      status: "404",
    })
    const anonymous = new Octokit({ baseUrl: fake.url, log })
    expect((await httpError(anonymous.rest.pulls.listFiles(at))).status).toBe(404)
    const open = await anonymous.rest.pulls.get({ owner: "acme", repo: "tools", pull_number: 3 })
    expect(open.data.draft).toBe(true)
    const write = await httpError(
      anonymous.rest.issues.createComment({ owner: "acme", repo: "tools", issue_number: 3, body: "hi" }),
    )
    expect([write.status, write.response.data.message]).toEqual([401, "Requires authentication"])
  })

  test("a read-only installation token is refused writes with 403; GET /user refuses installation tokens", async () => {
    const fake = await start()
    const refused = await httpError(client(fake, "readonly[bot]").rest.issues.createComment({ ...issue, body: "x" }))
    expect(refused.status).toBe(403)
    expect(refused.response.data).toEqual({
      message: "Resource not accessible by integration",
      documentation_url: "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
      status: "403",
    })
    expect(fake.state.issueComments).toHaveLength(0)
    expect((await httpError(client(fake).rest.users.getAuthenticated())).status).toBe(403)
    expect((await client(fake, "alice").rest.users.getAuthenticated()).data).toMatchObject({
      login: "alice",
      type: "User",
    })
  })

  test("a GitHub Enterprise base URL (/api/v3, GraphQL at /api/graphql) reaches the same routes", async () => {
    const fake = await start()
    const ghes = new Octokit({ baseUrl: `${fake.url}/api/v3`, auth: fake.tokens.alice, log })
    expect((await ghes.rest.pulls.get(at)).data.head.sha).toBe(featureSha)
    const data = await graphql.defaults({
      baseUrl: `${fake.url}/api/v3`,
      headers: { authorization: `token ${fake.tokens.alice}` },
    })<{
      repository: { nameWithOwner: string }
    }>(`{ repository(owner: "acme", name: "widgets") { nameWithOwner } }`)
    expect(data.repository.nameWithOwner).toBe("acme/widgets")
    expect(fake.state.requests.map((request) => request.path)).toEqual(["/repos/acme/widgets/pulls/7", "/graphql"])
  })
})

describe("pull request, files and diff", () => {
  test("pulls.get reads head/base from git; a fork's head.repo is the fork", async () => {
    const fake = await start()
    const { data } = await client(fake).rest.pulls.get(at)
    expect(data).toMatchObject({
      number: 7,
      state: "open",
      draft: false,
      title: "Feature work",
      body: "Please review",
      user: { login: "alice", type: "User" },
      head: { sha: featureSha, ref: "feature", repo: { full_name: "acme/widgets" } },
      base: { sha: mainSha, ref: "main", repo: { full_name: "acme/widgets" } },
      changed_files: 5,
      additions: 5,
      deletions: 3,
    })
    const fork = await client(fake).rest.pulls.get({ owner: "acme", repo: "tools", pull_number: 3 })
    expect(fork.data.head).toMatchObject({ label: "bob:fix", ref: "fix", repo: { full_name: "bob/tools", fork: true } })
  })

  test("the diff media type returns the diff against the merge base as text", async () => {
    const fake = await start()
    const { data } = await client(fake).rest.pulls.get({ ...at, mediaType: { format: "diff" } })
    expect(typeof data).toBe("string")
    expect(data).toBe(repo.git("diff", "--find-renames=30%", mergeBase, "feature"))
    expect(fake.state.requests[0]!.headers.accept).toBe("application/vnd.github.v3.diff")
  })

  test("listFiles pages with GitHub's Link header; patch is git's hunks; binary and oversized files have no patch", async () => {
    const fake = await start({ maxPatchBytes: 100 })
    const api = client(fake)
    const first = await api.rest.pulls.listFiles({ ...at, per_page: 2 })
    const base = `${fake.url}/repositories/4242/pulls/7/files`
    expect(first.headers.link).toBe(`<${base}?per_page=2&page=2>; rel="next", <${base}?per_page=2&page=3>; rel="last"`)
    const second = await api.rest.pulls.listFiles({ ...at, per_page: 2, page: 2 })
    expect(second.headers.link).toBe(
      `<${base}?per_page=2&page=1>; rel="prev", <${base}?per_page=2&page=3>; rel="next", <${base}?per_page=2&page=3>; rel="last", <${base}?per_page=2&page=1>; rel="first"`,
    )

    const files = await api.paginate(api.rest.pulls.listFiles, { ...at, per_page: 2 })
    expect(files.map((file) => [file.filename, file.status])).toEqual([
      ["assets/logo.bin", "added"],
      ["docs/new.md", "renamed"],
      ["lib/gone.ts", "removed"],
      ["src/app.ts", "modified"],
      ["src/new.ts", "added"],
    ])
    expect(fake.requests({ path: /\/files$/ }).map((request) => request.query.page)).toEqual([
      undefined,
      "2",
      undefined,
      "2",
      "3",
    ])
    const byName = Object.fromEntries(files.map((file) => [file.filename, file]))
    expect(byName["docs/new.md"]).toMatchObject({ previous_filename: "docs/old.md", additions: 1, deletions: 1 })
    expect(byName["src/new.ts"]!.patch).toBe("@@ -0,0 +1,2 @@\n+export const fresh = 1\n+export const second = 2")
    expect("patch" in byName["assets/logo.bin"]!).toBe(false)
    // src/app.ts's hunks are over the 100-byte limit set above
    expect("patch" in byName["src/app.ts"]!).toBe(false)
    const roomy = await start()
    const full = await client(roomy).paginate(client(roomy).rest.pulls.listFiles, at)
    const gitDiff = repo.git("diff", mergeBase, "feature", "--", "src/app.ts")
    expect(full.find((file) => file.filename === "src/app.ts")!.patch).toBe(
      gitDiff.slice(gitDiff.indexOf("@@")).replace(/\n$/, ""),
    )
  })

  test("at most 3000 files are listed; past 300 files the diff media type is 406", async () => {
    const many = Array.from({ length: 3005 }, (_, index) => {
      const name = `src/f${String(index).padStart(4, "0")}.ts`
      return `diff --git a/${name} b/${name}\nnew file mode 100644\n--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+export const v = ${index}\n`
    }).join("")
    const fake = await start({
      repos: [{ owner: "acme", name: "widgets", pulls: [{ number: 7, author: "alice", diff: many }] }],
    })
    const api = client(fake)
    const files = await api.paginate(api.rest.pulls.listFiles, { ...at, per_page: 100 })
    expect(files).toHaveLength(3000)
    expect(files.at(-1)!.filename).toBe("src/f2999.ts")
    const tooLarge = await httpError(api.rest.pulls.get({ ...at, mediaType: { format: "diff" } }))
    expect(tooLarge.status).toBe(406)
    expect(tooLarge.response.data).toEqual({
      message:
        "Sorry, the diff exceeded the maximum number of files (300). Consider using 'List pull requests files' API or locally cloning the repository instead.",
      errors: [{ resource: "PullRequest", field: "diff", code: "too_large" }],
      documentation_url: "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
      status: "406",
    })
  })
})

describe("issue comments", () => {
  test("create (201 + Location), paginate, update (200), delete (204), then 404", async () => {
    const fake = await start()
    const api = client(fake)
    const created = await api.rest.issues.createComment({ ...issue, body: "<!-- summary -->\nv1" })
    expect(created.status).toBe(201)
    expect(created.headers.location).toBe(`${fake.url}/repos/acme/widgets/issues/comments/${created.data.id}`)
    expect(created.data).toMatchObject({
      body: "<!-- summary -->\nv1",
      user: { login: "github-actions[bot]", type: "Bot" },
    })
    fake.addIssueComment("acme/widgets", 7, "alice", "human reply")
    await api.rest.issues.createComment({ ...issue, body: "third" })

    const listed = await api.paginate(api.rest.issues.listComments, { ...issue, per_page: 1 })
    expect(listed.map((comment) => comment.body)).toEqual(["<!-- summary -->\nv1", "human reply", "third"])
    expect(fake.requests({ method: "GET" })).toHaveLength(3)

    const updated = await api.rest.issues.updateComment({ ...inRepo, comment_id: created.data.id, body: "v2" })
    expect([updated.status, updated.data.body]).toEqual([200, "v2"])
    const deleted = await api.rest.issues.deleteComment({ ...inRepo, comment_id: created.data.id })
    expect(deleted.status).toBe(204)
    const gone = await httpError(api.rest.issues.updateComment({ ...inRepo, comment_id: created.data.id, body: "v3" }))
    expect(gone.response.data).toEqual({
      message: "Not Found",
      documentation_url: "https://docs.github.com/rest/issues/comments#update-an-issue-comment",
      status: "404",
    })
  })

  test("body validation answers GitHub's 422s; a read-only human may not edit someone else's comment", async () => {
    const fake = await start()
    const post = (body: unknown) =>
      fetch(`${fake.url}/repos/acme/widgets/issues/7/comments`, {
        method: "POST",
        headers: { authorization: `token ${fake.tokens.alice}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (response): Promise<[number, any]> => [response.status, await response.json()])
    const docsUrl = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
    expect(await post({})).toEqual([
      422,
      { message: 'Invalid request.\n\n"body" wasn\'t supplied.', documentation_url: docsUrl, status: "422" },
    ])
    expect(await post({ body: "" })).toEqual([
      422,
      {
        message: "Validation Failed",
        errors: [{ resource: "IssueComment", code: "unprocessable", field: "data", message: "Body cannot be blank" }],
        documentation_url: docsUrl,
        status: "422",
      },
    ])
    expect((await post({ body: "🌈".repeat(65536) }))[0]).toBe(201)
    const tooLong = await post({ body: `${"🌈".repeat(65536)}a` })
    expect(tooLong[1].errors[0].message).toBe("Body is too long (maximum is 65536 characters)")

    const alices = await client(fake, "alice").rest.issues.createComment({ ...issue, body: "mine" })
    const refused = await httpError(
      client(fake, "bob").rest.issues.updateComment({ ...inRepo, comment_id: alices.data.id, body: "hijack" }),
    )
    expect(refused.status).toBe(403)
    const bobs = await client(fake, "bob").rest.issues.createComment({ ...issue, body: "bob's" })
    await client(fake, "bob").rest.issues.updateComment({ ...inRepo, comment_id: bobs.data.id, body: "bob's, edited" })
    expect(fake.state.issueComments.map((comment) => comment.body)).toEqual([
      "🌈".repeat(65536),
      "mine",
      "bob's, edited",
    ])
  })
})

describe("reviews and review comments", () => {
  test("a review's comments on both sides, context lines and a range are stored as threads", async () => {
    const fake = await start()
    const api = client(fake)
    const { data, status } = await api.rest.pulls.createReview({
      ...at,
      commit_id: featureSha,
      event: "COMMENT",
      body: "Summary",
      comments: [
        { path: "src/app.ts", line: 5, side: "RIGHT", body: "added line" },
        { path: "src/app.ts", line: 5, side: "LEFT", body: "deleted line" },
        { path: "src/app.ts", line: 3, body: "context line, RIGHT by default" },
        { path: "src/app.ts", start_line: 25, start_side: "RIGHT", line: 26, side: "RIGHT", body: "a range" },
        { path: "docs/new.md", line: 12, body: "renamed file, new path" },
      ],
    })
    expect(status).toBe(200)
    expect(data).toMatchObject({
      state: "COMMENTED",
      body: "Summary",
      commit_id: featureSha,
      user: { login: "github-actions[bot]" },
    })
    expect(data.submitted_at).toEqual(expect.any(String))

    const comments = await api.paginate(api.rest.pulls.listReviewComments, { ...at, per_page: 2 })
    expect(comments.map((comment) => [comment.body, comment.side, comment.line, comment.start_line])).toEqual([
      ["added line", "RIGHT", 5, null],
      ["deleted line", "LEFT", 5, null],
      ["context line, RIGHT by default", "RIGHT", 3, null],
      ["a range", "RIGHT", 26, 25],
      ["renamed file, new path", "RIGHT", 12, null],
    ])
    expect(comments[0]).toMatchObject({ pull_request_review_id: data.id, commit_id: featureSha, original_line: 5 })
    expect(comments[0]!.diff_hunk).toBe(
      "@@ -2,7 +2,7 @@ export const v1 = 1\n export const v2 = 2\n export const v3 = 3\n export const v4 = 4\n-export const v5 = 5\n+export const v5 = 500",
    )
    expect(await allThreads(fake)).toHaveLength(5)
  })

  test("a comment outside the diff fails the whole review with GitHub's 422, and nothing is stored", async () => {
    const fake = await start()
    const api = client(fake)
    const review = (
      comments: { path: string; line: number; side?: "LEFT" | "RIGHT"; start_line?: number; body: string }[],
    ) => httpError(api.rest.pulls.createReview({ ...at, commit_id: featureSha, event: "COMMENT", body: "x", comments }))
    const outside = await review([
      { path: "src/app.ts", line: 5, body: "fine" },
      { path: "src/app.ts", line: 15, body: "line 15 is in no hunk" },
    ])
    expect(outside.status).toBe(422)
    expect(outside.response.data).toEqual({
      message: "Unprocessable Entity",
      errors: ["Line could not be resolved"],
      status: "422",
    })
    expect(outside.message).toBe('Unprocessable Entity: "Line could not be resolved"')
    // an added file has no LEFT side at all
    expect(
      (await review([{ path: "src/new.ts", line: 1, side: "LEFT", body: "LEFT of an added file" }])).response.data
        .errors,
    ).toEqual(["Line could not be resolved"])
    expect((await review([{ path: "src/nope.ts", line: 1, body: "x" }])).response.data.errors).toEqual([
      "Path could not be resolved",
    ])
    expect(
      (await review([{ path: "src/app.ts", start_line: 26, line: 25, body: "backwards" }])).response.data.errors,
    ).toEqual(["Pull request review thread start line must precede the end line."])
    expect(fake.state.reviews).toHaveLength(0)
    expect(fake.state.reviewComments).toHaveLength(0)

    const legacy = await start({ lineErrors: "legacy" })
    const old = await httpError(
      client(legacy).rest.pulls.createReview({
        ...at,
        event: "COMMENT",
        body: "x",
        comments: [{ path: "src/app.ts", line: 15, body: "x" }],
      }),
    )
    expect(old.response.data.errors).toEqual([
      "Pull request review thread line must be part of the diff and Pull request review thread diff hunk can't be blank",
    ])
  })

  test("self-approval, self-request-changes and an Actions approval are refused as GitHub refuses them", async () => {
    const fake = await start()
    const ownApproval = await httpError(
      client(fake, "reviewer-app[bot]").rest.pulls.createReview({ ...at, pull_number: 8, event: "APPROVE" }),
    )
    expect(ownApproval.response.data).toEqual({
      message: "Unprocessable Entity",
      errors: ["Review Can not approve your own pull request"],
      status: "422",
    })
    const ownChanges = await httpError(
      client(fake, "alice").rest.pulls.createReview({ ...at, event: "REQUEST_CHANGES", body: "no" }),
    )
    expect(ownChanges.response.data.errors).toEqual(["Review Can not request changes on your own pull request"])
    const actions = await httpError(client(fake).rest.pulls.createReview({ ...at, event: "APPROVE" }))
    expect(actions.response.data.errors).toEqual(["GitHub Actions is not permitted to approve pull requests."])
    const approved = await client(fake, "reviewer-app[bot]").rest.pulls.createReview({ ...at, event: "APPROVE" })
    expect(approved.data.state).toBe("APPROVED")

    const allowed = await start({
      repos: [
        {
          owner: "acme",
          name: "widgets",
          actionsCanApprove: true,
          pulls: [{ number: 7, author: "alice", diff: forkDiff }],
        },
      ],
    })
    expect((await client(allowed).rest.pulls.createReview({ ...at, event: "APPROVE" })).data.state).toBe("APPROVED")
  })

  test("without an event the review is PENDING: no submitted_at, its comments hidden from everyone else", async () => {
    const fake = await start()
    const pending = await client(fake).rest.pulls.createReview({
      ...at,
      comments: [{ path: "src/new.ts", line: 1, body: "draft" }],
    })
    expect(pending.data.state).toBe("PENDING")
    expect("submitted_at" in pending.data).toBe(false)
    expect(
      await client(fake)
        .rest.pulls.listReviewComments(at)
        .then((response) => response.data),
    ).toEqual([])
    expect((await client(fake).rest.pulls.listReviews(at)).data.map((review) => review.state)).toEqual(["PENDING"])
    expect((await client(fake, "alice").rest.pulls.listReviews(at)).data).toEqual([])
    expect(await allThreads(fake, "alice")).toEqual([])
    const second = await httpError(client(fake).rest.pulls.createReview(at))
    expect(second.response.data.errors[0].message).toBe("User can only have one pending review per pull request")
  })

  test("replies join the thread of the first comment; an unknown parent is 404", async () => {
    const fake = await start()
    const api = client(fake)
    const comment = await api.rest.pulls.createReviewComment({
      ...at,
      commit_id: featureSha,
      path: "src/new.ts",
      line: 2,
      body: "root",
    })
    expect(comment.status).toBe(201)
    const reply = await client(fake, "alice").rest.pulls.createReplyForReviewComment({
      ...at,
      comment_id: comment.data.id,
      body: "fixed",
    })
    expect(reply.status).toBe(201)
    expect(reply.data).toMatchObject({
      in_reply_to_id: comment.data.id,
      path: "src/new.ts",
      line: 2,
      user: { login: "alice" },
    })
    const again = await api.rest.pulls.createReplyForReviewComment({ ...at, comment_id: reply.data.id, body: "thanks" })
    expect(again.data.in_reply_to_id).toBe(comment.data.id)
    // GitHub wraps each single comment and each reply in a COMMENTED review of its own
    expect((await api.rest.pulls.listReviews(at)).data.map((review) => [review.user?.login, review.state])).toEqual([
      ["github-actions[bot]", "COMMENTED"],
      ["alice", "COMMENTED"],
      ["github-actions[bot]", "COMMENTED"],
    ])
    const threads = await allThreads(fake)
    expect(threads).toHaveLength(1)
    expect(threads[0]!.comments.nodes.map((node) => [node.databaseId, node.author.login])).toEqual([
      [comment.data.id, "github-actions"],
      [reply.data.id, "alice"],
      [again.data.id, "github-actions"],
    ])
    const missing = await httpError(api.rest.pulls.createReplyForReviewComment({ ...at, comment_id: 999, body: "x" }))
    expect([missing.status, missing.response.data.message]).toEqual([404, "Parent comment not found"])

    const outside = await httpError(
      api.rest.pulls.createReviewComment({ ...at, commit_id: featureSha, path: "src/app.ts", line: 15, body: "x" }),
    )
    expect(outside.response.data).toMatchObject({
      message: "Validation Failed",
      errors: [
        {
          field: "pull_request_review_thread.line",
          message: "pull_request_review_thread.line must be part of the diff",
        },
        { code: "missing_field", field: "pull_request_review_thread.diff_hunk" },
      ],
    })
  })

  test("after a push a thread whose line changed is outdated (line null); one on an unchanged line follows", async () => {
    const fake = await start({
      repos: [{ owner: "acme", name: "widgets", pulls: [{ number: 7, author: "alice", diff: forkDiff }] }],
    })
    const api = client(fake)
    const firstHead = fake.head("acme/widgets", 7).headSha
    await api.rest.pulls.createReview({
      ...at,
      event: "COMMENT",
      body: "two threads",
      comments: [
        { path: "README.md", line: 2, body: "on the changed line" },
        { path: "README.md", line: 3, body: "on the context line" },
      ],
    })
    const next = fake.push("acme/widgets", 7, { diff: forkDiff.replace("+new line", "+newer line") })
    expect(next.headSha).not.toBe(firstHead)
    expect((await api.rest.pulls.get(at)).data.head.sha).toBe(next.headSha)
    const comments = await api.paginate(api.rest.pulls.listReviewComments, at)
    expect(comments.map((comment) => [comment.line, comment.original_line, comment.commit_id])).toEqual([
      [null, 2, firstHead],
      [3, 3, next.headSha],
    ])
    expect((await allThreads(fake)).map((thread) => [thread.isOutdated, thread.line])).toEqual([
      [true, null],
      [false, 3],
    ])
  })
})

describe("dismissing reviews", () => {
  const dismissDocs = "https://docs.github.com/rest/pulls/reviews#dismiss-a-review-for-a-pull-request"

  test("an approval or a change request is dismissed: 200 DISMISSED, body kept, still listed; a second dismissal is 422", async () => {
    const fake = await start()
    const changes = await client(fake, "reviewer-app[bot]").rest.pulls.createReview({
      ...at,
      event: "REQUEST_CHANGES",
      body: "Please fix the off-by-one",
    })
    const approval = await client(fake, "carol").rest.pulls.createReview({ ...at, event: "APPROVE" })

    const dismissed = await client(fake).rest.pulls.dismissReview({
      ...at,
      review_id: changes.data.id,
      message: "Fixed in the latest push",
      event: "DISMISS",
    })
    expect(dismissed.status).toBe(200)
    expect(dismissed.data).toMatchObject({
      id: changes.data.id,
      state: "DISMISSED",
      body: "Please fix the off-by-one",
      user: { login: "reviewer-app[bot]" },
      commit_id: featureSha,
      submitted_at: changes.data.submitted_at,
    })
    const sent = fake.requests({ method: "PUT" })[0]!
    expect(sent.path).toBe(`/repos/acme/widgets/pulls/7/reviews/${changes.data.id}/dismissals`)
    expect(sent.body).toEqual({ message: "Fixed in the latest push", event: "DISMISS" })
    // `event` is optional; the PR's author may dismiss too, having write access
    const second = await client(fake, "alice").rest.pulls.dismissReview({
      ...at,
      review_id: approval.data.id,
      message: "Stale approval",
    })
    expect(second.data.state).toBe("DISMISSED")

    const listed = await client(fake).rest.pulls.listReviews(at)
    expect(listed.data.map((review) => [review.id, review.state])).toEqual([
      [changes.data.id, "DISMISSED"],
      [approval.data.id, "DISMISSED"],
    ])
    expect(fake.state.reviews[0]!.dismissal).toMatchObject({
      message: "Fixed in the latest push",
      user: { login: "github-actions[bot]" },
    })

    const again = await httpError(
      client(fake).rest.pulls.dismissReview({ ...at, review_id: changes.data.id, message: "again" }),
    )
    expect(again.status).toBe(422)
    expect(again.response.data).toEqual({
      message: "Validation Failed",
      errors: ["Can not dismiss a dismissed pull request review"],
      documentation_url: dismissDocs,
      status: "422",
    })
    expect(again.message).toBe(`Validation Failed: "Can not dismiss a dismissed pull request review" - ${dismissDocs}`)
  })

  test("a commented or pending review cannot be dismissed (422); an unknown or hidden review is 404; read access is 403", async () => {
    const fake = await start()
    const commented = await client(fake, "reviewer-app[bot]").rest.pulls.createReview({
      ...at,
      event: "COMMENT",
      body: "Just a note",
    })
    const refused = await httpError(
      client(fake).rest.pulls.dismissReview({ ...at, review_id: commented.data.id, message: "x" }),
    )
    expect([refused.status, refused.response.data.errors]).toEqual([
      422,
      ["Can not dismiss a commented pull request review"],
    ])

    const pending = await client(fake).rest.pulls.createReview(at)
    expect(pending.data.state).toBe("PENDING")
    const own = await httpError(
      client(fake).rest.pulls.dismissReview({ ...at, review_id: pending.data.id, message: "x" }),
    )
    expect(own.response.data.errors).toEqual(["Can not dismiss a pending pull request review"])
    // someone else's pending review is invisible, so it is not found
    const hidden = await httpError(
      client(fake, "reviewer-app[bot]").rest.pulls.dismissReview({ ...at, review_id: pending.data.id, message: "x" }),
    )
    expect(hidden.status).toBe(404)

    const unknown = await httpError(client(fake).rest.pulls.dismissReview({ ...at, review_id: 424242, message: "x" }))
    expect(unknown.response.data).toEqual({ message: "Not Found", documentation_url: dismissDocs, status: "404" })
    // a review of another pull request is not found under this one
    const elsewhere = await httpError(
      client(fake).rest.pulls.dismissReview({ ...at, pull_number: 8, review_id: commented.data.id, message: "x" }),
    )
    expect(elsewhere.status).toBe(404)

    const changes = await client(fake, "reviewer-app[bot]").rest.pulls.createReview({
      ...at,
      event: "REQUEST_CHANGES",
      body: "no",
    })
    const readOnly = await httpError(
      client(fake, "readonly[bot]").rest.pulls.dismissReview({ ...at, review_id: changes.data.id, message: "x" }),
    )
    expect(readOnly.response.data).toEqual({
      message: "Resource not accessible by integration",
      documentation_url: dismissDocs,
      status: "403",
    })
    const reader = await httpError(
      client(fake, "bob").rest.pulls.dismissReview({ ...at, review_id: changes.data.id, message: "x" }),
    )
    expect(reader.status).toBe(403)
    expect(fake.state.reviews.find((review) => review.id === changes.data.id)!.state).toBe("CHANGES_REQUESTED")
  })

  test("the message is required and `event` may only be DISMISS, in GitHub's schema-validation wording", async () => {
    const fake = await start()
    const changes = await client(fake, "reviewer-app[bot]").rest.pulls.createReview({
      ...at,
      event: "REQUEST_CHANGES",
      body: "no",
    })
    const put = (body: unknown) =>
      fetch(`${fake.url}/repos/acme/widgets/pulls/7/reviews/${changes.data.id}/dismissals`, {
        method: "PUT",
        headers: { authorization: `token ${fake.tokens["github-actions[bot]"]}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (response): Promise<[number, any]> => [response.status, await response.json()])
    expect(await put({})).toEqual([
      422,
      { message: 'Invalid request.\n\n"message" wasn\'t supplied.', documentation_url: dismissDocs, status: "422" },
    ])
    expect((await put({ message: "x", event: "APPROVE" }))[1].message).toBe(
      `Invalid request.\n\nFor 'properties/event', "APPROVE" is not one of ["DISMISS"].`,
    )
    expect(fake.state.reviews[0]!.state).toBe("CHANGES_REQUESTED")
  })
})

describe("reactions and permissions", () => {
  test("reactions: 201 when created, 200 when it already exists, listed per comment; an unknown content is 422", async () => {
    const fake = await start()
    const api = client(fake)
    const comment = await api.rest.issues.createComment({ ...issue, body: "hello" })
    const first = await api.rest.reactions.createForIssueComment({
      ...inRepo,
      comment_id: comment.data.id,
      content: "eyes",
    })
    const again = await api.rest.reactions.createForIssueComment({
      ...inRepo,
      comment_id: comment.data.id,
      content: "eyes",
    })
    expect([first.status, again.status, again.data.id]).toEqual([201, 200, first.data.id])
    await client(fake, "alice").rest.reactions.createForIssueComment({
      ...inRepo,
      comment_id: comment.data.id,
      content: "+1",
    })
    const listed = await api.rest.reactions.listForIssueComment({ ...inRepo, comment_id: comment.data.id })
    expect(listed.data.map((reaction) => [reaction.user?.login, reaction.content])).toEqual([
      ["github-actions[bot]", "eyes"],
      ["alice", "+1"],
    ])
    expect((await api.rest.issues.getComment({ ...inRepo, comment_id: comment.data.id })).data.reactions).toMatchObject(
      {
        total_count: 2,
        eyes: 1,
        "+1": 1,
      },
    )
    const review = await api.rest.pulls.createReviewComment({
      ...at,
      commit_id: featureSha,
      path: "src/new.ts",
      line: 1,
      body: "r",
    })
    await client(fake, "alice").rest.reactions.createForPullRequestReviewComment({
      ...inRepo,
      comment_id: review.data.id,
      content: "rocket",
    })
    const onReview = await api.rest.reactions.listForPullRequestReviewComment({ ...inRepo, comment_id: review.data.id })
    expect(onReview.data.map((reaction) => reaction.content)).toEqual(["rocket"])
    const bad = await httpError(
      api.rest.reactions.createForIssueComment({ ...inRepo, comment_id: comment.data.id, content: "gloubi" as "eyes" }),
    )
    expect(bad.status).toBe(422)
  })

  test("collaborator permission: legacy base role in `permission`, the role in `role_name`; unknown users 404", async () => {
    const fake = await start()
    const api = client(fake)
    const permission = async (username: string) =>
      (await api.rest.repos.getCollaboratorPermissionLevel({ owner: "acme", repo: "widgets", username })).data
    expect(await permission("alice")).toMatchObject({
      permission: "admin",
      role_name: "admin",
      user: { login: "alice" },
    })
    expect(await permission("bob")).toMatchObject({ permission: "read", role_name: "read" })
    expect(await permission("carol")).toMatchObject({ permission: "write", role_name: "maintain" })
    expect(await permission("mallory")).toMatchObject({ permission: "none" })
    expect(await permission("github-actions[bot]")).toMatchObject({ permission: "write", user: { type: "Bot" } })
    expect(
      (
        await httpError(
          api.rest.repos.getCollaboratorPermissionLevel({ owner: "acme", repo: "widgets", username: "nobody" }),
        )
      ).status,
    ).toBe(404)
  })
})

describe("GraphQL", () => {
  test("reviewThreads page by cursor; resolve and unresolve; errors come as HTTP 200 with `errors`", async () => {
    const fake = await start()
    await client(fake).rest.pulls.createReview({
      ...at,
      event: "COMMENT",
      body: "x",
      comments: [
        { path: "src/new.ts", line: 1, body: "one" },
        { path: "src/new.ts", line: 2, body: "two" },
      ],
    })
    const threads = await allThreads(fake)
    expect(threads.map((thread) => [thread.path, thread.line, thread.diffSide, thread.isResolved])).toEqual([
      ["src/new.ts", 1, "RIGHT", false],
      ["src/new.ts", 2, "RIGHT", false],
    ])
    expect(fake.requests({ path: "/graphql" })).toHaveLength(2)
    expect(threads[0]!.comments.nodes[0]!.databaseId).toBe(fake.state.reviewComments[0]!.id)

    const resolve = `mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id isResolved resolvedBy { login } } } }`
    const resolved = await gql(fake)<{
      resolveReviewThread: { thread: { isResolved: boolean; resolvedBy: { login: string } } }
    }>(resolve, {
      id: threads[0]!.id,
    })
    expect(resolved.resolveReviewThread.thread).toMatchObject({
      isResolved: true,
      resolvedBy: { login: "github-actions" },
    })
    expect(fake.state.threads[0]!.isResolved).toBe(true)
    await gql(fake)(
      `mutation($id: ID!) { unresolveReviewThread(input: { threadId: $id }) { thread { isResolved } } }`,
      {
        id: threads[0]!.id,
      },
    )
    expect(fake.state.threads[0]!.isResolved).toBe(false)

    const unknown = await graphqlError(gql(fake)(resolve, { id: "PRRT_kwDOnope" }))
    expect(unknown.errors).toEqual([
      {
        type: "NOT_FOUND",
        path: ["resolveReviewThread"],
        locations: [{ line: 1, column: 22 }],
        message: "Could not resolve to a node with the global id of 'PRRT_kwDOnope'",
      },
    ])
    expect(unknown.data).toEqual({ resolveReviewThread: null })
    const forbidden = await graphqlError(gql(fake, "bob")(resolve, { id: threads[0]!.id }))
    expect(forbidden.errors[0]).toMatchObject({
      type: "FORBIDDEN",
      message: "bob does not have the correct permissions to execute `ResolveReviewThread`",
    })

    const missingRepo = await graphqlError(
      gql(fake, "mallory")(`{ repository(owner: "acme", name: "widgets") { id } }`),
    )
    expect(missingRepo.errors[0]).toMatchObject({
      type: "NOT_FOUND",
      path: ["repository"],
      message: "Could not resolve to a Repository with the name 'acme/widgets'.",
    })
    const tooMany = await graphqlError(
      gql(fake)(
        `{ repository(owner: "acme", name: "widgets") { pullRequest(number: 7) { reviewThreads(first: 101) { totalCount } } } }`,
      ),
    )
    expect(tooMany.errors[0]).toMatchObject({
      type: "EXCESSIVE_PAGINATION",
      message: "Requesting 101 records on the `reviewThreads` connection exceeds the `first` limit of 100 records.",
    })
    const typo = await graphqlError(gql(fake)(`{ repository(owner: "acme", name: "widgets") { pullRequests { id } } }`))
    expect(typo.errors[0]).toMatchObject({
      path: ["query", "repository", "pullRequests"],
      extensions: { code: "undefinedField", typeName: "Repository", fieldName: "pullRequests" },
      message: "Field 'pullRequests' doesn't exist on type 'Repository'",
    })
  })

  test("an Actions token that may not resolve threads gets FORBIDDEN 'Resource not accessible by integration'", async () => {
    const fake = await start({ actors: [{ login: "github-actions[bot]", resolveThreads: false }] })
    await client(fake).rest.pulls.createReviewComment({
      ...at,
      commit_id: featureSha,
      path: "src/new.ts",
      line: 1,
      body: "x",
    })
    const error = await graphqlError(
      gql(fake)(`mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id } } }`, {
        id: fake.state.threads[0]!.nodeId,
      }),
    )
    expect(error.errors[0]).toMatchObject({ type: "FORBIDDEN", message: "Resource not accessible by integration" })
    expect(fake.state.threads[0]!.isResolved).toBe(false)
  })
})

describe("rate limits and faults", () => {
  test("every API response carries x-ratelimit-*, counted per actor and resource", async () => {
    const fake = await start()
    const api = client(fake)
    const one = await api.rest.pulls.get(at)
    const two = await api.rest.pulls.get(at)
    expect(one.headers).toMatchObject({
      "x-ratelimit-limit": "1000",
      "x-ratelimit-remaining": "999",
      "x-ratelimit-used": "1",
      "x-ratelimit-resource": "core",
    })
    expect(two.headers["x-ratelimit-remaining"]).toBe("998")
    expect(Number(one.headers["x-ratelimit-reset"])).toBeGreaterThan(Date.now() / 1000)
    expect((await client(fake, "alice").rest.pulls.get(at)).headers["x-ratelimit-limit"]).toBe("5000")
    const graph = await fetch(`${fake.url}/graphql`, {
      method: "POST",
      headers: { authorization: `bearer ${fake.tokens["github-actions[bot]"]}` },
      body: JSON.stringify({ query: "{ rateLimit { remaining } }" }),
    })
    expect(graph.headers.get("x-ratelimit-resource")).toBe("graphql")
    expect(await graph.json()).toEqual({ data: { rateLimit: { remaining: 999 } } })
  })

  test("an exhausted primary limit: REST 403/429 with remaining 0; GraphQL HTTP 200 with RATE_LIMITED", async () => {
    const fake = await start()
    fake.exhaustRateLimit("github-actions[bot]")
    const limited = await httpError(client(fake).rest.pulls.get(at))
    expect(limited.status).toBe(403)
    expect(limited.response.headers["x-ratelimit-remaining"]).toBe("0")
    expect(limited.response.data).toEqual({
      message: "API rate limit exceeded for installation ID 41898282.",
      documentation_url: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
      status: "403",
    })
    fake.exhaustRateLimit("alice", { status: 429 })
    const user = await httpError(client(fake, "alice").rest.pulls.get(at))
    expect([user.status, user.response.data.message]).toEqual([
      429,
      `API rate limit exceeded for user ID ${fake.state.users.find((u) => u.login === "alice")!.id}.`,
    ])
    fake.exhaustRateLimit("github-actions[bot]", { resource: "graphql" })
    const graphqlLimited = await graphqlError(gql(fake)(`{ rateLimit { remaining } }`))
    expect(graphqlLimited.errors[0]).toMatchObject({ type: "RATE_LIMITED" })
    fake.resetRateLimit()
    expect((await client(fake).rest.pulls.get(at)).status).toBe(200)
  })

  test("a secondary limit: 403 with retry-after and GitHub's message; octokit does not retry it", async () => {
    const fake = await start()
    fake.secondaryRateLimit({ method: "POST", path: /\/issues\/7\/comments$/ }, { retryAfter: 30 })
    const error = await httpError(client(fake).rest.issues.createComment({ ...issue, body: "x" }))
    expect(error.status).toBe(403)
    expect(error.response.headers["retry-after"]).toBe("30")
    expect(error.response.data.message).toBe(
      `You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID ${error.response.headers["x-github-request-id"]}.`,
    )
    expect(error.response.data.documentation_url).toBe(
      "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
    )
    expect(fake.requests().map((request) => [request.status, request.injected])).toEqual([
      [403, "secondary-rate-limit"],
    ])
    expect(fake.state.issueComments).toHaveLength(0)
  })

  test("a 502 before the request is processed stores nothing; a 502 after store leaves the write in the world", async () => {
    const fake = await start()
    const api = client(fake)
    fake.failNext({ method: "POST", path: /\/comments$/ }, { status: 502 })
    const before = await httpError(api.rest.issues.createComment({ ...issue, body: "first try" }))
    expect([before.status, before.response.data]).toEqual([502, { message: "Server Error" }])
    expect(before.response.headers["x-ratelimit-limit"]).toBeUndefined()
    expect(fake.state.issueComments).toHaveLength(0)

    fake.failNext({ method: "POST", path: /\/comments$/ }, { status: 502, afterStore: true })
    const after = await httpError(api.rest.issues.createComment({ ...issue, body: "landed" }))
    expect(after.status).toBe(502)
    const listed = await api.rest.issues.listComments(issue)
    expect(listed.data.map((comment) => comment.body)).toEqual(["landed"])
    expect(fake.requests().map((request) => [request.method, request.status, request.injected ?? null])).toEqual([
      ["POST", 502, "502"],
      ["POST", 502, "502-after-store"],
      ["GET", 200, null],
    ])
    expect(fake.requests({ method: "POST" })[1]!.body).toEqual({ body: "landed" })

    fake.failNext({ method: "GET", path: "/repos/acme/widgets/pulls/7" }, { status: 503 }, 2)
    expect((await httpError(api.rest.pulls.get(at))).status).toBe(503)
    expect((await httpError(api.rest.pulls.get(at))).status).toBe(503)
    expect((await api.rest.pulls.get(at)).status).toBe(200)
    expect(fake.state.fakeErrors).toEqual([])
  })
})

describe("repository contents and trees", () => {
  const settings = '{ "reviewers": ["security"] }\n'
  const bigSize = 1_048_577
  let layoutSha: string

  // A branch of its own, so the pull requests above keep their diffs: nested directories, a
  // symlink to a file and one to a directory, a submodule (a gitlink with .gitmodules) and a file
  // just over 1 MiB.
  beforeAll(async () => {
    repo.git("checkout", "-q", "-b", "layout", "main")
    await repo.write({
      "config/settings.json": settings,
      "config/nested/deep.txt": "deep\n",
      "config/read me.md": "a name with a space\n",
      "assets/big.bin": new Uint8Array(bigSize).fill(120),
      ".gitmodules": '[submodule "lib"]\n\tpath = vendor/lib\n\turl = https://example.test/acme/lib.git\n',
    })
    symlinkSync("settings.json", join(repo.dir, "config/link-to-settings.json"))
    symlinkSync("nested", join(repo.dir, "config/link-to-dir"))
    repo.git("add", "-A")
    repo.git("update-index", "--add", "--cacheinfo", `160000,${mergeBase},vendor/lib`)
    repo.git("commit", "-q", "-m", "layout")
    layoutSha = repo.git("rev-parse", "HEAD").trim()
    repo.git("checkout", "-q", "main")
  })

  const blobSha = (spec: string) => repo.git("rev-parse", spec).trim()
  const decoded = (data: unknown) => Buffer.from((data as { content: string }).content, "base64").toString("utf8")

  test("a file is read at the pull request's base branch, not its head; a ref may be a branch, a sha or short sha", async () => {
    const fake = await start()
    const api = client(fake)
    const { data: pull } = await api.rest.pulls.get(at)
    const base = await api.rest.repos.getContent({ ...inRepo, path: "src/app.ts", ref: pull.base.ref })
    const head = await api.rest.repos.getContent({ ...inRepo, path: "src/app.ts", ref: pull.head.ref })
    const sha = blobSha("main:src/app.ts")
    expect(base.data).toEqual({
      name: "app.ts",
      path: "src/app.ts",
      sha,
      size: lines(30).length,
      url: `${fake.url}/repos/acme/widgets/contents/src/app.ts?ref=main`,
      html_url: "https://github.com/acme/widgets/blob/main/src/app.ts",
      git_url: `${fake.url}/repos/acme/widgets/git/blobs/${sha}`,
      download_url: "https://raw.githubusercontent.com/acme/widgets/main/src/app.ts",
      type: "file",
      content: expect.any(String),
      encoding: "base64",
      _links: {
        self: `${fake.url}/repos/acme/widgets/contents/src/app.ts?ref=main`,
        git: `${fake.url}/repos/acme/widgets/git/blobs/${sha}`,
        html: "https://github.com/acme/widgets/blob/main/src/app.ts",
      },
    })
    expect(decoded(base.data)).toBe(lines(30))
    expect(decoded(head.data)).toContain("export const v5 = 500")
    expect(decoded(head.data)).not.toBe(decoded(base.data))
    // GitHub's base64: a newline after every 60 characters and after the last line.
    const content = (base.data as { content: string }).content
    const wrapped = content.split("\n")
    expect(wrapped.pop()).toBe("")
    expect(wrapped.slice(0, -1).every((line) => line.length === 60)).toBe(true)
    expect(wrapped.at(-1)!.length).toBeLessThanOrEqual(60)
    // octokit sends the path's slash encoded (src%2Fapp.ts); a raw slash reaches the same file.
    expect(fake.requests({ path: /contents/ })[0]!.path).toBe("/repos/acme/widgets/contents/src%2Fapp.ts")
    const raw = await fetch(`${fake.url}/repos/acme/widgets/contents/src/app.ts?ref=feature`, {
      headers: { authorization: `token ${fake.tokens["github-actions[bot]"]}` },
    })
    expect(decoded(await raw.json())).toBe(decoded(head.data))

    for (const ref of [mainSha, mainSha.slice(0, 7), undefined]) {
      const { data } = await api.rest.repos.getContent({ ...inRepo, path: "src/app.ts", ...(ref ? { ref } : {}) })
      expect((data as { sha: string }).sha).toBe(sha)
    }
    expect(base.headers["x-ratelimit-resource"]).toBe("core")
  })

  test("a directory lists its entries: files, directories, symlinks without target, a submodule as a file", async () => {
    const fake = await start()
    const api = client(fake)
    const { data } = await api.rest.repos.getContent({ ...inRepo, path: "config", ref: "layout" })
    expect(Array.isArray(data)).toBe(true)
    const entries = data as unknown as Record<string, unknown>[]
    expect(entries.map((entry) => [entry.name, entry.type, entry.size])).toEqual([
      ["link-to-dir", "symlink", "nested".length],
      ["link-to-settings.json", "symlink", "settings.json".length],
      ["nested", "dir", 0],
      ["read me.md", "file", "a name with a space\n".length],
      ["settings.json", "file", settings.length],
    ])
    expect(entries.every((entry) => !("content" in entry) && !("target" in entry))).toBe(true)
    const nested = entries[2]!
    expect(nested).toMatchObject({
      path: "config/nested",
      sha: blobSha("layout:config/nested"),
      html_url: "https://github.com/acme/widgets/tree/layout/config/nested",
      git_url: `${fake.url}/repos/acme/widgets/git/trees/${blobSha("layout:config/nested")}`,
      download_url: null,
    })
    expect(entries[3]!.url).toBe(`${fake.url}/repos/acme/widgets/contents/config/read%20me.md?ref=layout`)

    const root = await api.rest.repos.getContent({ ...inRepo, path: "", ref: "layout" })
    expect((root.data as unknown as { name: string }[]).map((entry) => entry.name)).toEqual([
      ".gitmodules",
      "README.md",
      "assets",
      "config",
      "docs",
      "lib",
      "src",
      "vendor",
    ])
    // "When listing the contents of a directory, submodules have their type specified as file."
    const vendor = await api.rest.repos.getContent({ ...inRepo, path: "vendor", ref: "layout" })
    expect(vendor.data).toEqual([
      expect.objectContaining({ name: "lib", type: "file", sha: mergeBase, size: 0, download_url: null }),
    ])
    const submodule = await api.rest.repos.getContent({ ...inRepo, path: "vendor/lib", ref: "layout" })
    expect(submodule.data).toMatchObject({
      type: "submodule",
      sha: mergeBase,
      submodule_git_url: "https://example.test/acme/lib.git",
      git_url: null,
      html_url: null,
    })
  })

  test("a missing path is 404 Not Found and a ref that names no commit is 404 'No commit found for the ref'", async () => {
    const fake = await start()
    const api = client(fake)
    const missing = await httpError(api.rest.repos.getContent({ ...inRepo, path: "no/such/file.md", ref: "main" }))
    expect(missing.status).toBe(404)
    expect(missing.message).toBe("Not Found - https://docs.github.com/rest/repos/contents#get-repository-content")
    expect(missing.response.data).toEqual({
      message: "Not Found",
      documentation_url: "https://docs.github.com/rest/repos/contents#get-repository-content",
      status: "404",
    })
    // A file the head adds is not on the base branch.
    expect((await httpError(api.rest.repos.getContent({ ...inRepo, path: "src/new.ts", ref: "main" }))).status).toBe(
      404,
    )
    for (const ref of ["no-such-branch", "main~1", "0000000"]) {
      const unknown = await httpError(api.rest.repos.getContent({ ...inRepo, path: "README.md", ref }))
      expect(unknown.status).toBe(404)
      expect(unknown.response.data).toEqual({
        message: `No commit found for the ref ${ref}`,
        documentation_url: "https://docs.github.com/v3/repos/contents/",
        status: "404",
      })
    }
    const hidden = await httpError(
      client(fake, "mallory").rest.repos.getContent({ ...inRepo, path: "README.md", ref: "main" }),
    )
    expect([hidden.status, hidden.response.data.documentation_url]).toEqual([
      404,
      "https://docs.github.com/rest/repos/contents#get-repository-content",
    ])
    const anonymous = new Octokit({ baseUrl: fake.url, log })
    expect((await httpError(anonymous.rest.git.getTree({ ...inRepo, tree_sha: "main" }))).status).toBe(404)
    expect(fake.state.fakeErrors).toEqual([])
  })

  test("a symlink to a file answers as that file under the link's name; one to a directory answers as the symlink", async () => {
    const fake = await start()
    const api = client(fake)
    const linked = await api.rest.repos.getContent({ ...inRepo, path: "config/link-to-settings.json", ref: "layout" })
    expect(linked.data).toMatchObject({
      type: "file",
      name: "link-to-settings.json",
      path: "config/link-to-settings.json",
      sha: blobSha("layout:config/settings.json"),
      size: settings.length,
      encoding: "base64",
    })
    expect(decoded(linked.data)).toBe(settings)
    const toDir = await api.rest.repos.getContent({ ...inRepo, path: "config/link-to-dir", ref: "layout" })
    expect(toDir.data).toMatchObject({
      type: "symlink",
      target: "nested",
      size: "nested".length,
      sha: blobSha("layout:config/link-to-dir"),
      download_url: "https://raw.githubusercontent.com/acme/widgets/layout/config/link-to-dir",
    })
    expect(toDir.data).not.toHaveProperty("content")
  })

  test("a file over 1 MiB comes back with encoding none and empty content", async () => {
    const fake = await start()
    const { data } = await client(fake).rest.repos.getContent({ ...inRepo, path: "assets/big.bin", ref: "layout" })
    expect(data).toMatchObject({ type: "file", size: bigSize, encoding: "none", content: "" })
    expect((data as { download_url: string }).download_url).toBe(
      "https://raw.githubusercontent.com/acme/widgets/layout/assets/big.bin",
    )
  })

  test("getTree with recursive lists every blob and tree, a symlink as a 120000 blob and a submodule as a 160000 commit", async () => {
    const fake = await start()
    const api = client(fake)
    const { data } = await api.rest.git.getTree({ ...inRepo, tree_sha: "layout", recursive: "1" })
    const tree = blobSha("layout^{tree}")
    expect([data.sha, data.url, data.truncated]).toEqual([
      tree,
      `${fake.url}/repos/acme/widgets/git/trees/${tree}`,
      false,
    ])
    expect(data.tree.map((entry) => entry.path)).toEqual(
      repo.git("ls-tree", "-r", "-t", "--name-only", "layout").trim().split("\n"),
    )
    const byPath = new Map(data.tree.map((entry) => [entry.path, entry]))
    const link = blobSha("layout:config/link-to-settings.json")
    expect(byPath.get("config/link-to-settings.json")).toEqual({
      path: "config/link-to-settings.json",
      mode: "120000",
      type: "blob",
      sha: link,
      size: "settings.json".length,
      url: `${fake.url}/repos/acme/widgets/git/blobs/${link}`,
    })
    expect(byPath.get("config/nested")).toEqual({
      path: "config/nested",
      mode: "040000",
      type: "tree",
      sha: blobSha("layout:config/nested"),
      url: `${fake.url}/repos/acme/widgets/git/trees/${blobSha("layout:config/nested")}`,
    })
    expect(byPath.get("vendor/lib")).toEqual({ path: "vendor/lib", mode: "160000", type: "commit", sha: mergeBase })
    expect(byPath.get("assets/big.bin")).toMatchObject({ mode: "100644", type: "blob", size: bigSize })

    // Without `recursive` one level; a commit sha and the tree's own sha name the same tree.
    const top = await api.rest.git.getTree({ ...inRepo, tree_sha: layoutSha })
    expect(top.data.tree.map((entry) => entry.path)).toEqual([
      ".gitmodules",
      "README.md",
      "assets",
      "config",
      "docs",
      "lib",
      "src",
      "vendor",
    ])
    expect((await api.rest.git.getTree({ ...inRepo, tree_sha: tree })).data.tree).toEqual(top.data.tree)
    // "Setting this parameter to any value returns the objects or subtrees": 0 recurses too.
    const zero = await api.rest.git.getTree({ ...inRepo, tree_sha: "layout", recursive: "0" })
    expect(zero.data.tree).toHaveLength(data.tree.length)
  })

  test("getTree of an unknown ref or sha, or of a blob, is 404 Not Found; past maxTreeEntries it is truncated", async () => {
    const fake = await start({ maxTreeEntries: 3 })
    const api = client(fake)
    for (const tree_sha of ["no-such-branch", "0".repeat(40), blobSha("main:README.md"), "main^{tree}"]) {
      const error = await httpError(api.rest.git.getTree({ ...inRepo, tree_sha }))
      expect([error.status, error.response.data]).toEqual([
        404,
        { message: "Not Found", documentation_url: "https://docs.github.com/rest/git/trees#get-a-tree", status: "404" },
      ])
    }
    const { data } = await api.rest.git.getTree({ ...inRepo, tree_sha: "layout", recursive: "1" })
    expect([data.truncated, data.tree.length]).toEqual([true, 3])
    expect((await api.rest.git.getTree({ ...inRepo, tree_sha: "layout" })).data.truncated).toBe(false)
  })

  test("a pull request without a diff reads it from the repository's dir; a repository without dir fails loudly", async () => {
    const fake = await start({
      repos: [
        { owner: "acme", name: "widgets", dir: repo.dir, pulls: [{ number: 9, author: "alice" }] },
        { owner: "acme", name: "tools", private: false },
      ],
    })
    const api = client(fake)
    const { data } = await api.rest.pulls.get({ ...inRepo, pull_number: 9 })
    expect([data.base.sha, data.head.sha]).toEqual([mainSha, featureSha])
    const files = await api.rest.pulls.listFiles({ ...inRepo, pull_number: 9 })
    expect(files.data.map((file) => file.filename).sort()).toEqual(
      repo.git("diff", "--name-only", "--find-renames=30%", mergeBase, "feature").trim().split("\n").sort(),
    )
    const failed = await httpError(api.rest.repos.getContent({ owner: "acme", repo: "tools", path: "README.md" }))
    expect(failed.status).toBe(500)
    expect(fake.state.fakeErrors).toEqual([expect.stringContaining("acme/tools has no `dir`")])
  })
})
