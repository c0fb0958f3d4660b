import { readFileSync } from "node:fs"
import * as z from "zod"
import { GithubContextError } from "./errors"

// Where each fact comes from (the same tags as docs/gitlab.md):
// [docs] GitHub's documentation (github/docs): "Variables reference" (content/actions/reference/
//   workflows-and-actions/variables.md), "Events that trigger workflows", "GITHUB_TOKEN" and
//   "GITHUB_TOKEN reference", and data/variables/product.yml for the GHES URLs.
// [webhooks] octokit/webhooks' payload schemas and examples (payload-schemas/api.github.com/…,
//   payload-examples/api.github.com/…), the machine-readable form of GitHub's webhook payloads.
// [toolkit] actions/toolkit packages/github/src/context.ts (@actions/github 9.1.1), which reads the
//   same variables for every JavaScript action.
// [octokit] @octokit/graphql 9.0.5 dist-src/graphql.js.

/** The environment the provider reads; the CLI passes its own `process.env`. */
export type Environment = Record<string, string | undefined>

/** Reads the event payload file; the default reads it from disk as UTF-8. */
export type ReadFile = (path: string) => string

/** The events the review runs on. */
export const supportedGithubEvents = [
  "pull_request",
  "pull_request_target",
  "issue_comment",
  "pull_request_review_comment",
] as const

export type GithubEventName = (typeof supportedGithubEvents)[number]

/** The environment variable that holds an explicitly provided token (a GitHub App installation token); it wins over GITHUB_TOKEN. */
export const explicitTokenVariable = "OPENCODE_REVIEWER_GITHUB_TOKEN"

/** A user as the payload names them. `type` is `User`, `Bot` or `Organization` [webhooks common/user.schema.json]. */
export interface GithubActor {
  login: string
  type: string
}

/** One side of the pull request as the event payload had it when the event fired. */
export interface GithubPullRequestSide {
  sha: string
  ref: string
  /** `owner/repo`; null for a head whose fork was deleted (`head.repo` is nullable [webhooks common/pull-request.schema.json]). */
  repoFullName: string | null
  repoId: number | null
}

/** The pull request from a `pull_request`, `pull_request_target` or `pull_request_review_comment` payload. */
export interface GithubPullRequestEvent {
  number: number
  /** Null when the payload lacks it: `draft` is optional in `pull_request_review_comment` payloads [webhooks]. */
  draft: boolean | null
  author: GithubActor
  /** `OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, `FIRST_TIME_CONTRIBUTOR`, `FIRST_TIMER`, `MANNEQUIN`, `NONE` [webhooks common/author_association.schema.json]. */
  authorAssociation: string
  head: GithubPullRequestSide
  base: GithubPullRequestSide & { repoFullName: string }
}

/** The comment of an `issue_comment` (on a pull request) or `pull_request_review_comment` event. Its body is untrusted text. */
export interface GithubCommentEvent {
  id: number
  body: string
  author: GithubActor
  authorAssociation: string
  /** `conversation`: a comment on the pull request's conversation (issue_comment); `review`: a comment on the diff. */
  kind: "conversation" | "review"
  /** The file a review comment is on; null for conversation comments. */
  path: string | null
  /** The review comment this one answers; null for a thread's first comment and for conversation comments. */
  inReplyToId: number | null
}

/** Where the pull request lives, what triggered the run, and how to talk to GitHub. Never logged whole: it holds the token. */
export interface GithubContext {
  /** REST base without a trailing slash: `https://api.github.com`, or `https://HOST/api/v3` on GitHub Enterprise Server. */
  apiUrl: string
  /** `https://api.github.com/graphql`, or `https://HOST/api/graphql` on GitHub Enterprise Server. */
  graphqlUrl: string
  /** `https://github.com` or the GHES instance URL. */
  serverUrl: string
  /** The workflow's repository, which owns the pull request (`GITHUB_REPOSITORY`): the base, also for fork pull requests. */
  owner: string
  repo: string
  eventName: GithubEventName
  /** The payload's `action` (`opened`, `synchronize`, `created`, …), when it has one. */
  action: string | null
  /** The pull request's number. */
  number: number
  /**
   * The pull request as the payload described it; null for `issue_comment`, whose payload has only
   * the issue: the provider fetches the pull request (head sha, repos) through the API.
   */
  pullRequest: GithubPullRequestEvent | null
  comment: GithubCommentEvent | null
  /** Head repository ≠ base repository; null when the payload does not say (issue_comment). */
  isFork: boolean | null
  /** The triggering comment was written by a bot (user type `Bot`, or a login ending in `[bot]`); false without a comment. */
  isBotComment: boolean
  /**
   * The token is GITHUB_TOKEN and GitHub made it read-only, so the review can read but not post: a
   * `pull_request` run for a fork's pull request [docs GITHUB_TOKEN reference: write scopes become
   * read unless the repository sends write tokens to fork workflows], or a run Dependabot triggered
   * (`GITHUB_ACTOR=dependabot[bot]`; such runs "run as if they are from a forked repository" and get
   * no secrets [docs reusables/actions/workflow-runs-dependabot-note]). `pull_request_target` runs
   * from forks get a read/write token [docs].
   */
  readOnlyToken: boolean
  /** The review bot's token. */
  token: string
  /** Which variable the token came from. */
  tokenVariable: typeof explicitTokenVariable | "GITHUB_TOKEN"
  /** `GITHUB_RUN_ID`, for links to the run. */
  runId: string | null
  /**
   * `GITHUB_SHA`: for `pull_request` the merge commit of `refs/pull/N/merge`, for
   * `pull_request_target` the base branch's commit, for comment events the default branch's [docs];
   * never the pull request's head, so not for positions.
   */
  sha: string | null
}

const defaultApiUrl = "https://api.github.com"
const defaultServerUrl = "https://github.com"

// GITHUB_TOKEN is a secret GitHub creates per job, also `github.token` [docs GITHUB_TOKEN]; it is not
// among the default environment variables [docs Variables reference]. That `pull-requests: write`
// suffices for comments on a pull request (issues.createComment included) is [reports]
// (ynab/ynab-sdk-ruby#95), not checked against GitHub's permission tables.
const tokenHint =
  "pass a token to the review step: `env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` (GitHub creates the token " +
  "for every job but does not put it in the environment) with `permissions: contents: read` and " +
  "`pull-requests: write`; or set " +
  explicitTokenVariable +
  " to a GitHub App installation token (comments then come from the app)"

const eventsHint =
  "run the review on: pull_request, pull_request_target, issue_comment (on a pull request) or pull_request_review_comment"

/**
 * True when the environment is a GitHub Actions run of an event the review supports (`--vcs auto`
 * picks github then). Reads variables only: an `issue_comment` on a plain issue also answers true,
 * and `readGithubContext` then explains it.
 */
export function isGithubActionsPullRequest(env: Environment): boolean {
  const name = present(env.GITHUB_EVENT_NAME)
  return env.GITHUB_ACTIONS === "true" && name !== null && isSupported(name)
}

/**
 * Reads the GitHub Actions context: the variables GitHub sets for every step [docs] and the event
 * payload at GITHUB_EVENT_PATH [docs]. Throws GithubContextError, naming what is missing, outside a
 * supported event, for a malformed payload, or without a token. The token never enters a message.
 */
export function readGithubContext(env: Environment, readFile: ReadFile = readUtf8): GithubContext {
  const eventName = present(env.GITHUB_EVENT_NAME)
  if (eventName === null) {
    throw new GithubContextError(
      "not a GitHub Actions run: GITHUB_EVENT_NAME is not set" +
        (env.GITHUB_ACTIONS === "true" ? "" : " (nor GITHUB_ACTIONS=true)"),
      { missing: ["GITHUB_EVENT_NAME"], hint: eventsHint },
    )
  }
  if (!isSupported(eventName)) {
    throw new GithubContextError(
      `GitHub event "${eventName}" is not supported: the review runs on ${supportedGithubEvents.join(", ")}`,
      { missing: [], hint: eventsHint },
    )
  }

  const payload = readPayload(env, readFile)
  const { owner, repo } = readRepository(env, payload)
  const urls = readUrls(env)
  const { token, tokenVariable } = readToken(env)
  const event = readEvent(eventName, payload)
  const isFork = event.pullRequest ? isForkPullRequest(event.pullRequest) : null

  return {
    ...urls,
    owner,
    repo,
    eventName,
    action: event.action,
    number: event.number,
    pullRequest: event.pullRequest,
    comment: event.comment,
    isFork,
    isBotComment: event.comment !== null && isBot(event.comment.author),
    readOnlyToken:
      tokenVariable === "GITHUB_TOKEN" &&
      ((eventName === "pull_request" && isFork === true) || present(env.GITHUB_ACTOR) === "dependabot[bot]"),
    token,
    tokenVariable,
    runId: present(env.GITHUB_RUN_ID),
    sha: present(env.GITHUB_SHA),
  }
}

/**
 * A pull request from another repository than its base: the head repository's id (or, without ids,
 * its case-insensitive full name) differs, or the head repository was deleted.
 */
export function isForkPullRequest(pullRequest: {
  head: { repoFullName: string | null; repoId: number | null }
  base: { repoFullName: string; repoId: number | null }
}): boolean {
  const { head, base } = pullRequest
  if (head.repoFullName === null) return true
  if (head.repoId !== null && base.repoId !== null) return head.repoId !== base.repoId
  return head.repoFullName.toLowerCase() !== base.repoFullName.toLowerCase()
}

/** A bot account: user type `Bot` [webhooks], or an app's login (`github-actions[bot]`, `renovate[bot]`). */
export function isBot(user: GithubActor): boolean {
  return user.type === "Bot" || user.login.endsWith("[bot]")
}

/**
 * The GraphQL endpoint for a REST base: GHES serves REST at `/api/v3` and GraphQL at `/api/graphql`
 * [docs product.yml]; GitHub.com and GHE.com (`https://api.SUBDOMAIN.ghe.com`) serve it at
 * `<api>/graphql`. @octokit/graphql derives it the same way (`/\/api\/v3\/?$/` → `/api/graphql`) [octokit].
 */
export function graphqlUrlFor(apiUrl: string): string {
  const api = trimSlash(apiUrl)
  return /\/api\/v3$/.test(api) ? api.replace(/\/api\/v3$/, "/api/graphql") : `${api}/graphql`
}

// --- payload --------------------------------------------------------------------------------

const actor = z.object({ login: z.string().min(1), type: z.string() })
const repository = z.object({ id: z.number().int().optional(), full_name: z.string().min(1) })

const pullRequestSchema = z.object({
  number: z.number().int().positive(),
  draft: z.boolean().optional(),
  user: actor,
  author_association: z.string(),
  head: z.object({ sha: z.string().min(1), ref: z.string(), repo: repository.nullable() }),
  base: z.object({ sha: z.string().min(1), ref: z.string(), repo: repository }),
})

const pullRequestPayload = z.object({ action: z.string().optional(), pull_request: pullRequestSchema })

const issueCommentPayload = z.object({
  action: z.string().optional(),
  issue: z.object({
    number: z.number().int().positive(),
    // Present (an object of URLs) only when the issue is a pull request [docs issue_comment, webhooks].
    pull_request: z.object({}).nullish(),
  }),
  comment: z.object({
    id: z.number().int(),
    body: z.string().nullish(),
    user: actor,
    author_association: z.string(),
  }),
})

const reviewCommentPayload = z.object({
  action: z.string().optional(),
  pull_request: pullRequestSchema,
  comment: z.object({
    id: z.number().int(),
    body: z.string().nullish(),
    user: actor,
    author_association: z.string(),
    path: z.string(),
    in_reply_to_id: z.number().int().nullish(),
  }),
})

interface ParsedEvent {
  action: string | null
  number: number
  pullRequest: GithubPullRequestEvent | null
  comment: GithubCommentEvent | null
}

function readEvent(eventName: GithubEventName, payload: unknown): ParsedEvent {
  switch (eventName) {
    case "pull_request":
    case "pull_request_target": {
      // Both carry the `pull_request` webhook payload [docs Events that trigger workflows].
      const parsed = parse(pullRequestPayload, payload, eventName)
      const pullRequest = toPullRequest(parsed.pull_request)
      return { action: parsed.action ?? null, number: pullRequest.number, pullRequest, comment: null }
    }
    case "issue_comment": {
      const parsed = parse(issueCommentPayload, payload, eventName)
      if (!parsed.issue.pull_request) {
        throw new GithubContextError(
          `the issue_comment event is for issue #${parsed.issue.number}, not a pull request: the review runs only on pull request comments`,
          { missing: ["issue.pull_request"], hint: "guard the job with `if: github.event.issue.pull_request`" },
        )
      }
      const comment = parsed.comment
      return {
        action: parsed.action ?? null,
        number: parsed.issue.number,
        pullRequest: null,
        comment: {
          id: comment.id,
          body: comment.body ?? "",
          author: { login: comment.user.login, type: comment.user.type },
          authorAssociation: comment.author_association,
          kind: "conversation",
          path: null,
          inReplyToId: null,
        },
      }
    }
    case "pull_request_review_comment": {
      const parsed = parse(reviewCommentPayload, payload, eventName)
      const pullRequest = toPullRequest(parsed.pull_request)
      const comment = parsed.comment
      return {
        action: parsed.action ?? null,
        number: pullRequest.number,
        pullRequest,
        comment: {
          id: comment.id,
          body: comment.body ?? "",
          author: { login: comment.user.login, type: comment.user.type },
          authorAssociation: comment.author_association,
          kind: "review",
          path: comment.path,
          inReplyToId: comment.in_reply_to_id ?? null,
        },
      }
    }
  }
}

function toPullRequest(pr: z.infer<typeof pullRequestSchema>): GithubPullRequestEvent {
  return {
    number: pr.number,
    draft: pr.draft ?? null,
    author: { login: pr.user.login, type: pr.user.type },
    authorAssociation: pr.author_association,
    head: {
      sha: pr.head.sha,
      ref: pr.head.ref,
      repoFullName: pr.head.repo?.full_name ?? null,
      repoId: pr.head.repo?.id ?? null,
    },
    base: { sha: pr.base.sha, ref: pr.base.ref, repoFullName: pr.base.repo.full_name, repoId: pr.base.repo.id ?? null },
  }
}

function parse<T>(schema: z.ZodType<T>, payload: unknown, eventName: string): T {
  const result = schema.safeParse(payload)
  if (result.success) return result.data
  const issues = result.error.issues.slice(0, 5).map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
  throw new GithubContextError(
    `the ${eventName} event payload (GITHUB_EVENT_PATH) is not what GitHub sends: ${issues.join("; ")}`,
    { missing: [], hint: "GITHUB_EVENT_PATH must be the event file GitHub Actions writes for the run" },
  )
}

function readPayload(env: Environment, readFile: ReadFile): unknown {
  const path = present(env.GITHUB_EVENT_PATH)
  if (path === null) {
    throw new GithubContextError("cannot read the event: GITHUB_EVENT_PATH is not set", {
      missing: ["GITHUB_EVENT_PATH"],
      hint: "GitHub Actions sets GITHUB_EVENT_PATH to the event payload file; outside Actions, point it at one",
    })
  }
  let text: string
  try {
    text = readFile(path)
  } catch (error) {
    throw new GithubContextError(
      `cannot read the event payload GITHUB_EVENT_PATH=${path}: ${error instanceof Error ? error.message : String(error)}`,
      { missing: ["GITHUB_EVENT_PATH"], hint: "GITHUB_EVENT_PATH must name a readable JSON file" },
      error,
    )
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new GithubContextError(
      `the event payload GITHUB_EVENT_PATH=${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
      { missing: [], hint: "GITHUB_EVENT_PATH must name the JSON event file GitHub Actions writes" },
      error,
    )
  }
}

function readRepository(env: Environment, payload: unknown): { owner: string; repo: string } {
  const fromEnv = present(env.GITHUB_REPOSITORY)
  // @actions/github falls back to payload.repository when GITHUB_REPOSITORY is unset [toolkit].
  const fromPayload = z.object({ repository: repository }).safeParse(payload)
  const fullName = fromEnv ?? (fromPayload.success ? fromPayload.data.repository.full_name : null)
  if (fullName === null) {
    throw new GithubContextError("cannot tell the repository: GITHUB_REPOSITORY is not set", {
      missing: ["GITHUB_REPOSITORY"],
      hint: "GITHUB_REPOSITORY must be owner/repo, e.g. octocat/Hello-World",
    })
  }
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(fullName)
  if (!match) {
    throw new GithubContextError(`GITHUB_REPOSITORY is not owner/repo: ${JSON.stringify(fullName)}`, {
      missing: ["GITHUB_REPOSITORY"],
      hint: "GITHUB_REPOSITORY must be owner/repo, e.g. octocat/Hello-World",
    })
  }
  return { owner: match[1]!, repo: match[2]! }
}

function readUrls(env: Environment): { apiUrl: string; graphqlUrl: string; serverUrl: string } {
  const server = httpUrl(env, "GITHUB_SERVER_URL")
  const api = httpUrl(env, "GITHUB_API_URL")
  const graphql = httpUrl(env, "GITHUB_GRAPHQL_URL")
  const serverUrl = server ?? defaultServerUrl
  // GitHub sets all three for every step [docs]; without GITHUB_API_URL, the server's conventional
  // API host: api.github.com for github.com (as @actions/github defaults [toolkit]), api.SUB.ghe.com
  // for GHE.com, /api/v3 on a GHES host [docs product.yml].
  const apiUrl = api ?? apiUrlFor(serverUrl)
  return { apiUrl, graphqlUrl: graphql ?? graphqlUrlFor(apiUrl), serverUrl }
}

function apiUrlFor(serverUrl: string): string {
  const url = new URL(serverUrl)
  if (url.hostname === "github.com") return defaultApiUrl
  if (url.hostname.endsWith(".ghe.com")) return `${url.protocol}//api.${url.host}`
  return `${trimSlash(serverUrl)}/api/v3`
}

function httpUrl(env: Environment, name: string): string | null {
  const value = present(env[name])
  if (value === null) return null
  let protocol = ""
  try {
    protocol = new URL(value).protocol
  } catch {
    // not a URL at all: reported below
  }
  if (protocol !== "https:" && protocol !== "http:") {
    throw new GithubContextError(`${name} is not an http(s) URL: ${JSON.stringify(value)}`, {
      missing: [name],
      hint: `${name} must be a URL such as ${name === "GITHUB_SERVER_URL" ? defaultServerUrl : defaultApiUrl}`,
    })
  }
  return trimSlash(value)
}

function readToken(env: Environment): { token: string; tokenVariable: GithubContext["tokenVariable"] } {
  const explicit = present(env[explicitTokenVariable])
  if (explicit !== null) return { token: explicit, tokenVariable: explicitTokenVariable }
  const workflow = present(env.GITHUB_TOKEN)
  if (workflow !== null) return { token: workflow, tokenVariable: "GITHUB_TOKEN" }
  throw new GithubContextError(
    `no GitHub token: neither ${explicitTokenVariable} nor GITHUB_TOKEN is set; ${tokenHint}`,
    {
      missing: [explicitTokenVariable, "GITHUB_TOKEN"],
      hint: tokenHint,
    },
  )
}

function isSupported(name: string): name is GithubEventName {
  return (supportedGithubEvents as readonly string[]).includes(name)
}

function readUtf8(path: string): string {
  return readFileSync(path, "utf8")
}

function present(value: string | undefined): string | null {
  const trimmed = value?.trim()
  return trimmed ? trimmed : null
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "")
}
