import * as z from "zod"
import { GitlabResponseError } from "./errors"

// GitLab answers are parsed, never trusted: only the fields we use, with the types GitLab documents
// (gitbeaker's own types are wrong in places, e.g. DiffNote lines typed as strings: docs/gitlab.md#notes-and-discussions).

/** A user as GitLab embeds it in notes, merge requests and approvals. */
export const ApiUser = z.object({
  id: z.number(),
  username: z.string(),
  name: z.string().nullish(),
  bot: z.boolean().nullish(),
})
export type ApiUser = z.infer<typeof ApiUser>

/** `diff_refs` of a merge request; each SHA may be missing right after the MR is created. */
export const ApiDiffRefs = z.object({
  base_sha: z.string().nullish(),
  head_sha: z.string().nullish(),
  start_sha: z.string().nullish(),
})

/** `GET /projects/:id/merge_requests/:iid`, the fields the review needs. */
export const ApiMergeRequest = z.object({
  id: z.number().nullish(),
  iid: z.number(),
  project_id: z.number().nullish(),
  title: z.string(),
  description: z.string().nullish(),
  state: z.string().nullish(),
  source_branch: z.string().nullish(),
  target_branch: z.string(),
  author: ApiUser.nullish(),
  sha: z.string().nullish(),
  web_url: z.string().nullish(),
  diff_refs: ApiDiffRefs.nullish(),
  reviewers: z.array(ApiUser).nullish(),
  detailed_merge_status: z.string().nullish(),
  references: z.object({ full: z.string().nullish() }).nullish(),
  /** A string: "12", or "1000+" past GitLab's diff limits (docs/gitlab.md#diffs-and-their-limits). */
  changes_count: z.union([z.string(), z.number()]).nullish(),
})
export type ApiMergeRequest = z.infer<typeof ApiMergeRequest>

const lineNumber = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).nullish()

/** A DiffNote's position (only what the review reads back). */
export const ApiPosition = z.object({
  old_path: z.string().nullish(),
  new_path: z.string().nullish(),
  old_line: lineNumber,
  new_line: lineNumber,
  head_sha: z.string().nullish(),
})

/** One note, alone or inside a discussion. */
export const ApiNote = z.object({
  id: z.number(),
  type: z.string().nullish(),
  body: z.string(),
  author: ApiUser,
  created_at: z.string().nullish(),
  system: z.boolean().nullish(),
  resolvable: z.boolean().nullish(),
  resolved: z.boolean().nullish(),
  position: ApiPosition.nullish(),
})
export type ApiNote = z.infer<typeof ApiNote>

/** A discussion: a thread, or a single comment (`individual_note`). */
export const ApiDiscussion = z.object({
  id: z.string(),
  individual_note: z.boolean().nullish(),
  notes: z.array(z.unknown()).nullish(),
})

/** A discussion with its notes parsed; notes that did not parse are dropped (and counted). */
export interface Discussion {
  id: string
  individualNote: boolean
  notes: ApiNote[]
}

/** `GET .../approvals` (CE and EE shapes). */
export const ApiApprovals = z.object({
  user_has_approved: z.boolean().nullish(),
  approved_by: z.array(z.object({ user: ApiUser })).nullish(),
})
export type ApiApprovals = z.infer<typeof ApiApprovals>

/** `GET .../reviewers` entries. */
export const ApiReviewer = z.object({ user: ApiUser, state: z.string().nullish() })
export type ApiReviewer = z.infer<typeof ApiReviewer>

/** `GET /projects/:id/repository/tree` entries: `type` is tree, blob or commit (a submodule). */
export const ApiTreeEntry = z.object({
  id: z.string().nullish(),
  name: z.string().nullish(),
  type: z.string(),
  path: z.string(),
  mode: z.string().nullish(),
})
export type ApiTreeEntry = z.infer<typeof ApiTreeEntry>

/** Parses one object; a wrong shape is a GitlabResponseError naming the fields. */
export function parseOne<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value)
  if (parsed.success) return parsed.data
  throw new GitlabResponseError(what, issuesOf(parsed.error))
}

/** Parses a list item by item: a bad item is skipped and described in `problems`, the rest are kept. */
export function parseList<T>(schema: z.ZodType<T>, value: unknown, what: string, problems: string[]): T[] {
  if (!Array.isArray(value)) throw new GitlabResponseError(what, ["expected a JSON array"])
  const items: T[] = []
  value.forEach((item, index) => {
    const parsed = schema.safeParse(item)
    if (parsed.success) items.push(parsed.data)
    else problems.push(`${what}[${index}] skipped: ${issuesOf(parsed.error).join("; ")}`)
  })
  return items
}

/** Discussions with their notes parsed item by item. */
export function parseDiscussions(value: unknown, problems: string[]): Discussion[] {
  return parseList(ApiDiscussion, value, "discussions", problems).map((discussion) => ({
    id: discussion.id,
    individualNote: discussion.individual_note ?? false,
    notes: parseList(ApiNote, discussion.notes ?? [], `discussion ${discussion.id} notes`, problems),
  }))
}

function issuesOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
}
