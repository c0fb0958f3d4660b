import { createHash } from "node:crypto"
import type { FakeRender } from "./gitlab-fake-render"
import type {
  FakeNote,
  FakeUser,
  GitlabNoteWebhook,
  GitlabWebhookMergeRequest,
  GitlabWebhookProject,
  GitlabWebhookUser,
} from "./gitlab-fake-types"
import type { FakeVersions } from "./gitlab-fake-versions"
import { type FakeWorld, titleCase } from "./gitlab-fake-world"

// Webhook bodies built from the fake's own state: what a project webhook POSTs for a note on the
// merge request (Gitlab::DataBuilder::Note, Gitlab::HookData::NoteBuilder and MergeRequestBuilder,
// User#hook_attrs, Project#hook_attrs, Commit#hook_attrs), and what a pipeline triggered by that
// webhook reads from TRIGGER_PAYLOAD. Field names, order and time formats follow a recorded
// GitLab.com payload (docs/gitlab.md, "Note webhooks and triggered pipelines"). Nothing is sent:
// a test hands the body to the code under test.

export type FakeWebhooks = ReturnType<typeof createWebhooks>

export function createWebhooks(
  world: FakeWorld,
  { hasConflicts }: Pick<FakeVersions, "hasConflicts">,
  { webUrl, detailedMergeStatus }: Pick<FakeRender, "webUrl" | "detailedMergeStatus">,
) {
  const { options, state, mr, projectId, projectPath, iid, current } = world

  const user = (account: FakeUser): GitlabWebhookUser => ({
    id: account.id,
    name: account.name,
    username: account.username,
    avatar_url: `https://www.gravatar.com/avatar/${createHash("md5").update(account.username).digest("hex")}?s=80&d=identicon`,
    // User#webhook_email: the public email, else "[REDACTED]"; the fake's users have none.
    email: "[REDACTED]",
  })

  const project = (): GitlabWebhookProject => {
    const webProject = `${world.baseUrl}/${projectPath}`
    const host = new URL(world.baseUrl).hostname
    const ssh = `git@${host}:${projectPath}.git`
    const visibility = options.visibility ?? "private"
    return {
      id: projectId,
      name: projectPath.split("/").pop() ?? projectPath,
      description: null,
      web_url: webProject,
      avatar_url: null,
      git_ssh_url: ssh,
      git_http_url: `${webProject}.git`,
      // namespace.name: the group's display name.
      namespace: titleCase(projectPath.split("/").slice(0, -1).pop() ?? projectPath),
      visibility_level: visibility === "public" ? 20 : 0,
      path_with_namespace: projectPath,
      default_branch: mr.targetBranch,
      ci_config_path: "",
      homepage: webProject,
      url: ssh,
      ssh_url: ssh,
      http_url: `${webProject}.git`,
    }
  }

  const mergeRequest = (): GitlabWebhookMergeRequest => {
    const version = current()
    const head = version.commits.find((commit) => commit.sha === version.headSha) ?? version.commits[0]
    if (!head) throw new Error("gitlab-fake: the merge request's current version has no commits")
    const stateId = { opened: 1, closed: 2, merged: 3, locked: 4 } as const
    const unresolved = state.discussions.some((discussion) => discussion.resolvable && !discussion.resolved)
    return {
      assignee_id: null,
      author_id: mr.author.id,
      created_at: hookTime(mr.createdAt),
      description: mr.description,
      draft: mr.draft,
      head_pipeline_id: null,
      id: mr.id,
      iid,
      last_edited_at: null,
      last_edited_by_id: null,
      merge_commit_sha: null,
      merge_error: null,
      merge_params: { force_remove_source_branch: "1" },
      merge_status: hasConflicts() ? "cannot_be_merged" : "can_be_merged",
      merge_user_id: null,
      merge_when_pipeline_succeeds: false,
      milestone_id: null,
      source_branch: mr.sourceBranch,
      source_project_id: projectId,
      state_id: stateId[mr.state],
      target_branch: mr.targetBranch,
      target_project_id: projectId,
      time_estimate: 0,
      title: mr.title,
      updated_at: hookTime(mr.updatedAt),
      updated_by_id: null,
      url: webUrl(),
      source: project(),
      target: project(),
      last_commit: {
        id: head.sha,
        message: head.message,
        title: head.message.split(/[\r\n]/, 1)[0] ?? "",
        // Commit#timestamp is committed_date.xmlschema: seconds and the committer's offset.
        timestamp: head.committedDate.replace(/\.\d{3}(?=[+-]|Z$)/, ""),
        url: `${world.baseUrl}/${projectPath}/-/commit/${head.sha}`,
        author: { name: head.authorName, email: head.authorEmail },
      },
      work_in_progress: mr.draft,
      total_time_spent: 0,
      time_change: 0,
      human_total_time_spent: null,
      human_time_change: null,
      human_time_estimate: null,
      assignee_ids: [],
      reviewer_ids: state.reviewers.map((reviewer) => reviewer.user.id),
      labels: mr.labels.map((title) => ({
        // The fake's labels are names only: a stable id and GitLab's default label colour.
        id: Number.parseInt(createHash("sha1").update(`label\0${title}`).digest("hex").slice(0, 6), 16),
        title,
        color: "#6699cc",
        project_id: projectId,
        created_at: hookTime(mr.createdAt),
        updated_at: hookTime(mr.createdAt),
        template: false,
        description: null,
        type: "ProjectLabel" as const,
        group_id: null,
      })),
      state: mr.state,
      blocking_discussions_resolved: !(options.onlyAllowMergeIfAllDiscussionsAreResolved && unresolved),
      first_contribution: false,
      detailed_merge_status: detailedMergeStatus(),
    }
  }

  const noteOf = (noteId: number): FakeNote => {
    const note = state.notes.find((candidate) => candidate.id === noteId)
    if (!note) throw new Error(`gitlab-fake: no note ${noteId}`)
    // Notes::PostProcessService skips system notes: GitLab runs no note hooks for them.
    if (note.system) throw new Error(`gitlab-fake: note ${noteId} is a system note, for which GitLab sends no webhook`)
    return note
  }

  const noteWebhookPayload = (noteId: number, action: "create" | "update" = "create"): GitlabNoteWebhook => {
    const note = noteOf(noteId)
    const target = project()
    return {
      object_kind: "note",
      event_type: note.internal ? "confidential_note" : "note",
      user: user(note.author),
      project_id: projectId,
      project: target,
      object_attributes: {
        attachment: null,
        author_id: note.author.id,
        change_position: null,
        commit_id: note.commitId,
        created_at: hookTime(note.createdAt),
        discussion_id: note.discussionId,
        id: note.id,
        internal: note.internal,
        line_code: note.lineCode,
        note: note.body,
        noteable_id: mr.id,
        noteable_type: "MergeRequest",
        original_position: note.originalPosition,
        position: note.position,
        project_id: projectId,
        resolved_at: note.resolvedAt === null ? null : hookTime(note.resolvedAt),
        resolved_by_id: note.resolvedBy?.id ?? null,
        resolved_by_push: null,
        st_diff: null,
        system: false,
        type: note.type,
        updated_at: hookTime(note.updatedAt),
        updated_by_id: null,
        description: note.body,
        url: `${webUrl()}#note_${note.id}`,
        action,
      },
      repository: { name: target.name, url: target.url, description: target.description, homepage: target.homepage },
      merge_request: mergeRequest(),
    }
  }

  // Ci::PipelineTriggerService#payload_variable: `params.except(:token).to_json`, where Grape's
  // params are the JSON body with the route's `id` and `ref` merged in, and the endpoint has set
  // `variables` to `{}`.
  const triggerPayload = (noteId: number, ref: string = mr.targetBranch, action?: "create" | "update"): string =>
    JSON.stringify({ ...noteWebhookPayload(noteId, action), id: String(projectId), ref, variables: {} })

  return { noteWebhookPayload, triggerPayload }
}

/** A time as GitLab's webhooks write model timestamps: "2023-05-25 19:04:19 UTC". */
function hookTime(iso: string): string {
  const date = new Date(iso)
  return `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`
}
