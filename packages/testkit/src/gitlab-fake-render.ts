import { createHash } from "node:crypto"
import type { FakeCommit } from "./gitlab-fake-git"
import type { FakeNotes } from "./gitlab-fake-notes"
import type {
  Caller,
  FakeDiscussion,
  FakeMember,
  FakeNote,
  FakeUser,
  FakeVersion,
  FakeVersionFile,
} from "./gitlab-fake-types"
import { type FakeVersions, realSize } from "./gitlab-fake-versions"
import type { FakeWorld } from "./gitlab-fake-world"

// Rendering: the stored state as GitLab's API entities (UserBasic, Note, Discussion, diff, commit,
// version, MergeRequest, approvals), snake_case and in GitLab's field order.

export type FakeRender = ReturnType<typeof createRender>

export function createRender(
  world: FakeWorld,
  { hasConflicts }: Pick<FakeVersions, "hasConflicts">,
  { canApprove }: Pick<FakeNotes, "canApprove">,
) {
  const { options, git, state, mr, projectId, projectPath, iid, current } = world

  const userBasic = (user: FakeUser) => ({
    id: user.id,
    username: user.username,
    name: user.name,
    state: "active",
    locked: false,
    avatar_url: `https://www.gravatar.com/avatar/${createHash("md5").update(user.username).digest("hex")}?s=80&d=identicon`,
    web_url: `${world.baseUrl}/${user.username}`,
  })

  // API::Entities::Member: UserBasic merged with the membership; EE adds `membership_state`.
  // `created_by` (only when visible) and `group_saml_identity` (SSO groups) are left out.
  const renderMember = (member: FakeMember) => ({
    ...userBasic(member.user),
    access_level: member.accessLevel,
    created_at: member.createdAt,
    expires_at: member.expiresAt,
    ...((options.version ?? "17.6.0-ee").endsWith("-ee") ? { membership_state: "active" } : {}),
  })

  const renderNote = (note: FakeNote) => {
    const out: Record<string, unknown> = {
      id: note.id,
      type: note.type,
      body: note.body,
      attachment: null,
      author: userBasic(note.author),
      created_at: note.createdAt,
      updated_at: note.updatedAt,
      system: note.system,
      noteable_id: mr.id,
      noteable_type: "MergeRequest",
      project_id: projectId,
    }
    if (note.type === "DiffNote") {
      out.commit_id = note.commitId
      out.position = note.position
    }
    out.resolvable = note.resolvable
    if (note.resolvable) {
      out.resolved = note.resolved
      out.resolved_by = note.resolvedBy ? userBasic(note.resolvedBy) : null
      out.resolved_at = note.resolvedAt
    }
    out.confidential = note.internal
    out.internal = note.internal
    out.imported = false
    out.imported_from = "none"
    out.noteable_iid = iid
    out.commands_changes = {}
    return out
  }

  const renderDiscussion = (discussion: FakeDiscussion) => ({
    id: discussion.id,
    individual_note: discussion.individualNote,
    notes: discussion.notes.map(renderNote),
  })

  const renderDiff = (file: FakeVersionFile, unidiff: boolean) => ({
    diff:
      unidiff && file.diff !== "" && !file.binary
        ? `--- ${file.newFile ? "/dev/null" : `a/${file.oldPath}`}\n+++ ${file.deletedFile ? "/dev/null" : `b/${file.newPath}`}\n${file.diff}`
        : file.diff,
    collapsed: file.collapsed,
    too_large: file.tooLarge,
    new_path: file.newPath,
    old_path: file.oldPath,
    a_mode: file.aMode,
    b_mode: file.bMode,
    new_file: file.newFile,
    renamed_file: file.renamedFile,
    deleted_file: file.deletedFile,
    generated_file: file.generated,
  })

  const webUrl = () => `${world.baseUrl}/${projectPath}/-/merge_requests/${iid}`

  const renderCommit = (commit: FakeCommit) => ({
    id: commit.sha,
    short_id: commit.sha.slice(0, 8),
    created_at: commit.committedDate,
    parent_ids: commit.parentIds,
    title: commit.message.split("\n")[0] ?? "",
    message: commit.message,
    author_name: commit.authorName,
    author_email: commit.authorEmail,
    authored_date: commit.authoredDate,
    committer_name: commit.committerName,
    committer_email: commit.committerEmail,
    committed_date: commit.committedDate,
    trailers: {},
    extended_trailers: {},
    web_url: `${world.baseUrl}/${projectPath}/-/commit/${commit.sha}`,
  })

  const renderVersion = (version: FakeVersion) => ({
    id: version.id,
    head_commit_sha: version.headSha,
    base_commit_sha: version.baseSha,
    start_commit_sha: version.startSha,
    created_at: version.createdAt,
    merge_request_id: mr.id,
    state: version.overflow ? "overflow" : "collected",
    real_size: realSize(version),
    patch_id_sha: version.patchIdSha,
  })

  const unresolvedThreads = () =>
    state.discussions.filter((discussion) => discussion.resolvable && !discussion.resolved)

  const detailedMergeStatus = (): string => {
    if (mr.state !== "opened") return "not_open"
    if (mr.draft) return "draft_status"
    if (hasConflicts()) return "conflict"
    if (options.onlyAllowMergeIfAllDiscussionsAreResolved && unresolvedThreads().length > 0)
      return "discussions_not_resolved"
    if (state.approvals.length < (options.approvalsRequired ?? 0)) return "not_approved"
    if ((options.requestedChangesBlockMerge ?? true) && mr.requestedChangesBy.length > 0) return "requested_changes"
    return "mergeable"
  }

  const renderMergeRequest = (
    caller: Caller,
    expanded: boolean,
    extra: { divergedCommits?: boolean; rebaseInProgress?: boolean } = {},
  ) => {
    const version = current()
    const conflicts = hasConflicts()
    const out: Record<string, unknown> = {
      id: mr.id,
      iid,
      project_id: projectId,
      title: mr.title,
      description: mr.description,
      state: mr.state,
      created_at: mr.createdAt,
      updated_at: mr.updatedAt,
      merged_by: null,
      merge_user: null,
      merged_at: mr.mergedAt,
      closed_by: null,
      closed_at: mr.closedAt,
      target_branch: mr.targetBranch,
      source_branch: mr.sourceBranch,
      user_notes_count: state.notes.filter((note) => !note.system).length,
      upvotes: 0,
      downvotes: 0,
      author: userBasic(mr.author),
      assignees: [],
      assignee: null,
      reviewers: state.reviewers.map((reviewer) => userBasic(reviewer.user)),
      source_project_id: projectId,
      target_project_id: projectId,
      labels: [...mr.labels],
      draft: mr.draft,
      imported: false,
      imported_from: "none",
      work_in_progress: mr.draft,
      milestone: null,
      merge_when_pipeline_succeeds: false,
      merge_status: conflicts ? "cannot_be_merged" : "can_be_merged",
      detailed_merge_status: detailedMergeStatus(),
      merge_after: null,
      sha: version.headSha,
      merge_commit_sha: null,
      squash_commit_sha: null,
      discussion_locked: mr.discussionLocked,
      should_remove_source_branch: null,
      force_remove_source_branch: true,
      prepared_at: mr.createdAt,
      reference: `!${iid}`,
      references: { short: `!${iid}`, relative: `!${iid}`, full: `${projectPath}!${iid}` },
      web_url: webUrl(),
      time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
      squash: false,
      squash_on_merge: false,
      task_completion_status: { count: 0, completed_count: 0 },
      has_conflicts: conflicts,
      blocking_discussions_resolved: !(
        options.onlyAllowMergeIfAllDiscussionsAreResolved && unresolvedThreads().length > 0
      ),
      approvals_before_merge: null,
    }
    if (!expanded) return out
    Object.assign(out, {
      subscribed: caller.user !== null && caller.user.id === mr.author.id,
      changes_count: realSize(version),
      latest_build_started_at: null,
      latest_build_finished_at: null,
      first_deployed_to_production_at: null,
      pipeline: null,
      head_pipeline: null,
      diff_refs: { base_sha: version.baseSha, head_sha: version.headSha, start_sha: version.startSha },
      merge_error: null,
      first_contribution: false,
      user: { can_merge: caller.user !== null },
    })
    if (extra.divergedCommits) {
      const behind = git.run(["rev-list", "--count", `${version.headSha}..${version.startSha}`])
      out.diverged_commits_count = Number.parseInt(behind.stdout.trim(), 10) || 0
    }
    if (extra.rebaseInProgress) out.rebase_in_progress = false
    return out
  }

  const approvalsEntity = (caller: Caller) => {
    const approved = caller.user !== null && state.approvals.some((approval) => approval.user.id === caller.user!.id)
    return {
      user_has_approved: approved,
      user_can_approve: caller.user !== null && canApprove(caller.user),
      approved: state.approvals.length > 0,
      approved_by: state.approvals.map((approval) => ({
        user: userBasic(approval.user),
        approved_at: approval.approvedAt,
      })),
    }
  }

  return {
    userBasic,
    renderMember,
    renderNote,
    renderDiscussion,
    renderDiff,
    webUrl,
    renderCommit,
    renderVersion,
    detailedMergeStatus,
    renderMergeRequest,
    approvalsEntity,
  }
}
