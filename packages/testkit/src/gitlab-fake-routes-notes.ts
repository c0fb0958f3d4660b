import {
  badRequest,
  coerceBoolean,
  coerceString,
  forbidden,
  grapeError,
  json,
  notFound,
  type Reply,
  recordNotFound,
} from "./gitlab-fake-http"
import type { FakeNotes } from "./gitlab-fake-notes"
import { type Context, type FakePlumbing, mrPath, type Route, rubyInspect } from "./gitlab-fake-plumbing"
import type { FakePositions } from "./gitlab-fake-positions"
import { extractQuickActions } from "./gitlab-fake-quick-actions"
import type { FakeRender } from "./gitlab-fake-render"
import type { FakeNote } from "./gitlab-fake-types"
import type { FakeWorld } from "./gitlab-fake-world"

// Routes of notes and discussions on the merge request (lib/api/notes.rb, lib/api/discussions.rb):
// list, show, create (plain, DiffNote, reply), edit, resolve, delete.

export function createNoteRoutes(
  world: FakeWorld,
  notes: FakeNotes,
  positions: FakePositions,
  render: FakeRender,
  plumbing: FakePlumbing,
): Route[] {
  const { state, mr, now } = world
  const { syncDiscussion, runQuickActions, createNote, reply, setResolved, removeNote, canEdit } = notes
  const { parsePosition, validateDiffNote } = positions
  const { renderNote, renderDiscussion } = render
  const { target, mustWrite, findDiscussion, findNote, list, noteCreationResult, noteErrors, requireBody } = plumbing

  const routes: Route[] = [
    {
      method: "GET",
      pattern: [...mrPath, "notes"],
      auth: "authenticate",
      jobToken: true,
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const errors: string[] = []
        const orderBy = context.query.get("order_by") ?? "created_at"
        const sort = context.query.get("sort") ?? "desc"
        const filter = context.query.get("activity_filter") ?? "all_notes"
        if (!["created_at", "updated_at"].includes(orderBy)) errors.push("order_by does not have a valid value")
        if (!["asc", "desc"].includes(sort)) errors.push("sort does not have a valid value")
        if (!["all_notes", "only_comments", "only_activity"].includes(filter))
          errors.push("activity_filter does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const key = orderBy === "updated_at" ? "updatedAt" : "createdAt"
        const notes = state.notes
          .filter((note) =>
            filter === "only_comments" ? !note.system : filter === "only_activity" ? note.system : true,
          )
          .sort((a, b) => (a[key] === b[key] ? a.id - b.id : a[key] < b[key] ? -1 : 1) * (sort === "asc" ? 1 : -1))
        return list(
          context,
          notes,
          { id: context.path.id!, noteable_id: context.path.iid!, order_by: orderBy, sort, activity_filter: filter },
          renderNote,
        )
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "notes", ":note_id"],
      auth: "authenticate",
      jobToken: true,
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const note = findNote(context.path.note_id)
        return note ? json(200, renderNote(note)) : recordNotFound()
      },
    },
    {
      method: "POST",
      pattern: [...mrPath, "notes"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        const body = requireBody(context, errors)
        const internal =
          coerceBoolean(context.params.internal, "internal", errors) ??
          coerceBoolean(context.params.confidential, "confidential", errors)
        const headSha = coerceString(context.params.merge_request_diff_head_sha, "merge_request_diff_head_sha", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        if (mr.discussionLocked && mustWrite(context).id !== mr.author.id) return forbidden()
        const modelErrors = noteErrors(body ?? "")
        if (modelErrors.length > 0) return badRequest(`Note ${rubyInspect(modelErrors)}`)
        const result = createNote({
          author: mustWrite(context),
          body: body ?? "",
          type: null,
          discussion: null,
          internal: internal ?? false,
          via: "note",
          mergeRequestDiffHeadSha: headSha,
        })
        return noteCreationResult(result, () => renderNote(result.note!))
      },
    },
    {
      method: "PUT",
      pattern: [...mrPath, "notes", ":note_id"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        const body = coerceString(context.params.body, "body", errors)
        if (body === "") errors.push("body is empty")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const note = findNote(context.path.note_id)
        if (!note) return recordNotFound()
        return updateNote(context, note, body)
      },
    },
    {
      method: "DELETE",
      pattern: [...mrPath, "notes", ":note_id"],
      auth: "authenticate",
      run: (context) => deleteNote(context),
    },
    {
      method: "GET",
      pattern: [...mrPath, "discussions"],
      auth: "authenticate",
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        return list(
          context,
          state.discussions,
          { id: context.path.id!, noteable_id: context.path.iid! },
          renderDiscussion,
        )
      },
    },
    {
      method: "POST",
      pattern: [...mrPath, "discussions"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        const body = requireBody(context, errors)
        coerceString(context.params.created_at, "created_at", errors)
        const parsed = parsePosition(context.params.position, errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const actor = mustWrite(context)
        if (mr.discussionLocked && actor.id !== mr.author.id) return forbidden()
        const modelErrors = noteErrors(body ?? "")
        let lineCode: string | null = null
        if (parsed) {
          const checked = validateDiffNote(parsed)
          lineCode = checked.lineCode
          modelErrors.push(...checked.errors)
        }
        if (modelErrors.length > 0) return badRequest(`Note ${rubyInspect(modelErrors)}`)
        const commitId = parsed ? coerceString(context.params.commit_id, "commit_id", []) : null
        const result = createNote({
          author: actor,
          body: body ?? "",
          type: parsed ? "DiffNote" : "DiscussionNote",
          discussion: null,
          position: parsed?.position ?? null,
          lineCode,
          commitId,
          via: "discussion",
        })
        return noteCreationResult(result, () => renderDiscussion(result.discussion!))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "discussions", ":discussion_id"],
      auth: "authenticate",
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const discussion = findDiscussion(context.path.discussion_id)
        return discussion ? json(200, renderDiscussion(discussion)) : notFound("Discussion")
      },
    },
    {
      method: "PUT",
      pattern: [...mrPath, "discussions", ":discussion_id"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        if (!("resolved" in context.params)) errors.push("resolved is missing")
        const resolved = coerceBoolean(context.params.resolved, "resolved", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const discussion = findDiscussion(context.path.discussion_id)
        if (!discussion) return notFound("Discussion")
        if (!discussion.resolvable) return forbidden()
        setResolved(discussion.notes, resolved === true, mustWrite(context))
        syncDiscussion(discussion)
        return json(200, renderDiscussion(discussion))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "discussions", ":discussion_id", "notes"],
      auth: "authenticate",
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const discussion = findDiscussion(context.path.discussion_id)
        return discussion ? json(200, discussion.notes.map(renderNote)) : notFound("Notes")
      },
    },
    {
      method: "POST",
      pattern: [...mrPath, "discussions", ":discussion_id", "notes"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        const body = requireBody(context, errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const actor = mustWrite(context)
        const discussion = findDiscussion(context.path.discussion_id)
        if (!discussion) return notFound("Discussion")
        if (discussion.notes[0]?.system) return badRequest("Discussion can not be replied to.")
        if (mr.discussionLocked && actor.id !== mr.author.id) return forbidden()
        const modelErrors = noteErrors(body ?? "")
        if (modelErrors.length > 0) return badRequest(`Note ${rubyInspect(modelErrors)}`)
        const result = reply(discussion, actor, body ?? "", "reply")
        return noteCreationResult(result, () => renderNote(result.note!))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "discussions", ":discussion_id", "notes", ":note_id"],
      auth: "authenticate",
      run: (context) => {
        const failed = target(context, "noteable_id")
        if (failed) return failed
        // Like GitLab, the discussion id is not checked: the note is looked up on the MR.
        const note = findNote(context.path.note_id)
        return note ? json(200, renderNote(note)) : recordNotFound()
      },
    },
    {
      method: "PUT",
      pattern: [...mrPath, "discussions", ":discussion_id", "notes", ":note_id"],
      auth: "authenticate",
      run: (context) => {
        const errors: string[] = []
        const hasBody = "body" in context.params
        const hasResolved = "resolved" in context.params
        const body = coerceString(context.params.body, "body", errors)
        const resolved = coerceBoolean(context.params.resolved, "resolved", errors)
        if (hasBody === hasResolved)
          errors.push(
            hasBody
              ? "body, resolved are mutually exclusive"
              : "body, resolved are missing, exactly one parameter must be provided",
          )
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        const note = findNote(context.path.note_id)
        if (!note) return recordNotFound()
        if (resolved === null) return updateNote(context, note, body)
        if (!note.resolvable) return badRequest("Note is not resolvable")
        setResolved([note], resolved, mustWrite(context))
        const discussion = findDiscussion(note.discussionId)
        if (discussion) syncDiscussion(discussion)
        return json(200, renderNote(note))
      },
    },
    {
      method: "DELETE",
      pattern: [...mrPath, "discussions", ":discussion_id", "notes", ":note_id"],
      auth: "authenticate",
      run: (context) => deleteNote(context),
    },
  ]

  // Notes::UpdateService: quick actions run on edits too; an edit down to commands only deletes the note.
  function updateNote(context: Context, note: FakeNote, body: string | null): Reply {
    const actor = mustWrite(context)
    if (!canEdit(note, actor)) return forbidden()
    if (body === null) return json(200, renderNote(note))
    const modelErrors = noteErrors(body)
    if (modelErrors.length > 0) return badRequest(`Note ${rubyInspect(modelErrors)}`)
    const extracted = extractQuickActions(body)
    const commands = runQuickActions(extracted.commands, actor, "edit", note.id, null)
    if (extracted.content === "" && extracted.commands.length > 0) {
      removeNote(note)
      if (commands.errors.length > 0) return badRequest(commands.errors.join(", "))
      return json(202, { commands_changes: commands.changes, summary: commands.messages })
    }
    note.body = extracted.content
    note.submittedBody = body
    note.updatedAt = now()
    return json(200, renderNote(note))
  }

  function deleteNote(context: Context): Reply {
    const failed = target(context, "noteable_id")
    if (failed) return failed
    const note = findNote(context.path.note_id)
    if (!note) return recordNotFound()
    if (!canEdit(note, mustWrite(context))) return forbidden()
    removeNote(note)
    return { status: 204 }
  }

  return routes
}
