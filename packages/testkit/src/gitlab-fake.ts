import { decodeSegment } from "./fake-http"
import { badGateway, createFaults, injectedReply } from "./gitlab-fake-faults"
import { answerGraphql } from "./gitlab-fake-graphql"
import {
  grapeError,
  message,
  ParamsError,
  type ParsedBody,
  parseBody,
  type Reply,
  unauthorized,
} from "./gitlab-fake-http"
import { createNotes } from "./gitlab-fake-notes"
import { createPlumbing, type Route, rubyInspect } from "./gitlab-fake-plumbing"
import { createPositions } from "./gitlab-fake-positions"
import { createRender } from "./gitlab-fake-render"
import { createRoutes } from "./gitlab-fake-routes"
import { createNoteRoutes } from "./gitlab-fake-routes-notes"
import type { Caller, FakeRequest, GitlabFake, GitlabFakeOptions } from "./gitlab-fake-types"
import { createVersions } from "./gitlab-fake-versions"
import { createWebhooks } from "./gitlab-fake-webhooks"
import { createWorld } from "./gitlab-fake-world"

export type { FakeCommit, FakeDiffFile } from "./gitlab-fake-git"
export type {
  FakeApproval,
  FakeApprovalEvent,
  FakeDiscussion,
  FakeFailure,
  FakeMember,
  FakeMergeRequest,
  FakeNote,
  FakePosition,
  FakeQuickAction,
  FakeRequest,
  FakeRequestChanges,
  FakeReviewer,
  FakeState,
  FakeUser,
  FakeVersion,
  FakeVersionFile,
  GitlabAccessLevel,
  GitlabFake,
  GitlabFakeOptions,
  GitlabNoteWebhook,
  GitlabWebhookMergeRequest,
  GitlabWebhookNote,
  GitlabWebhookProject,
  GitlabWebhookUser,
  HumanNotePosition,
  ReviewerState,
} from "./gitlab-fake-types"

// The GitLab fake (the `GitlabFake` interface is in gitlab-fake-types.ts; what it must do is in
// docs/gitlab.md, "The contract of the GitLab fake"). This file starts it: the HTTP server,
// dispatch to the route table or GraphQL, and the control methods a test calls (push,
// addHumanNote, setDescription, failNext, holdTogether, ...).
//
// The fake in pieces. Each module imports only modules above it in this list, so there are no
// cycles:
//   gitlab-fake-http.ts           request parsing, Grape's coercions and errors, pagination
//   gitlab-fake-git.ts            git: diffs, commits, line codes, tracing a line between commits
//   gitlab-fake-quick-actions.ts  quick actions found in a note body
//   gitlab-fake-graphql.ts        the one GraphQL mutation (graphql-js)
//   gitlab-fake-types.ts          the exported types (re-exported below) and `Caller`
//   gitlab-fake-faults.ts         failNext and holdTogether (test tools, not GitLab behaviour)
//   gitlab-fake-world.ts          the shared mutable world: options with defaults, state, git,
//                                 users, id counters, the current version, the base URL
//   gitlab-fake-versions.ts       merge request diff versions, read from git
//   gitlab-fake-positions.ts      DiffNote positions: parsed, validated, moved on push
//   gitlab-fake-notes.ts          notes, threads, approvals, reviewers, quick actions applied
//   gitlab-fake-render.ts         GitLab's API entities (uses versions, notes)
//   gitlab-fake-plumbing.ts       route types, the caller and its token, the MR lookup, lists
//   gitlab-fake-routes.ts         routes: user, instance, project, repository, MR, diffs, approvals
//   gitlab-fake-routes-notes.ts   routes: notes and discussions
//   gitlab-fake-webhooks.ts       note webhook bodies and TRIGGER_PAYLOAD, built from the state
//   gitlab-fake.ts                this file
// Each section module exports a factory that takes the world (and the sections it uses) and
// returns its functions; startGitlabFake creates them in this order.

/** Starts the fake on 127.0.0.1 with a free port, reading the MR from `options.repoDir`. */
export async function startGitlabFake(options: GitlabFakeOptions): Promise<GitlabFake> {
  const world = createWorld(options)
  const { git, state, mr, projectId, projectPath, iid, tokens, author, addUser, now, current } = world
  const faults = createFaults()
  const { hold, takeFailure } = faults
  const versions = createVersions(world)
  const { readVersion } = versions
  state.versions.push(readVersion())
  const positions = createPositions(world)
  const { tracePositions } = positions
  const notes = createNotes(world)
  const { syncDiscussion, systemNote, reviewerOf, requestChanges, createNote, reply, setResolved } = notes
  const render = createRender(world, versions, notes)
  const { webUrl, detailedMergeStatus } = render
  const plumbing = createPlumbing(world)
  const { identify, findDiscussion, noteErrors } = plumbing
  const webhooks = createWebhooks(world, versions, render)
  // One table in GitLab's order: the first route that matches answers, and a 405's Allow header
  // lists the other methods of the path in this order.
  const routes: Route[] = [
    ...createRoutes(world, notes, render, plumbing),
    ...createNoteRoutes(world, notes, positions, render, plumbing),
  ]

  const graphqlRequestChanges = (caller: Caller, path: string, wantedIid: string) => {
    if (!caller.user || path.toLowerCase() !== projectPath.toLowerCase() || wantedIid !== String(iid)) return null
    const errors = requestChanges(caller.user, "graphql")
    return {
      errors,
      mergeRequest: {
        id: `gid://gitlab/MergeRequest/${mr.id}`,
        iid: String(iid),
        title: mr.title,
        webUrl: webUrl(),
        state: mr.state,
        draft: mr.draft,
        sourceBranch: mr.sourceBranch,
        targetBranch: mr.targetBranch,
        diffHeadSha: current().headSha,
        detailedMergeStatus: detailedMergeStatus().toUpperCase(),
        approved: state.approvals.length > 0,
        __typename: "MergeRequest",
      },
    }
  }

  // ---------------------------------------------------------------- dispatch

  const matchRoute = (
    segments: string[],
    method: string,
  ): { route?: Route; path: Record<string, string>; allowed: string[] } => {
    const allowed: string[] = []
    for (const route of routes) {
      if (route.pattern.length !== segments.length) continue
      const path: Record<string, string> = {}
      const ok = route.pattern.every((part, index) => {
        const segment = segments[index]!
        if (part.startsWith(":")) {
          path[part.slice(1)] = segment
          return segment !== ""
        }
        return part === segment
      })
      if (!ok) continue
      if (route.method === method) return { route, path, allowed }
      allowed.push(route.method)
    }
    return { path: {}, allowed }
  }

  const dispatch = async (request: Request, url: URL, body: ParsedBody, entry: FakeRequest): Promise<Reply> => {
    if (url.pathname === "/api/graphql") {
      if (request.method !== "POST" && request.method !== "GET") return grapeError(405, "405 Not Allowed")
      const caller = identify(request, url, false)
      if (caller.kind === "invalid") return { status: 401, body: { errors: [{ message: "Invalid token" }] } }
      if (caller.user) entry.user = caller.user.username
      const graphqlBody =
        request.method === "GET"
          ? { query: url.searchParams.get("query"), variables: parseJsonOr(url.searchParams.get("variables"), {}) }
          : body.value
      return answerGraphql(graphqlBody, {
        requestChangesAvailable: options.requestChangesMutation ?? true,
        currentUser: caller.user,
        requestChanges: (path, wantedIid) => graphqlRequestChanges(caller, path, wantedIid),
      })
    }
    if (!url.pathname.startsWith("/api/v4/")) return { status: 404, text: "Not Found", contentType: "text/plain" }
    const segments = url.pathname.slice("/api/v4/".length).split("/").map(decodeSegment)
    const { route, path, allowed } = matchRoute(segments, request.method)
    if (!route) {
      if (allowed.length > 0)
        return {
          ...grapeError(405, "405 Not Allowed"),
          headers: { Allow: [...new Set([...allowed, "OPTIONS"])].join(", ") },
        }
      return grapeError(404, "404 Not Found")
    }
    const caller = identify(
      request,
      url,
      options.jobTokenReads === true && route.jobToken === true && request.method === "GET",
    )
    if (caller.user) entry.user = caller.user.username
    if (caller.kind === "invalid") return unauthorized()
    if (!caller.user && (route.auth === "authenticate" || (route.auth === "non_get" && request.method !== "GET")))
      return unauthorized()
    if (body.error) return grapeError(400, "message body does not match declared format")
    const query = url.searchParams
    const params: Record<string, unknown> = { ...nestQuery(query), ...(isRecord(body.value) ? body.value : {}) }
    try {
      return await route.run({ request, url, query, params, path, caller, body })
    } catch (error) {
      if (error instanceof ParamsError) return grapeError(400, error.message)
      throw error
    }
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const url = new URL(request.url)
      const entry: FakeRequest = {
        id: state.requests.length + 1,
        at: Math.round(performance.now() - world.started),
        method: request.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: Object.fromEntries([...request.headers].map(([key, value]) => [key.toLowerCase(), value])),
        bodyKind: "none",
        body: undefined,
      }
      state.requests.push(entry)
      let reply: Reply
      try {
        const body = await parseBody(request)
        entry.bodyKind = body.kind
        entry.body = body.value
        if (body.form) entry.form = body.form
        if (body.raw !== undefined) entry.rawBody = body.raw
        await hold(request.method, url.pathname)
        const failure = takeFailure(request.method, url.pathname)
        if (failure && !(failure.status === 502 && "afterStore" in failure && failure.afterStore)) {
          entry.injected = String(failure.status)
          reply = injectedReply(failure)
        } else {
          reply = await dispatch(request, url, body, entry)
          if (failure) {
            entry.injected = "502-after-store"
            reply = badGateway()
          }
        }
      } catch (error) {
        const text = error instanceof Error ? (error.stack ?? error.message) : String(error)
        state.fakeErrors.push(`${request.method} ${url.pathname}: ${text}`)
        reply = message(500, "500 Internal Server Error")
      }
      entry.status = reply.status
      return toResponse(reply)
    },
  })
  world.baseUrl = `http://127.0.0.1:${server.port}`

  const humanUser = (username?: string) => (username ? addUser(username) : author)

  return {
    url: world.baseUrl,
    apiUrl: `${world.baseUrl}/api/v4`,
    projectId,
    projectPath,
    iid,
    tokens,
    state,
    async push() {
      const previous = current()
      const next = readVersion()
      if (next.headSha === previous.headSha) {
        world.ids.version -= 1
        return
      }
      state.versions.push(next)
      const added =
        git.run(["merge-base", "--is-ancestor", previous.headSha, next.headSha]).code === 0
          ? git.commits(previous.headSha, next.headSha)
          : next.commits
      const items = added
        .map((commit) => `<li>${commit.sha.slice(0, 8)} - ${escapeHtml(commit.message.split("\n")[0] ?? "")}</li>`)
        .join("")
      systemNote(
        `added ${added.length} commit${added.length === 1 ? "" : "s"}\n\n<ul>${items}</ul>\n\n[Compare with previous version](${webUrl()}/diffs?diff_id=${next.id}&start_sha=${previous.headSha})`,
        author,
      )
      if ((options.resetApprovalsOnPush ?? true) && state.approvals.length > 0) {
        const approvers = state.approvals.map((approval) => approval.user)
        for (const approver of approvers) {
          state.approvalEvents.push({ action: "reset", user: approver, sha: next.headSha, at: now(), via: "push" })
          const reviewer = reviewerOf(approver)
          if (reviewer && reviewer.state === "approved") reviewer.state = "unapproved"
        }
        state.approvals.length = 0
        systemNote(
          `reset approvals from ${approvers.map((user) => `@${user.username}`).join(" and ")} by pushing to the branch`,
          author,
        )
      }
      tracePositions(previous, next)
      mr.updatedAt = now()
    },
    addHumanNote(body, noteOptions = {}) {
      const user = humanUser(noteOptions.author)
      if (noteOptions.position) {
        if (noteOptions.discussionId) throw new Error("gitlab-fake: a reply takes its thread's position")
        const { newPath, oldPath = newPath, newLine = null, oldLine = null } = noteOptions.position
        const version = current()
        const errors: string[] = []
        const parsed = positions.parsePosition(
          {
            base_sha: version.baseSha,
            start_sha: version.startSha,
            head_sha: version.headSha,
            position_type: "text",
            old_path: oldPath,
            new_path: newPath,
            old_line: oldLine,
            new_line: newLine,
          },
          errors,
        )
        if (!parsed) throw new Error(`gitlab-fake: ${errors.join(", ")}`)
        const checked = positions.validateDiffNote(parsed)
        const refused = [...noteErrors(body), ...checked.errors]
        if (refused.length > 0) throw new Error(`gitlab-fake: GitLab would refuse this note: ${rubyInspect(refused)}`)
        const result = createNote({
          author: user,
          body,
          type: "DiffNote",
          discussion: null,
          position: parsed.position,
          lineCode: checked.lineCode,
          internal: noteOptions.internal ?? false,
          via: "discussion",
        })
        if (!result.note) throw new Error("gitlab-fake: the note held only quick actions, so GitLab did not store it")
        return result.note
      }
      if (noteOptions.discussionId) {
        const discussion = findDiscussion(noteOptions.discussionId)
        if (!discussion) throw new Error(`gitlab-fake: no discussion ${noteOptions.discussionId}`)
        const result = reply(discussion, user, body, "reply")
        if (!result.note) throw new Error("gitlab-fake: the note held only quick actions, so GitLab did not store it")
        return result.note
      }
      const result = createNote({
        author: user,
        body,
        type: null,
        discussion: null,
        internal: noteOptions.internal ?? false,
        via: "note",
      })
      if (!result.note) throw new Error("gitlab-fake: the note held only quick actions, so GitLab did not store it")
      return result.note
    },
    resolveAsHuman(discussionId) {
      const discussion = findDiscussion(discussionId)
      if (!discussion) throw new Error(`gitlab-fake: no discussion ${discussionId}`)
      if (!discussion.resolvable) throw new Error(`gitlab-fake: discussion ${discussionId} is not resolvable`)
      setResolved(discussion.notes, true, author)
      syncDiscussion(discussion)
    },
    addSystemNote(body, noteOptions = {}) {
      return systemNote(body, humanUser(noteOptions.author))
    },
    setDescription(description) {
      mr.description = description
      systemNote("changed the description", author)
      mr.updatedAt = now()
    },
    setMember: world.setMember,
    noteWebhookPayload: (noteId, webhookOptions = {}) => webhooks.noteWebhookPayload(noteId, webhookOptions.action),
    triggerPayload: (noteId, triggerOptions = {}) =>
      webhooks.triggerPayload(noteId, triggerOptions.ref, triggerOptions.action),
    failNext: faults.failNext,
    holdTogether: faults.holdTogether,
    async close() {
      await server.stop(true)
    },
  }
}

function toResponse(reply: Reply): Response {
  const headers = new Headers({
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "SAMEORIGIN",
    "Cache-Control": "max-age=0, private, must-revalidate",
    Vary: "Origin",
    ...reply.headers,
  })
  if (reply.status === 204) {
    return new Response(null, { status: reply.status, headers })
  }
  if (reply.text !== undefined) {
    headers.set("Content-Type", reply.contentType ?? "text/plain")
    return new Response(reply.text, { status: reply.status, headers })
  }
  headers.set("Content-Type", "application/json")
  return new Response(JSON.stringify(reply.body ?? null), { status: reply.status, headers })
}

function nestQuery(query: URLSearchParams): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of query) {
    const list = /^(.+)\[\]$/.exec(key)
    if (list) {
      const name = list[1]!
      out[name] = [...(Array.isArray(out[name]) ? (out[name] as unknown[]) : []), value]
    } else {
      out[key] = value
    }
  }
  return out
}

function parseJsonOr(text: string | null, fallback: unknown): unknown {
  try {
    return text ? JSON.parse(text) : fallback
  } catch {
    return fallback
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char,
  )
}
