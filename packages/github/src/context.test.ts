import { readFileSync } from "node:fs"
import { graphql } from "@octokit/graphql"
import { describe, expect, test } from "vitest"
import {
  type Environment,
  graphqlUrlFor,
  isBot,
  isForkPullRequest,
  isGithubActionsPullRequest,
  readGithubContext,
} from "./context"
import { GithubContextError } from "./errors"

// The fixtures in __fixtures__/events are modelled on GitHub's webhook payloads as octokit/webhooks
// describes them (payload-schemas/api.github.com and payload-examples/api.github.com): the same
// fields and nesting, with extra fields the reader must ignore, and our own names and numbers.
const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/events/${name}`, import.meta.url), "utf8")

const token = "ghs_0123456789abcdefSECRETSECRETSECRET0000"

function run(eventName: string, file: string, extra: Environment = {}): Environment {
  return {
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_NAME: eventName,
    GITHUB_EVENT_PATH: `/home/runner/work/_temp/_github_workflow/${file}`,
    GITHUB_REPOSITORY: "octo-org/billing-service",
    GITHUB_API_URL: "https://api.github.com",
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_GRAPHQL_URL: "https://api.github.com/graphql",
    GITHUB_RUN_ID: "1658821493",
    GITHUB_SHA: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e",
    GITHUB_TOKEN: token,
    ...extra,
  }
}

/** Reads fixtures by the file name at the end of GITHUB_EVENT_PATH. */
const readFixture = (path: string) => fixture(path.split("/").at(-1)!)

function caught(action: () => unknown): GithubContextError {
  try {
    action()
  } catch (error) {
    expect(error).toBeInstanceOf(GithubContextError)
    return error as GithubContextError
  }
  throw new Error("expected a GithubContextError")
}

describe("readGithubContext: events", () => {
  test("pull_request from a branch of the same repository", () => {
    const context = readGithubContext(run("pull_request", "pull_request.opened.json"), readFixture)
    expect(context).toEqual({
      apiUrl: "https://api.github.com",
      graphqlUrl: "https://api.github.com/graphql",
      serverUrl: "https://github.com",
      owner: "octo-org",
      repo: "billing-service",
      eventName: "pull_request",
      action: "opened",
      number: 42,
      pullRequest: {
        number: 42,
        draft: false,
        author: { login: "alice-member", type: "User" },
        authorAssociation: "MEMBER",
        head: {
          sha: "ec26c3e57ca3a959ca5aad62de7213c562f8c821",
          ref: "fix/rounding",
          repoFullName: "octo-org/billing-service",
          repoId: 700100200,
        },
        base: {
          sha: "6dcb09b5b57875f334f61aebed695e2e4193db5e",
          ref: "main",
          repoFullName: "octo-org/billing-service",
          repoId: 700100200,
        },
      },
      comment: null,
      isFork: false,
      isBotComment: false,
      readOnlyToken: false,
      token,
      tokenVariable: "GITHUB_TOKEN",
      runId: "1658821493",
      sha: "f95f852bd8fca8fcc58a9a2d6c842781e32a215e",
    })
  })

  test("pull_request from a fork: a draft, a first-time contributor, and a read-only token", () => {
    const context = readGithubContext(run("pull_request", "pull_request.synchronize.fork.json"), readFixture)
    expect(context.action).toBe("synchronize")
    expect(context.number).toBe(57)
    expect(context.pullRequest).toMatchObject({
      draft: true,
      authorAssociation: "FIRST_TIME_CONTRIBUTOR",
      author: { login: "jdoe-dev", type: "User" },
      head: { ref: "main", repoFullName: "jdoe-dev/billing-service", repoId: 700100999 },
      base: { ref: "main", repoFullName: "octo-org/billing-service" },
    })
    expect(context.isFork).toBe(true)
    expect(context.readOnlyToken).toBe(true)
    // The pull request's owner is the base repository, also for forks.
    expect({ owner: context.owner, repo: context.repo }).toEqual({ owner: "octo-org", repo: "billing-service" })
  })

  test("a fork's pull_request with an explicit token, or a Dependabot run, is judged by the token's source", () => {
    const explicit = run("pull_request", "pull_request.synchronize.fork.json", {
      OPENCODE_REVIEWER_GITHUB_TOKEN: "ghs_app",
    })
    expect(readGithubContext(explicit, readFixture).readOnlyToken).toBe(false)
    const dependabot = run("pull_request_target", "pull_request.opened.json", { GITHUB_ACTOR: "dependabot[bot]" })
    expect(readGithubContext(dependabot, readFixture).readOnlyToken).toBe(true)
  })

  test("pull_request_target carries the same payload; its token is not read-only", () => {
    const context = readGithubContext(run("pull_request_target", "pull_request_target.opened.fork.json"), readFixture)
    expect(context.eventName).toBe("pull_request_target")
    expect(context.isFork).toBe(true)
    expect(context.readOnlyToken).toBe(false)
    expect(context.pullRequest?.head.sha).toBe("ec26c3e57ca3a959ca5aad62de7213c562f8c821")
  })

  test("issue_comment on a pull request: the number and the comment, the head left to fetch", () => {
    const context = readGithubContext(run("issue_comment", "issue_comment.created.pull_request.json"), readFixture)
    expect(context).toMatchObject({
      eventName: "issue_comment",
      action: "created",
      number: 42,
      pullRequest: null,
      isFork: null,
      isBotComment: false,
      readOnlyToken: false,
      comment: {
        id: 2089001122,
        body: "/review please look at the rounding again",
        author: { login: "bob-collab", type: "User" },
        authorAssociation: "COLLABORATOR",
        kind: "conversation",
        path: null,
        inReplyToId: null,
      },
    })
  })

  test("issue_comment by a bot is flagged", () => {
    const context = readGithubContext(run("issue_comment", "issue_comment.created.bot.json"), readFixture)
    expect(context.comment?.author).toEqual({ login: "github-actions[bot]", type: "Bot" })
    expect(context.isBotComment).toBe(true)
  })

  test("issue_comment on a plain issue is refused with what to do", () => {
    const error = caught(() => readGithubContext(run("issue_comment", "issue_comment.created.issue.json"), readFixture))
    expect(error.message).toBe(
      "the issue_comment event is for issue #77, not a pull request: the review runs only on pull request comments",
    )
    expect(error.data.hint).toBe("guard the job with `if: github.event.issue.pull_request`")
  })

  test("pull_request_review_comment: the pull request (no draft field) and the diff comment", () => {
    const context = readGithubContext(
      run("pull_request_review_comment", "pull_request_review_comment.created.json"),
      readFixture,
    )
    expect(context.number).toBe(42)
    expect(context.pullRequest?.draft).toBeNull()
    expect(context.pullRequest?.head.sha).toBe("ec26c3e57ca3a959ca5aad62de7213c562f8c821")
    expect(context.isFork).toBe(false)
    expect(context.comment).toEqual({
      id: 1900112233,
      body: "@opencode-reviewer is this still wrong for negative totals?",
      author: { login: "bob-collab", type: "User" },
      authorAssociation: "COLLABORATOR",
      kind: "review",
      path: "src/invoice.ts",
      inReplyToId: 1900110000,
    })
  })

  test("an explicit OPENCODE_REVIEWER_GITHUB_TOKEN (a GitHub App token) wins over GITHUB_TOKEN", () => {
    const env = run("pull_request", "pull_request.opened.json", { OPENCODE_REVIEWER_GITHUB_TOKEN: "ghs_app" })
    expect(readGithubContext(env, readFixture)).toMatchObject({
      token: "ghs_app",
      tokenVariable: "OPENCODE_REVIEWER_GITHUB_TOKEN",
    })
  })

  test("without GITHUB_REPOSITORY the payload's repository is used, as @actions/github does", () => {
    const env = run("pull_request", "pull_request.opened.json", { GITHUB_REPOSITORY: undefined })
    expect(readGithubContext(env, readFixture)).toMatchObject({ owner: "octo-org", repo: "billing-service" })
  })
})

describe("readGithubContext: URLs", () => {
  const ghes = { GITHUB_SERVER_URL: "https://ghe.example", GITHUB_GRAPHQL_URL: undefined }

  test("GitHub Enterprise Server: REST at /api/v3, GraphQL at /api/graphql", () => {
    const env = run("pull_request", "pull_request.opened.json", {
      ...ghes,
      GITHUB_API_URL: "https://ghe.example/api/v3/",
    })
    expect(readGithubContext(env, readFixture)).toMatchObject({
      apiUrl: "https://ghe.example/api/v3",
      graphqlUrl: "https://ghe.example/api/graphql",
      serverUrl: "https://ghe.example",
    })
    const serverOnly = run("pull_request", "pull_request.opened.json", { ...ghes, GITHUB_API_URL: undefined })
    expect(readGithubContext(serverOnly, readFixture)).toMatchObject({
      apiUrl: "https://ghe.example/api/v3",
      graphqlUrl: "https://ghe.example/api/graphql",
    })
  })

  test("GITHUB_GRAPHQL_URL, when set, is taken as is", () => {
    const env = run("pull_request", "pull_request.opened.json", {
      ...ghes,
      GITHUB_API_URL: "https://ghe.example/api/v3",
      GITHUB_GRAPHQL_URL: "https://ghe.example/api/graphql/",
    })
    expect(readGithubContext(env, readFixture).graphqlUrl).toBe("https://ghe.example/api/graphql")
  })

  test("GitHub.com and GHE.com defaults", () => {
    const bare = run("pull_request", "pull_request.opened.json", {
      GITHUB_API_URL: undefined,
      GITHUB_SERVER_URL: undefined,
      GITHUB_GRAPHQL_URL: undefined,
    })
    expect(readGithubContext(bare, readFixture)).toMatchObject({
      apiUrl: "https://api.github.com",
      graphqlUrl: "https://api.github.com/graphql",
      serverUrl: "https://github.com",
    })
    const residency = run("pull_request", "pull_request.opened.json", {
      GITHUB_API_URL: undefined,
      GITHUB_SERVER_URL: "https://octocorp.ghe.com",
      GITHUB_GRAPHQL_URL: undefined,
    })
    expect(readGithubContext(residency, readFixture)).toMatchObject({
      apiUrl: "https://api.octocorp.ghe.com",
      graphqlUrl: "https://api.octocorp.ghe.com/graphql",
    })
  })

  test("graphqlUrlFor agrees with where @octokit/graphql itself sends a query", async () => {
    for (const baseUrl of ["https://api.github.com", "https://ghe.example/api/v3", "https://api.octocorp.ghe.com"]) {
      const urls: string[] = []
      const fetch = async (url: string | URL | Request) => {
        urls.push(String(url))
        return Response.json({ data: { viewer: { login: "x" } } })
      }
      await graphql("query { viewer { login } }", { baseUrl, request: { fetch } })
      expect(urls).toEqual([graphqlUrlFor(baseUrl)])
    }
  })

  test("a URL that is not http(s) is named", () => {
    const env = run("pull_request", "pull_request.opened.json", { GITHUB_API_URL: "api.github.com" })
    expect(caught(() => readGithubContext(env, readFixture)).message).toBe(
      'GITHUB_API_URL is not an http(s) URL: "api.github.com"',
    )
  })
})

describe("readGithubContext: missing or invalid input", () => {
  test("each problem has its own message, and the token never appears in one", () => {
    const cases: [Environment, ((path: string) => string) | undefined, string][] = [
      [
        { ...run("pull_request", "x.json"), GITHUB_EVENT_NAME: undefined, GITHUB_ACTIONS: undefined },
        undefined,
        "not a GitHub Actions run: GITHUB_EVENT_NAME is not set (nor GITHUB_ACTIONS=true)",
      ],
      [
        run("push", "x.json"),
        undefined,
        'GitHub event "push" is not supported: the review runs on pull_request, pull_request_target, issue_comment, pull_request_review_comment',
      ],
      [
        run("pull_request", "x.json", { GITHUB_EVENT_PATH: "" }),
        undefined,
        "cannot read the event: GITHUB_EVENT_PATH is not set",
      ],
      [
        run("pull_request", "missing.json"),
        () => {
          throw new Error("ENOENT: no such file or directory")
        },
        "cannot read the event payload GITHUB_EVENT_PATH=/home/runner/work/_temp/_github_workflow/missing.json: ENOENT: no such file or directory",
      ],
      [
        run("pull_request", "broken.json"),
        () => "{ not json",
        "the event payload GITHUB_EVENT_PATH=/home/runner/work/_temp/_github_workflow/broken.json is not JSON: JSON Parse error: Expected '}'",
      ],
      [
        run("pull_request", "empty.json"),
        () => "{}",
        "the pull_request event payload (GITHUB_EVENT_PATH) is not what GitHub sends: pull_request: Invalid input: expected object, received undefined",
      ],
      [
        run("pull_request", "no-head-sha.json"),
        () => {
          const payload = JSON.parse(fixture("pull_request.opened.json"))
          delete payload.pull_request.head.sha
          return JSON.stringify(payload)
        },
        "the pull_request event payload (GITHUB_EVENT_PATH) is not what GitHub sends: pull_request.head.sha: Invalid input: expected string, received undefined",
      ],
      [
        run("pull_request", "pull_request.opened.json", { GITHUB_REPOSITORY: "billing-service" }),
        readFixture,
        'GITHUB_REPOSITORY is not owner/repo: "billing-service"',
      ],
      [
        run("pull_request", "pull_request.opened.json", { GITHUB_TOKEN: " " }),
        readFixture,
        "no GitHub token: neither OPENCODE_REVIEWER_GITHUB_TOKEN nor GITHUB_TOKEN is set; pass a token to the review " +
          "step: `env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` (GitHub creates the token for every job but does not " +
          "put it in the environment) with `permissions: contents: read` and `pull-requests: write`; or set " +
          "OPENCODE_REVIEWER_GITHUB_TOKEN to a GitHub App installation token (comments then come from the app)",
      ],
    ]
    for (const [env, read, message] of cases) {
      const error = caught(() => readGithubContext(env, read ?? readFixture))
      expect(error.message).toBe(message)
      expect(JSON.stringify(error)).not.toContain(token)
      expect(error.data.hint.length).toBeGreaterThan(0)
    }
  })

  test("the missing variables are listed in the error's data", () => {
    const env = run("pull_request", "pull_request.opened.json", { GITHUB_TOKEN: undefined })
    expect(caught(() => readGithubContext(env, readFixture)).data.missing).toEqual([
      "OPENCODE_REVIEWER_GITHUB_TOKEN",
      "GITHUB_TOKEN",
    ])
  })
})

describe("isGithubActionsPullRequest", () => {
  test("true for the supported events in GitHub Actions, false otherwise", () => {
    for (const event of ["pull_request", "pull_request_target", "issue_comment", "pull_request_review_comment"]) {
      expect(isGithubActionsPullRequest({ GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: event })).toBe(true)
    }
    expect(isGithubActionsPullRequest({ GITHUB_ACTIONS: "true", GITHUB_EVENT_NAME: "push" })).toBe(false)
    expect(isGithubActionsPullRequest({ GITHUB_EVENT_NAME: "pull_request" })).toBe(false)
    expect(isGithubActionsPullRequest({ CI_MERGE_REQUEST_IID: "7", CI_SERVER_URL: "https://gitlab.example.com" })).toBe(
      false,
    )
  })
})

describe("fork and bot detection", () => {
  const side = (repoFullName: string | null, repoId: number | null) => ({ repoFullName, repoId })

  test("repository ids decide when both are known (a renamed repository is not a fork)", () => {
    expect(
      isForkPullRequest({ head: side("octo-org/old-name", 1), base: { repoFullName: "octo-org/new", repoId: 1 } }),
    ).toBe(false)
    expect(
      isForkPullRequest({ head: side("octo-org/app", 2), base: { repoFullName: "octo-org/app", repoId: 1 } }),
    ).toBe(true)
  })

  test("without ids the full names are compared case-insensitively; a deleted head repository is a fork", () => {
    expect(
      isForkPullRequest({ head: side("Octo-Org/App", null), base: { repoFullName: "octo-org/app", repoId: 1 } }),
    ).toBe(false)
    expect(
      isForkPullRequest({ head: side("someone/app", null), base: { repoFullName: "octo-org/app", repoId: null } }),
    ).toBe(true)
    expect(isForkPullRequest({ head: side(null, null), base: { repoFullName: "octo-org/app", repoId: 1 } })).toBe(true)
  })

  test("a bot is a Bot-type user or an app login", () => {
    expect(isBot({ login: "renovate[bot]", type: "User" })).toBe(true)
    expect(isBot({ login: "octocoders-linter", type: "Bot" })).toBe(true)
    expect(isBot({ login: "robot-fan", type: "User" })).toBe(false)
  })
})
