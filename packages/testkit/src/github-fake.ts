import { decodeSegment } from "./fake-http"
import { createContents } from "./github-fake-contents"
import { sha1, versionFromGit, versionFromText } from "./github-fake-diff"
import { createFaults, failureReply, matches, rateHeaders, secondaryReply } from "./github-fake-faults"
import { answerGraphql } from "./github-fake-graphql"
import {
  badCredentials,
  docs,
  githubError,
  json,
  notAccessibleByIntegration,
  notFound,
  type Reply,
  requestId,
  requiresAuthentication,
} from "./github-fake-http"
import { createRender } from "./github-fake-render"
import { createReviews } from "./github-fake-reviews"
import { createRoutes, matchRoute } from "./github-fake-routes"
import type {
  FakeGithubActor,
  FakeGithubRequest,
  FakeIssueComment,
  GithubFake,
  GithubFakeOptions,
} from "./github-fake-types"
import { canRead, createWorld, type FakeWorld } from "./github-fake-world"

export type {
  FakeGithubActor,
  FakeGithubDiffLine,
  FakeGithubFailure,
  FakeGithubFile,
  FakeGithubHunk,
  FakeGithubMatch,
  FakeGithubPull,
  FakeGithubReaction,
  FakeGithubRepo,
  FakeGithubRequest,
  FakeGithubReview,
  FakeGithubState,
  FakeGithubUser,
  FakeGithubVersion,
  FakeIssueComment,
  FakeReactionContent,
  FakeReviewComment,
  FakeReviewDismissal,
  FakeReviewState,
  FakeReviewThread,
  GithubActorOptions,
  GithubFake,
  GithubFakeOptions,
  GithubPermission,
  GithubPullOptions,
  GithubRepoOptions,
} from "./github-fake-types"

// The GitHub fake (the `GithubFake` interface is in github-fake-types.ts; what it must do and where
// each fact was verified is in docs/github.md). This file starts it: the HTTP server, auth, rate
// limits and injected faults around every request, dispatch to REST routes or GraphQL, and the
// control methods a test calls.
//
// The fake in pieces; each module imports only modules above it, so there are no cycles:
//   github-fake-types.ts     the exported types
//   github-fake-http.ts      GitHub's error bodies, documentation URLs, page/Link pagination
//   github-fake-diff.ts      `git diff` text parsed into files and hunks; line/side resolution
//   github-fake-git.ts       a repository's refs, trees and blobs read with git (`dir`)
//   github-fake-world.ts     options with defaults, actors and tokens, repositories, id counters
//   github-fake-faults.ts    primary rate limits, the secondary limit, failNext
//   github-fake-render.ts    GitHub's REST entities
//   github-fake-contents.ts  the contents and trees APIs over a repository's `dir`
//   github-fake-reviews.ts   reviews, review comments, replies, threads followed on push
//   github-fake-routes.ts    the REST routes below /repos/{owner}/{repo}
//   github-fake-graphql.ts   POST /graphql: review threads, resolve/unresolve
//   github-fake.ts           this file

type Caller = { kind: "anonymous" } | { kind: "invalid" } | { kind: "actor"; actor: FakeGithubActor }

/** Starts the fake on 127.0.0.1 with a free port. */
export async function startGithubFake(options: GithubFakeOptions = {}): Promise<GithubFake> {
  const world = createWorld(options)
  const { state } = world
  const faults = createFaults(world.actors)
  const render = createRender(world)
  const reviews = createReviews(world, render)
  const routes = createRoutes(world, render, reviews, createContents(world))
  let requestCounter = 0

  const identify = (request: Request): Caller => {
    const header = request.headers.get("authorization")
    if (header === null) return { kind: "anonymous" }
    const token = /^(?:token|bearer)\s+(\S+)\s*$/i.exec(header)?.[1]
    const actor = token ? world.actors.find((candidate) => candidate.token === token) : undefined
    return actor ? { kind: "actor", actor } : { kind: "invalid" }
  }

  const dispatchRest = (
    request: Request,
    url: URL,
    path: string,
    actor: FakeGithubActor | null,
    raw: ParsedBody,
  ): Reply => {
    const segments = path.split("/").slice(1).map(decodeSegment)
    if (segments.length === 1 && segments[0] === "user" && request.method === "GET") {
      if (!actor) return requiresAuthentication(docs.getUser)
      // An installation token (GITHUB_TOKEN, an App) is not a user: GET /user is refused.
      if (actor.user.type === "Bot") return notAccessibleByIntegration(docs.getUser)
      return json(200, { ...render.user(actor.user), name: null })
    }
    let repo = undefined as ReturnType<FakeWorld["findRepo"]>
    let rest: string[]
    if (segments[0] === "repos" && segments.length >= 3) {
      repo = world.findRepo(segments[1]!, segments[2]!)
      rest = segments.slice(3)
    } else if (segments[0] === "repositories" && segments.length >= 2) {
      repo = world.findRepoById(Number(segments[1]))
      rest = segments.slice(2)
    } else {
      return notFound(docs.root)
    }
    const matched = matchRoute(routes, request.method, rest)
    if (!matched) return notFound(docs.root)
    // GitHub hides a private repository from whoever cannot read it: 404, never 403.
    const permission = repo ? world.permission(actor, repo) : "none"
    if (!repo || !canRead(permission)) return notFound(matched.route.docs)
    if (raw.error) return githubError(400, "Problems parsing JSON", matched.route.docs)
    const body = typeof raw.value === "object" && raw.value !== null && !Array.isArray(raw.value) ? raw.value : {}
    return matched.route.run({
      url,
      request,
      actor,
      repo,
      permission,
      params: matched.params,
      body: body as Record<string, unknown>,
    })
  }

  const dispatchGraphql = (
    request: Request,
    actor: FakeGithubActor | null,
    raw: ParsedBody,
    rate: Record<string, string>,
  ): Reply => {
    if (request.method !== "POST") return notFound(docs.graphql)
    if (!actor)
      return githubError(
        401,
        "This endpoint requires you to be authenticated.",
        "https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql",
      )
    if (raw.error) return githubError(400, "Problems parsing JSON", docs.graphql)
    return answerGraphql(world, reviews, raw.value, {
      actor,
      rateLimit: {
        limit: Number(rate["x-ratelimit-limit"]),
        remaining: Number(rate["x-ratelimit-remaining"]),
        used: Number(rate["x-ratelimit-used"]),
        reset: Number(rate["x-ratelimit-reset"]),
      },
    })
  }

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    // GitHub Enterprise Server serves REST below /api/v3 and GraphQL at /api/graphql.
    let path = url.pathname.startsWith("/api/v3/") ? url.pathname.slice("/api/v3".length) : url.pathname
    if (path === "/api/graphql") path = "/graphql"
    const raw = await parseBody(request)
    const entry: FakeGithubRequest = {
      id: state.requests.length + 1,
      method: request.method,
      path,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries([...request.headers].map(([key, value]) => [key.toLowerCase(), value])),
      body: raw.value,
    }
    state.requests.push(entry)
    const id = requestId(++requestCounter)
    const resource = path === "/graphql" ? "graphql" : "core"
    let reply: Reply
    let rate: Record<string, string> = {}
    try {
      const rule = faults.take(request.method, path)
      if (rule?.kind === "failure" && !rule.failure.afterStore) {
        // A proxy in front of the API answered: no rate-limit headers, nothing processed.
        entry.injected = String(rule.failure.status)
        reply = failureReply(rule.failure)
      } else {
        const caller = identify(request)
        if (caller.kind === "invalid") {
          rate = rateHeaders(0, 0, Math.floor(Date.now() / 1000) + 3600, resource)
          reply = badCredentials(resource === "graphql" ? docs.graphql : docs.root)
        } else {
          const actor = caller.kind === "actor" ? caller.actor : null
          if (actor) entry.actor = actor.user.login
          const consumed = faults.consume(actor, resource, "127.0.0.1")
          rate = consumed.headers
          if (consumed.limited) {
            entry.injected = "rate-limit"
            reply = consumed.limited
          } else if (rule?.kind === "secondary") {
            entry.injected = "secondary-rate-limit"
            reply = secondaryReply(rule.status, rule.retryAfter, id)
          } else {
            reply =
              path === "/graphql"
                ? dispatchGraphql(request, actor, raw, rate)
                : dispatchRest(request, url, path, actor, raw)
          }
        }
        if (rule?.kind === "failure") {
          // The write landed, then the proxy in front of the API gave up: the client sees a 502.
          entry.injected = `${rule.failure.status}-after-store`
          reply = failureReply(rule.failure)
          rate = {}
        }
      }
    } catch (error) {
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
      state.fakeErrors.push(`${request.method} ${path}: ${text}`)
      reply = githubError(500, "Server Error", docs.root)
    }
    entry.status = reply.status
    return toResponse(reply, rate, id)
  }

  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: handle })
  world.baseUrl = `http://127.0.0.1:${server.port}`

  const repoByName = (name: string) => {
    const repo = state.repos.find((candidate) => candidate.fullName.toLowerCase() === name.toLowerCase())
    if (!repo) throw new Error(`github-fake: no repository ${name}`)
    return repo
  }
  const pullOf = (name: string, number: number) => {
    const repo = repoByName(name)
    const pull = world.findPull(repo, number)
    if (!pull) throw new Error(`github-fake: no pull request ${name}#${number}`)
    return { repo, pull }
  }

  return {
    url: world.baseUrl,
    tokens: Object.fromEntries(world.actors.map((actor) => [actor.user.login, actor.token])),
    state,
    pull: (name, number) => pullOf(name, number).pull,
    head: (name, number) => pullOf(name, number).pull.versions.at(-1)!,
    push(name, number, next) {
      const { repo, pull } = pullOf(name, number)
      const previous = pull.versions.at(-1)!
      const version =
        "git" in next
          ? versionFromGit(next.git)
          : versionFromText(
              next.diff,
              next.headSha ?? sha1(`head\0${repo.fullName}\0${number}\0${pull.versions.length}\0${next.diff}`),
              previous.baseSha,
            )
      pull.versions.push(version)
      pull.updatedAt = world.now()
      reviews.followThreads(repo.fullName, pull)
      return version
    },
    addIssueComment(name, number, login, body) {
      const { repo, pull } = pullOf(name, number)
      const user = world.userByLogin(login)
      if (!user) throw new Error(`github-fake: no actor ${login}`)
      const id = world.nextId("comment")
      const now = world.now()
      const comment: FakeIssueComment = {
        id,
        nodeId: world.nodeId("IC", id),
        repo: repo.fullName,
        issueNumber: pull.number,
        user,
        body,
        createdAt: now,
        updatedAt: now,
        reactions: [],
      }
      state.issueComments.push(comment)
      return comment
    },
    failNext: faults.failNext,
    secondaryRateLimit: faults.secondary,
    exhaustRateLimit(login, limitOptions = {}) {
      faults.exhaust(login, limitOptions.resource ?? "core", limitOptions.status ?? 403)
    },
    resetRateLimit: faults.reset,
    requests: (match) =>
      state.requests
        .filter((request) => !match || matches(match, request.method, request.path))
        .map((request) => ({ ...request })),
    async close() {
      await server.stop(true)
    },
  }
}

interface ParsedBody {
  value: unknown
  error: boolean
}

async function parseBody(request: Request): Promise<ParsedBody> {
  if (request.method === "GET" || request.method === "HEAD") return { value: undefined, error: false }
  const text = await request.text()
  if (text === "") return { value: undefined, error: false }
  try {
    return { value: JSON.parse(text), error: false }
  } catch {
    return { value: text, error: true }
  }
}

function toResponse(reply: Reply, rate: Record<string, string>, id: string): Response {
  const headers = new Headers({
    "x-github-request-id": id,
    "x-github-api-version-selected": "2022-11-28",
    ...rate,
    ...reply.headers,
  })
  if (reply.status === 204) return new Response(null, { status: 204, headers })
  if (reply.text !== undefined) {
    headers.set("content-type", reply.contentType ?? "text/plain; charset=utf-8")
    return new Response(reply.text, { status: reply.status, headers })
  }
  headers.set("content-type", "application/json; charset=utf-8")
  headers.set("x-github-media-type", "github.v3; format=json")
  return new Response(JSON.stringify(reply.body ?? null), { status: reply.status, headers })
}
