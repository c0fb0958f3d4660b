import { randomBytes } from "node:crypto"
import { appliesToMergeRequest, type ExtractedCommand, extractQuickActions } from "./gitlab-fake-quick-actions"
import type {
  FakeDiscussion,
  FakeNote,
  FakePosition,
  FakeQuickAction,
  FakeUser,
  ReviewerState,
} from "./gitlab-fake-types"
import type { FakeWorld } from "./gitlab-fake-world"

// Notes, threads, approvals, reviewers: how GitLab's services store a note (and the quick actions
// in it), turn a comment into a thread, resolve, approve, unapprove and change reviewer states.

interface NewNote {
  author: FakeUser
  body: string
  type: FakeNote["type"]
  discussion: FakeDiscussion | null
  position?: FakePosition | null
  lineCode?: string | null
  commitId?: string | null
  internal?: boolean
  via: FakeQuickAction["via"]
  mergeRequestDiffHeadSha?: string | null
}

export type FakeNotes = ReturnType<typeof createNotes>

export function createNotes(world: FakeWorld) {
  const { options, state, mr, users, now, current } = world

  const syncDiscussion = (discussion: FakeDiscussion) => {
    const resolvable = discussion.notes.filter((note) => note.resolvable)
    discussion.resolvable = resolvable.length > 0
    discussion.resolved = resolvable.length > 0 && resolvable.every((note) => note.resolved)
  }

  const newDiscussionId = () => randomBytes(20).toString("hex")

  const storeNote = (note: FakeNote, discussion: FakeDiscussion | null): FakeDiscussion => {
    state.notes.push(note)
    const thread = discussion ?? {
      id: note.discussionId,
      individualNote: note.type === null,
      notes: [],
      resolvable: false,
      resolved: false,
    }
    if (!discussion) state.discussions.push(thread)
    thread.notes.push(note)
    syncDiscussion(thread)
    mr.updatedAt = note.createdAt
    return thread
  }

  const systemNote = (body: string, actor: FakeUser): FakeNote => {
    const at = now()
    const note: FakeNote = {
      id: world.ids.note++,
      discussionId: newDiscussionId(),
      type: null,
      body,
      submittedBody: body,
      author: actor,
      system: true,
      internal: false,
      createdAt: at,
      updatedAt: at,
      position: null,
      originalPosition: null,
      lineCode: null,
      commitId: null,
      resolvable: false,
      resolved: false,
      resolvedBy: null,
      resolvedAt: null,
    }
    storeNote(note, null)
    return note
  }

  const reviewerOf = (user: FakeUser) => state.reviewers.find((reviewer) => reviewer.user.id === user.id)
  const approvedBy = (user: FakeUser) => state.approvals.some((approval) => approval.user.id === user.id)

  const canApprove = (user: FakeUser) =>
    mr.state !== "merged" && !approvedBy(user) && (user.id !== mr.author.id || options.authorCanApprove === true)

  const approve = (user: FakeUser, via: "api" | "quick_action") => {
    const at = now()
    state.approvals.push({ user, sha: current().headSha, approvedAt: at, via })
    state.approvalEvents.push({ action: "approve", user, sha: current().headSha, at, via })
    systemNote("approved this merge request", user)
    // ApprovalService → UpdateReviewerStateService(..., "approved"): clears this user's change request.
    replaceAll(
      mr.requestedChangesBy,
      mr.requestedChangesBy.filter((requester) => requester.id !== user.id),
    )
    const reviewer = reviewerOf(user)
    if (reviewer) reviewer.state = "approved"
  }

  const unapprove = (user: FakeUser, via: "api" | "quick_action") => {
    replaceAll(
      state.approvals,
      state.approvals.filter((approval) => approval.user.id !== user.id),
    )
    state.approvalEvents.push({ action: "unapprove", user, sha: current().headSha, at: now(), via })
    systemNote("unapproved this merge request", user)
    const reviewer = reviewerOf(user)
    if (reviewer) reviewer.state = "unapproved"
  }

  // MergeRequests::UpdateReviewerStateService
  const updateReviewerState = (user: FakeUser, reviewerState: ReviewerState): string[] => {
    const reviewer = reviewerOf(user)
    if (!reviewer) return ["Reviewer not found"]
    if (reviewer.state === "approved" && reviewerState !== "requested_changes" && reviewerState !== "unapproved")
      return ["Reviewer has approved"]
    reviewer.state = reviewerState
    if (reviewerState === "requested_changes") {
      if (!mr.requestedChangesBy.some((requester) => requester.id === user.id)) mr.requestedChangesBy.push(user)
      systemNote("requested changes", user)
      if (approvedBy(user)) unapprove(user, "api")
    }
    if (reviewerState === "approved")
      replaceAll(
        mr.requestedChangesBy,
        mr.requestedChangesBy.filter((requester) => requester.id !== user.id),
      )
    return []
  }

  const requestChanges = (user: FakeUser, via: "graphql" | "quick_action"): string[] => {
    const errors = updateReviewerState(user, "requested_changes")
    state.requestChanges.push({ via, user, sha: current().headSha, at: now(), applied: errors.length === 0, errors })
    return errors
  }

  const setReviewers = (next: FakeUser[], actor: FakeUser) => {
    const before = [...state.reviewers]
    const added = next.filter((user) => !before.some((reviewer) => reviewer.user.id === user.id))
    const removed = before.filter((reviewer) => !next.some((user) => user.id === reviewer.user.id))
    const at = now()
    replaceAll(
      state.reviewers,
      next.map(
        (user) =>
          before.find((reviewer) => reviewer.user.id === user.id) ?? {
            user,
            state: "unreviewed" as ReviewerState,
            createdAt: at,
          },
      ),
    )
    if (added.length > 0)
      systemNote(`requested review from ${added.map((user) => `@${user.username}`).join(" and ")}`, actor)
    if (removed.length > 0)
      systemNote(
        `removed review request for ${removed.map((reviewer) => `@${reviewer.user.username}`).join(" and ")}`,
        actor,
      )
  }

  // Gitlab::QuickActions::UsersExtractor, for known users: "@name", "name" or "me".
  const usersIn = (text: string | null, actor: FakeUser): FakeUser[] => {
    const found: FakeUser[] = []
    for (const word of (text ?? "").split(/[\s,]+/)) {
      const name = word.replace(/^@/, "")
      const user = name === "me" ? actor : users.find((candidate) => candidate.username === name)
      if (user && !found.includes(user)) found.push(user)
    }
    return found
  }

  // QuickActions::InterpretService, for the commands that matter to a reviewer bot.
  const runQuickActions = (
    commands: ExtractedCommand[],
    actor: FakeUser,
    via: FakeQuickAction["via"],
    noteId: number | null,
    headSha: string | null,
  ): { messages: string[]; errors: string[]; changes: Record<string, unknown> } => {
    const messages: string[] = []
    const errors: string[] = []
    const changes: Record<string, unknown> = {}
    for (const command of commands) {
      const outcome = applyCommand(command, actor, headSha, changes)
      state.executedQuickActions.push({
        ...command,
        user: actor,
        noteId,
        via,
        applied: outcome.applied,
        message: outcome.message,
        at: now(),
      })
      if (outcome.applied && outcome.message) messages.push(outcome.message)
      if (!outcome.applied) errors.push(outcome.message)
    }
    return { messages, errors, changes }
  }

  const applyCommand = (
    command: ExtractedCommand,
    actor: FakeUser,
    headSha: string | null,
    changes: Record<string, unknown>,
  ): { applied: boolean; message: string } => {
    const refused = { applied: false, message: `Could not apply ${command.name} command.` }
    if (!appliesToMergeRequest(command.name)) return refused
    const open = mr.state === "opened"
    switch (command.name) {
      case "approve":
        if (!canApprove(actor)) return refused
        approve(actor, "quick_action")
        return { applied: true, message: "Approved the current merge request." }
      case "unapprove":
        if (mr.state === "merged" || !approvedBy(actor)) return refused
        unapprove(actor, "quick_action")
        return { applied: true, message: "Unapproved the current merge request." }
      case "request_changes": {
        if (!reviewerOf(actor)) return refused
        const errors = requestChanges(actor, "quick_action")
        return { applied: true, message: errors[0] ?? "Changes requested to the current merge request." }
      }
      case "submit_review": {
        const wanted = (command.argument ?? "reviewed").trim()
        if (wanted === "approve") {
          if (canApprove(actor)) approve(actor, "quick_action")
          return { applied: true, message: "Submitted the current review. Approved the current merge request." }
        }
        if (wanted === "requested_changes") requestChanges(actor, "quick_action")
        else if (["unreviewed", "reviewed", "approved", "unapproved", "review_started"].includes(wanted))
          updateReviewerState(actor, wanted as ReviewerState)
        return { applied: true, message: "Submitted the current review." }
      }
      case "assign_reviewer":
      case "request_review": {
        const wanted = usersIn(command.argument, actor)
        if (wanted.length === 0)
          return { applied: true, message: "Failed to assign a reviewer because no user was specified." }
        const next = [
          ...state.reviewers.map((reviewer) => reviewer.user),
          ...wanted.filter((user) => !reviewerOf(user)),
        ]
        setReviewers(next, actor)
        changes.reviewer_ids = next.map((user) => user.id)
        return {
          applied: true,
          message: `Assigned ${wanted.map((user) => `@${user.username}`).join(" and ")} as reviewer.`,
        }
      }
      case "unassign_reviewer": {
        if (state.reviewers.length === 0) return refused
        const named = usersIn(command.argument, actor)
        const next =
          named.length > 0
            ? state.reviewers
                .map((reviewer) => reviewer.user)
                .filter((user) => !named.some((other) => other.id === user.id))
            : []
        setReviewers(next, actor)
        changes.reviewer_ids = next.map((user) => user.id)
        return { applied: true, message: "Removed reviewer." }
      }
      case "merge":
        if (!open) return refused
        if (!headSha)
          return { applied: true, message: "The `/merge` quick action requires the SHA of the head of the branch." }
        if (headSha !== current().headSha)
          return { applied: true, message: "Branch has been updated since the merge was requested." }
        mr.state = "merged"
        mr.mergedAt = now()
        changes.merge = headSha
        systemNote(`merged`, actor)
        return { applied: true, message: "Merged this merge request." }
      case "close":
        if (!open) return refused
        mr.state = "closed"
        mr.closedAt = now()
        changes.state_event = "close"
        systemNote("closed", actor)
        return { applied: true, message: "Closed this merge request." }
      case "reopen":
        if (mr.state !== "closed") return refused
        mr.state = "opened"
        mr.closedAt = null
        changes.state_event = "reopen"
        systemNote("reopened", actor)
        return { applied: true, message: "Reopened this merge request." }
      case "title":
        if (!command.argument) return refused
        mr.title = command.argument
        changes.title = command.argument
        return { applied: true, message: `Changed the title to "${command.argument}".` }
      case "draft":
        mr.draft = true
        changes.wip_event = "draft"
        return { applied: true, message: "Marked this merge request as a draft." }
      case "ready":
        changes.wip_event = mr.draft ? "ready" : undefined
        mr.draft = false
        return { applied: true, message: "Marked this merge request as ready." }
      case "label":
      case "relabel": {
        const labels = labelsIn(command.argument)
        if (labels.length === 0) return refused
        mr.labels = command.name === "relabel" ? labels : [...new Set([...mr.labels, ...labels])]
        changes.add_label_ids = labels
        return { applied: true, message: `Added ${labels.map((label) => `~${label}`).join(" ")} label.` }
      }
      case "unlabel": {
        const labels = labelsIn(command.argument)
        mr.labels = labels.length === 0 ? [] : mr.labels.filter((label) => !labels.includes(label))
        changes.remove_label_ids = labels
        return { applied: true, message: "Removed labels." }
      }
      case "lock":
        mr.discussionLocked = true
        return { applied: true, message: "Locked the discussion." }
      case "unlock":
        mr.discussionLocked = false
        return { applied: true, message: "Unlocked the discussion." }
      default:
        return { applied: true, message: "" }
    }
  }

  // Notes::CreateService: quick actions run before saving; a commands-only note is not stored.
  const createNote = (
    input: NewNote,
  ): {
    note: FakeNote | null
    discussion: FakeDiscussion | null
    commands: ReturnType<typeof runQuickActions> & { only: boolean; found: boolean }
  } => {
    const id = world.ids.note++
    const extracted = extractQuickActions(input.body)
    const commands = runQuickActions(
      extracted.commands,
      input.author,
      input.via,
      extracted.content === "" ? null : id,
      input.mergeRequestDiffHeadSha ?? null,
    )
    const only = extracted.content === "" && extracted.commands.length > 0
    if (only) return { note: null, discussion: null, commands: { ...commands, only, found: true } }
    const at = now()
    const discussion = input.discussion
    // A reply to a resolved thread is stored resolved (Notes::BuildService#new_note).
    const resolvable = input.type !== null
    const resolved = resolvable && discussion?.resolved === true
    const resolver = resolved ? (discussion?.notes.find((note) => note.resolvedBy)?.resolvedBy ?? input.author) : null
    const note: FakeNote = {
      id,
      discussionId: discussion?.id ?? newDiscussionId(),
      type: input.type,
      body: extracted.content,
      submittedBody: input.body,
      author: input.author,
      system: false,
      internal: input.internal ?? false,
      createdAt: at,
      updatedAt: at,
      position: input.position ?? null,
      originalPosition: input.position ?? null,
      lineCode: input.lineCode ?? null,
      commitId: input.commitId ?? null,
      resolvable,
      resolved,
      resolvedBy: resolved ? resolver : null,
      resolvedAt: resolved ? at : null,
    }
    const thread = storeNote(note, discussion)
    return { note, discussion: thread, commands: { ...commands, only, found: extracted.commands.length > 0 } }
  }

  // Discussion#convert_to_discussion!: replying to a plain comment turns it into a thread.
  const convertToDiscussion = (discussion: FakeDiscussion) => {
    if (!discussion.individualNote) return
    discussion.individualNote = false
    for (const note of discussion.notes) {
      if (note.type === null && !note.system) {
        note.type = "DiscussionNote"
        note.resolvable = true
      }
    }
    syncDiscussion(discussion)
  }

  const reply = (discussion: FakeDiscussion, authorUser: FakeUser, body: string, via: FakeQuickAction["via"]) => {
    convertToDiscussion(discussion)
    const first = discussion.notes[0]!
    // DiffDiscussion#reply_attributes: replies carry the thread's type and position.
    return createNote({
      author: authorUser,
      body,
      type: first.type === "DiffNote" ? "DiffNote" : "DiscussionNote",
      discussion,
      position: first.position,
      lineCode: first.lineCode,
      commitId: first.commitId,
      internal: first.internal,
      via,
    })
  }

  const setResolved = (notes: FakeNote[], resolved: boolean, actor: FakeUser) => {
    const at = now()
    for (const note of notes) {
      if (!note.resolvable) continue
      if (resolved && !note.resolved) {
        note.resolved = true
        note.resolvedBy = actor
        note.resolvedAt = at
      }
      if (!resolved) {
        note.resolved = false
        note.resolvedBy = null
        note.resolvedAt = null
      }
    }
  }

  const removeNote = (note: FakeNote) => {
    replaceAll(
      state.notes,
      state.notes.filter((other) => other.id !== note.id),
    )
    const discussion = state.discussions.find((other) => other.id === note.discussionId)
    if (!discussion) return
    replaceAll(
      discussion.notes,
      discussion.notes.filter((other) => other.id !== note.id),
    )
    if (discussion.notes.length === 0)
      replaceAll(
        state.discussions,
        state.discussions.filter((other) => other !== discussion),
      )
    else syncDiscussion(discussion)
  }

  const canEdit = (note: FakeNote, user: FakeUser) => !note.system && note.author.id === user.id

  return {
    syncDiscussion,
    systemNote,
    reviewerOf,
    approvedBy,
    canApprove,
    approve,
    unapprove,
    requestChanges,
    setReviewers,
    runQuickActions,
    createNote,
    reply,
    setResolved,
    removeNote,
    canEdit,
  }
}

/** Replaces an array's contents in place, so references held by tests stay live. */
function replaceAll<T>(target: T[], items: T[]): void {
  target.splice(0, target.length, ...items)
}

export function labelsIn(text: string | null): string[] {
  if (!text) return []
  const labels: string[] = []
  for (const match of text.matchAll(/~"([^"]+)"|~?([^\s,~"]+)/g)) labels.push((match[1] ?? match[2] ?? "").trim())
  return labels.filter(Boolean)
}
