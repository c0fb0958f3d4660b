import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createTempRepo, type GithubFake, startGithubFake, type TempRepo } from "@opencode-reviewer/testkit"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { createGithubProvider } from "./github-provider"

// The GitHub provider's reads through the fake and @octokit/rest: trusted files from the base,
// never the head; the change's own text from the head; who may start a run from a comment.

let repo: TempRepo
let fake: GithubFake
let scratch: string
let head = ""

beforeEach(async () => {
  repo = await createTempRepo()
  await repo.write({
    "opencode-reviewer.json": '{ "failOn": "minor_issues" }\n',
    "docs/standards/ENG-001.md": "# base standard\n",
    "src/a.ts": "export const a = 1\n",
  })
  await symlink("ENG-001.md", join(repo.dir, "docs/standards/link.md"))
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({
    "opencode-reviewer.json": '{ "failOn": "approved" }\n',
    "docs/standards/ENG-002.md": "# head standard\n",
    "src/a.ts": "export const a = 2\n",
  })
  head = repo.commit("feature")
  fake = await startGithubFake({
    repos: [
      {
        owner: "acme",
        name: "widgets",
        dir: repo.dir,
        pulls: [{ number: 7, author: "alice", baseRef: "main", headRef: "feature" }],
      },
    ],
    actors: [{ login: "github-actions[bot]" }, { login: "mallory", permission: "read" }],
  })
  scratch = await mkdtemp(join(tmpdir(), "ocr-github-provider-"))
})

afterEach(async () => {
  await fake.close()
  await repo.remove()
  await rm(scratch, { recursive: true, force: true })
})

async function provider(eventName: string, payload: object) {
  const eventPath = join(scratch, "event.json")
  await writeFile(eventPath, JSON.stringify(payload))
  return createGithubProvider({
    env: {
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_NAME: eventName,
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_REPOSITORY: "acme/widgets",
      GITHUB_API_URL: fake.url,
      GITHUB_TOKEN: fake.tokens["github-actions[bot]"],
    },
    sleep: async () => {},
  })
}

const repository = { id: 100001, full_name: "acme/widgets" }
const pullRequestEvent = () => {
  const version = fake.head("acme/widgets", 7)
  return {
    action: "opened",
    pull_request: {
      number: 7,
      user: { login: "alice", type: "User" },
      author_association: "MEMBER",
      head: { sha: version.headSha, ref: "feature", repo: repository },
      base: { sha: version.baseSha, ref: "main", repo: repository },
    },
    repository,
  }
}
const commentEvent = (login: string, body: string, type = "User") => ({
  action: "created",
  issue: { number: 7, pull_request: { url: "x" } },
  comment: { id: 555, body, user: { login, type }, author_association: "NONE" },
  repository,
})

describe("github provider reads", () => {
  test("configuration and standards come from the base, the change's files from the head", async () => {
    const github = await provider("pull_request", pullRequestEvent())
    const change = await github.readChange()
    expect(change.mergeRequest.headSha).toBe(head)
    expect(await github.readTrustedFile("opencode-reviewer.json")).toBe('{ "failOn": "minor_issues" }\n')
    expect(await github.readTrustedFile("./docs/standards/ENG-002.md")).toBeNull()
    // The symlink is left out: its text is a path, never a document.
    expect(await github.listTrustedFiles!("docs/standards")).toEqual(["docs/standards/ENG-001.md"])
    expect(await github.listTrustedFiles!("nowhere")).toBeNull()
    expect(await change.readHeadFile!("opencode-reviewer.json")).toBe('{ "failOn": "approved" }\n')
    expect(new TextDecoder().decode(change.diff)).toContain("+export const a = 2")
  })

  test("a pull_request run is not a request; a comment is one only from someone with write access", async () => {
    expect(await (await provider("pull_request", pullRequestEvent())).readRequest!()).toBeNull()
    expect(await (await provider("issue_comment", commentEvent("alice", "/review full"))).readRequest!()).toEqual({
      run: true,
      request: { kind: "full", by: "alice", body: "/review full" },
    })
    const outsider = await (await provider("issue_comment", commentEvent("mallory", "/review"))).readRequest!()
    expect(outsider).toEqual({ run: false, reason: expect.stringContaining("mallory has read access") })
    const bot = await (await provider("issue_comment", commentEvent("renovate[bot]", "/review", "Bot"))).readRequest!()
    expect(bot).toEqual({ run: false, reason: expect.stringContaining("is a bot") })
    // Only what GitHub says counts: the payload's author_association was NONE for alice too.
    expect(fake.requests({ path: /\/collaborators\/.*\/permission$/ }).map((request) => request.path)).toEqual([
      "/repos/acme/widgets/collaborators/alice/permission",
      "/repos/acme/widgets/collaborators/mallory/permission",
    ])
  })

  test("a token GitHub refuses is said with what to do, not as an internal error", async () => {
    const eventPath = join(scratch, "event.json")
    await writeFile(eventPath, JSON.stringify(pullRequestEvent()))
    const github = createGithubProvider({
      env: {
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_NAME: "pull_request",
        GITHUB_EVENT_PATH: eventPath,
        GITHUB_REPOSITORY: "acme/widgets",
        GITHUB_API_URL: fake.url,
        GITHUB_TOKEN: "ghs_not_a_token",
      },
    })
    await expect(github.readChange()).rejects.toMatchObject({
      name: "GithubAccessError",
      data: { status: 401, hint: expect.stringContaining("GITHUB_TOKEN is not a valid token") },
    })
  })
})
