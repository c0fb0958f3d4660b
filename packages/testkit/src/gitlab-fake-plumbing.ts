import {
  badRequest,
  coerceInteger,
  coerceString,
  grapeError,
  json,
  notFound,
  ParamsError,
  type ParsedBody,
  paginate,
  type Reply,
  recordNotFound,
} from "./gitlab-fake-http"
import type { FakeNotes } from "./gitlab-fake-notes"
import type { Caller, FakeNote, FakeUser } from "./gitlab-fake-types"
import type { FakeWorld } from "./gitlab-fake-world"

// Request plumbing: the route table's types, who is calling (tokens), the project/MR lookup in
// GitLab's order, pagination, and the checks and answers shared by the note routes.

export type AuthKind = "none" | "authenticate" | "non_get"

export interface Context {
  request: Request
  url: URL
  query: URLSearchParams
  params: Record<string, unknown>
  path: Record<string, string>
  caller: Caller
  body: ParsedBody
}

export interface Route {
  method: string
  pattern: string[]
  auth: AuthKind
  jobToken?: boolean
  run(context: Context): Reply | Promise<Reply>
}

/** The path of the one merge request: /projects/:id/merge_requests/:iid. */
export const mrPath = ["projects", ":id", "merge_requests", ":iid"]

const noteLimit = 1_000_000

export type FakePlumbing = ReturnType<typeof createPlumbing>

export function createPlumbing(world: FakeWorld) {
  const { options, state, tokens, author, bot, projectId, projectPath, iid } = world

  const identify = (request: Request, url: URL, jobTokenAllowed: boolean): Caller => {
    const header = (name: string) => request.headers.get(name) ?? undefined
    const bearer = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1]
    const personal =
      header("private-token") ??
      url.searchParams.get("private_token") ??
      bearer ??
      url.searchParams.get("access_token") ??
      undefined
    if (personal !== undefined) {
      if (personal === tokens.bot) return { user: bot, kind: "token" }
      if (personal === tokens.human) return { user: author, kind: "token" }
      return { user: null, kind: "invalid" }
    }
    const job = header("job-token") ?? url.searchParams.get("job_token") ?? undefined
    // A job token only authenticates on routes marked job_token_allowed; elsewhere it is ignored.
    if (job !== undefined && jobTokenAllowed)
      return job === tokens.job ? { user: author, kind: "job" } : { user: null, kind: "invalid" }
    return { user: null, kind: "anonymous" }
  }

  const projectMatches = (raw: string) => raw === String(projectId) || raw.toLowerCase() === projectPath.toLowerCase()

  /** Grape param check of the MR iid, then the project, then the MR (in GitLab's order). */
  const target = (context: Context, param: "merge_request_iid" | "noteable_id"): Reply | null => {
    const errors: string[] = []
    const value = coerceInteger(context.path.iid, param, errors)
    if (errors.length > 0) return grapeError(400, errors.join(", "))
    if (!projectMatches(context.path.id ?? "")) return notFound("Project")
    if (context.caller.user === null && (options.visibility ?? "private") === "private") return notFound("Project")
    if (value !== iid) return recordNotFound()
    return null
  }

  const mustWrite = (context: Context): FakeUser => {
    if (!context.caller.user) throw new ParamsError(["unreachable: write without a user"])
    return context.caller.user
  }

  const findDiscussion = (id: string | undefined) => state.discussions.find((discussion) => discussion.id === id)
  const findNote = (raw: string | undefined): FakeNote | undefined => {
    const errors: string[] = []
    const id = coerceInteger(raw, "note_id", errors)
    if (errors.length > 0) throw new ParamsError(errors)
    return state.notes.find((note) => note.id === id)
  }

  const linkParams = (context: Context, extra: Record<string, string>) => {
    const params: Record<string, string> = {}
    for (const [key, value] of context.query) {
      if (!["private_token", "access_token", "job_token"].includes(key)) params[key] = value
    }
    return { ...extra, ...params }
  }

  const list = <T>(
    context: Context,
    items: T[],
    routeParams: Record<string, string>,
    render: (item: T) => unknown,
  ): Reply => {
    const { page, headers } = paginate(items, context.query, context.url, linkParams(context, routeParams))
    return json(200, page.map(render), headers)
  }

  const noteCreationResult = (
    result: ReturnType<FakeNotes["createNote"]>,
    present: () => unknown,
    status = 201,
  ): Reply => {
    // API::Helpers::NotesHelpers#process_note_creation_result
    if (result.commands.only) {
      if (result.commands.errors.length > 0) return badRequest(result.commands.errors.join(", "))
      return json(202, { commands_changes: result.commands.changes, summary: result.commands.messages })
    }
    return json(status, present())
  }

  const noteErrors = (body: string): [string, string[]][] => {
    if (body.trim() === "") return [["note", ["can't be blank"]]]
    if (body.length > noteLimit) return [["note", [`is too long (maximum is ${noteLimit} characters)`]]]
    return []
  }

  const requireBody = (context: Context, errors: string[]): string | null => {
    if (!("body" in context.params)) {
      errors.push("body is missing")
      return null
    }
    return coerceString(context.params.body, "body", errors)
  }

  return {
    identify,
    projectMatches,
    target,
    mustWrite,
    findDiscussion,
    findNote,
    list,
    noteCreationResult,
    noteErrors,
    requireBody,
  }
}

/** Ruby's Hash#inspect of ActiveModel errors (Ruby < 3.4): {:line_code=>["can't be blank", ...]}. */
export function rubyInspect(errors: [string, string[]][]): string {
  const merged = new Map<string, string[]>()
  for (const [key, messages] of errors) merged.set(key, [...(merged.get(key) ?? []), ...messages])
  const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
  return `{${[...merged].map(([key, messages]) => `:${key}=>[${messages.map(quote).join(", ")}]`).join(", ")}}`
}
