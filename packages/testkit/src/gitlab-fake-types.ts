import type { FakeCommit, FakeDiffFile } from "./gitlab-fake-git"
import type { ParsedBody } from "./gitlab-fake-http"

// The types of the GitLab fake: what a test imports (re-exported by gitlab-fake.ts and the package
// index) and `Caller`, the one internal type every section shares. No code.

/**
 * A local GitLab for tests: a real HTTP server on 127.0.0.1 serving the REST v4 routes and the
 * GraphQL mutation an MR reviewer uses, for ONE merge request whose diff comes from a real git
 * repository. Built to docs/gitlab.md ("The contract of the GitLab fake") and GitLab's own
 * source; see `GitlabFakeOptions` for the places where GitLab versions or tiers differ.
 */
export interface GitlabFake {
  /** Base URL, e.g. http://127.0.0.1:PORT — gitbeaker's `host`; the API is at `${url}/api/v4`. */
  url: string
  /** `${url}/api/v4` (what CI_API_V4_URL would be). */
  apiUrl: string
  projectId: number
  projectPath: string
  iid: number
  /** Accepted credentials: `bot` (project access token of the bot user), `human` (the MR author's PAT), `job` (a CI_JOB_TOKEN). */
  tokens: { bot: string; job: string; human: string }
  /** Everything the fake saw and stored; mutate only through the methods below. */
  state: FakeState
  /** Re-reads the repository: a push to the source branch creates a new version and (by default) resets approvals. */
  push(): Promise<void>
  /**
   * Adds a note as a human (default: the MR author): a new comment, a reply in `discussionId`, or
   * with `position` a new thread on a line of the current diff version (a DiffNote, validated like
   * the API's; throws when GitLab would refuse it).
   */
  addHumanNote(
    body: string,
    options?: { author?: string; discussionId?: string; position?: HumanNotePosition; internal?: boolean },
  ): FakeNote
  /** Resolves a thread as the MR author. */
  resolveAsHuman(discussionId: string): void
  /** Adds a system note (e.g. "changed the description"), as GitLab does for events. */
  addSystemNote(body: string, options?: { author?: string }): FakeNote
  /** Edits the MR description as its author would in the UI: GitLab adds a "changed the description" system note. */
  setDescription(description: string): void
  /**
   * Makes `username` a member of the project with `accessLevel` (10 guest, 20 reporter, 30 developer,
   * 40 maintainer, 50 owner), or removes the membership with `null`. A username not seen yet becomes
   * a user. Returns the user (its `id` is what `GET /projects/:id/members/all/:user_id` takes).
   */
  setMember(username: string, accessLevel: GitlabAccessLevel | null): FakeUser
  /**
   * The JSON body a project webhook POSTs for the stored note `noteId` (`X-Gitlab-Event: Note Hook`,
   * or `Confidential Note Hook` for an internal note): `object_kind: "note"`, the note's author as
   * `user`, the project, `object_attributes` (the note, with `position` for a DiffNote) and the
   * merge request as it is now. Throws for an unknown or a system note (GitLab sends none for those).
   * See docs/gitlab.md, "Note webhooks and triggered pipelines".
   */
  noteWebhookPayload(noteId: number, options?: { action?: "create" | "update" }): GitlabNoteWebhook
  /**
   * The text GitLab writes to the `TRIGGER_PAYLOAD` file of a pipeline that this note's webhook
   * triggers through `…/projects/:id/ref/:ref/trigger/pipeline?token=…`: the webhook body with the
   * route's `id` and `ref` and `variables: {}` added, without `token` (Ci::PipelineTriggerService, as
   * read). `ref` defaults to the target branch.
   */
  triggerPayload(noteId: number, options?: { ref?: string; action?: "create" | "update" }): string
  /**
   * Makes the next matching request(s) fail (first registered rule first). `path` is tested against
   * the raw request path, e.g. `/api/v4/projects/42/merge_requests/7/notes`.
   */
  failNext(match: { method?: string; path?: RegExp }, failure: FakeFailure, times?: number): void
  /**
   * Holds the next `count` matching requests before they are processed, and lets them all go on
   * together once the last has arrived: two clients then act on the same state, as two pipelines
   * publishing at once do. `arrived` resolves when all are held. Not a GitLab behaviour: a test tool.
   */
  holdTogether(match: { method?: string; path?: RegExp }, count: number): { arrived: Promise<void> }
  close(): Promise<void>
}

/** Options of {@link startGitlabFake}. */
export interface GitlabFakeOptions {
  /** A real git repository holding both branches. */
  repoDir: string
  sourceBranch: string
  targetBranch: string
  /** "group/project" (default "group/project"). */
  projectPath?: string
  /** Default 42. */
  projectId?: number
  /** Default 7. */
  iid?: number
  title?: string
  description?: string
  /** Username of the MR author, who owns `tokens.human` (default "alice"). */
  author?: string
  /** Username of the bot behind `tokens.bot` (default `project_<projectId>_bot`). */
  botUsername?: string
  /** Usernames that are reviewers from the start (e.g. the bot's username). */
  reviewers?: string[]
  labels?: string[]
  draft?: boolean
  /**
   * "private" (default): anonymous reads answer 404 "Project Not Found", as GitLab does for a
   * private project. "public": anonymous GETs of MR routes succeed (notes/discussions still need a token).
   */
  visibility?: "private" | "public"
  /**
   * GitLab 18.3+ (fine-grained job-token permissions) accepts CI_JOB_TOKEN on `GET` of the MR, the MR
   * list and its notes. Default false: the job token is ignored everywhere (older GitLab; see
   * docs/gitlab.md, "Tokens"), so reads answer 404 "Project Not Found" / 401 like an anonymous
   * request. Writes always refuse it.
   */
  jobTokenReads?: boolean
  /**
   * Which SHAs a DiffNote position may carry. "current" (default, the contract in docs/gitlab.md):
   * exactly the latest version's base/start/head — stale SHAs give the 400 line_code error.
   * "any-version": those of any version of this MR. "repository": any commits git can diff, which
   * is what GitLab itself accepts (a note on stale SHAs is stored and shown as outdated).
   */
  positionShas?: "current" | "any-version" | "repository"
  /**
   * GitLab accepts an unchanged line outside the hunks when old_line and new_line are both given and
   * consistent (Gitlab::Diff::LinesUnfolder). Default true; false accepts hunk lines only.
   */
  unfoldContextLines?: boolean
  /** "Remove all approvals when commits are added" (default true). */
  resetApprovalsOnPush?: boolean
  /** Project setting "All threads must be resolved" (default false). */
  onlyAllowMergeIfAllDiscussionsAreResolved?: boolean
  /**
   * Whether the MR author may approve their own MR. Default false: EE's "Prevent approval by author"
   * (ApprovalService then refuses → 401). GitLab CE allows it.
   */
  authorCanApprove?: boolean
  /** Approvals needed before `detailed_merge_status` leaves "not_approved" (default 0). */
  approvalsRequired?: number
  /** False simulates an instance without the `mergeRequestRequestChanges` GraphQL mutation (default true). */
  requestChangesMutation?: boolean
  /** Requested changes block the merge (Premium/Ultimate, 17.2+); default true. */
  requestedChangesBlockMerge?: boolean
  /** Per-file patch size at which a diff comes back `too_large` with `diff: ""` (default 200 KiB). */
  maxPatchBytes?: number
  /** Paths whose diff comes back `collapsed: true` with `diff: ""`. */
  collapsedPaths?: string[]
  /**
   * GitLab's "Maximum diff files" (`diff_max_files`, default 1000, at most 3000). A version stores
   * only the first this many files (MergeRequestDiff#save_diffs, Gitaly's collection limit): the rest
   * are in no `/diffs`, `/changes` or `/versions/:id` answer, and `changes_count` and `real_size` say
   * "1000+", the version's `state` "overflow" and `/changes` `overflow: true`.
   */
  maxDiffFiles?: number
  /** Paths reported as `generated_file: true` (in addition to gitlab-generated/linguist-generated attributes). */
  generatedPaths?: string[]
  /** What `GET /version` reports (default "17.6.0-ee"). */
  version?: string
  /**
   * Project members by username and their access level; `null` makes someone not a member (a fork's
   * contributor, say). Merged over the default: the MR author and the bot as Developer (30). Users not
   * seen yet are created. Read through `GET /projects/:id/members[/all]/:user_id`; nothing else in
   * the fake checks them.
   */
  members?: Record<string, GitlabAccessLevel | null>
}

/** A project role as GitLab's API numbers it: 10 guest, 20 reporter, 30 developer, 40 maintainer, 50 owner. */
export type GitlabAccessLevel = 10 | 20 | 30 | 40 | 50

/** Where {@link GitlabFake.addHumanNote} starts a thread on a line, against the current version's SHAs. */
export interface HumanNotePosition {
  /** The file's path after the change; `oldPath` defaults to it (give both for a rename). */
  newPath: string
  oldPath?: string
  /** As in the API: an added line takes `newLine` only, a removed line `oldLine` only, context both. */
  newLine?: number | null
  oldLine?: number | null
}

/** A project membership (no groups in the fake, so every member is a direct member). */
export interface FakeMember {
  user: FakeUser
  accessLevel: GitlabAccessLevel
  createdAt: string
  expiresAt: string | null
}

/** An injected failure for {@link GitlabFake.failNext}. */
export type FakeFailure =
  /** Rack::Attack throttle: text/plain "Retry later\n" with Retry-After and RateLimit-* headers; `rateLimitHeaders: false` gives the application-level limit instead (JSON, no headers). */
  | { status: 429; retryAfter?: number; rateLimitHeaders?: boolean }
  /** A proxy 502. `afterStore: true` lets GitLab process (and store) the request first. */
  | { status: 502; afterStore: boolean }
  /** Any status with a JSON body (default `{"message":"<status> <reason>"}`); nothing is processed. */
  | { status: number; body?: unknown }

/** A user known to the fake. */
export interface FakeUser {
  id: number
  username: string
  name: string
  bot: boolean
}

/** A DiffNote position exactly as GitLab returns it (snake_case, GitLab's shape). */
export interface FakePosition {
  base_sha: string
  start_sha: string
  head_sha: string
  old_path: string | null
  new_path: string | null
  position_type: "text" | "image" | "file"
  old_line?: number | null
  new_line?: number | null
  line_range?: unknown
  width?: number | null
  height?: number | null
  x?: number | null
  y?: number | null
  ignore_whitespace_change?: boolean
}

/** A stored note. */
export interface FakeNote {
  id: number
  discussionId: string
  type: "DiffNote" | "DiscussionNote" | null
  /** The stored body (quick-action lines removed, as GitLab stores it). */
  body: string
  /** The body as it was submitted. */
  submittedBody: string
  author: FakeUser
  system: boolean
  internal: boolean
  createdAt: string
  updatedAt: string
  position: FakePosition | null
  /** The position as first posted (GitLab's original_position); `position` follows later pushes. */
  originalPosition: FakePosition | null
  /** GitLab's line code "<sha1(path)>_<old>_<new>" for text DiffNotes. */
  lineCode: string | null
  commitId: string | null
  resolvable: boolean
  resolved: boolean
  resolvedBy: FakeUser | null
  resolvedAt: string | null
}

/** A thread: a plain comment (`individualNote`) or a discussion of one or more notes. */
export interface FakeDiscussion {
  id: string
  individualNote: boolean
  notes: FakeNote[]
  /** True when it has resolvable notes. */
  resolvable: boolean
  /** True when all its resolvable notes are resolved. */
  resolved: boolean
}

/** One file of a diff version, with the flags GitLab computes for the API. */
export interface FakeVersionFile extends FakeDiffFile {
  generated: boolean
  collapsed: boolean
  tooLarge: boolean
}

/** A merge request diff version (one per push to the source branch). */
export interface FakeVersion {
  id: number
  headSha: string
  baseSha: string
  startSha: string
  createdAt: string
  /** The files GitLab stored for this version: at most `maxDiffFiles`, in git's order. */
  files: FakeVersionFile[]
  /** True when the change has more files than were stored (GitLab's `overflow` state). */
  overflow: boolean
  /** Newest first. */
  commits: FakeCommit[]
  patchIdSha: string | null
}

/** A current approval. */
export interface FakeApproval {
  user: FakeUser
  /** The head SHA approved. */
  sha: string
  approvedAt: string
  via: "api" | "quick_action"
}

/** Approval history, including resets by pushes. */
export interface FakeApprovalEvent {
  action: "approve" | "unapprove" | "reset"
  user: FakeUser | null
  sha: string
  at: string
  via: "api" | "quick_action" | "push"
}

export type ReviewerState =
  | "unreviewed"
  | "reviewed"
  | "requested_changes"
  | "approved"
  | "unapproved"
  | "review_started"

export interface FakeReviewer {
  user: FakeUser
  state: ReviewerState
  createdAt: string
}

/** One attempt to request changes (GraphQL mutation or `/request_changes`). */
export interface FakeRequestChanges {
  via: "graphql" | "quick_action"
  user: FakeUser
  sha: string
  at: string
  /** False when GitLab refused it (e.g. the user is not a reviewer). */
  applied: boolean
  errors: string[]
}

/** A quick action GitLab found in a note body and ran (or tried to). */
export interface FakeQuickAction {
  name: string
  typed: string
  argument: string | null
  user: FakeUser
  /** The note it came from; null when the note held only commands (GitLab does not store it). */
  noteId: number | null
  via: "note" | "discussion" | "reply" | "edit"
  /** False when its condition failed (e.g. /request_changes by a non-reviewer) or it does not apply to MRs. */
  applied: boolean
  message: string
  at: string
}

/** One HTTP request as the fake saw it. */
export interface FakeRequest {
  id: number
  at: number
  method: string
  /** The raw path, e.g. /api/v4/projects/group%2Fproject/merge_requests/7. */
  path: string
  query: Record<string, string>
  /** Lower-case header names. */
  headers: Record<string, string>
  bodyKind: ParsedBody["kind"]
  /** Parsed JSON, or nested form params. */
  body: unknown
  /** Form bodies: the flat fields exactly as sent (e.g. `position[new_path]`). */
  form?: Record<string, string>
  rawBody?: string
  /** Set once answered. */
  status?: number
  /** Set when a failNext rule answered. */
  injected?: string
  /** Username of the authenticated caller. */
  user?: string
}

/** The merge request's own fields. */
export interface FakeMergeRequest {
  id: number
  iid: number
  title: string
  description: string
  state: "opened" | "closed" | "merged" | "locked"
  draft: boolean
  labels: string[]
  author: FakeUser
  sourceBranch: string
  targetBranch: string
  createdAt: string
  updatedAt: string
  mergedAt: string | null
  closedAt: string | null
  discussionLocked: boolean | null
  /** Users whose requested changes currently block the MR (Premium). */
  requestedChangesBy: FakeUser[]
}

/** Everything the fake stores, for assertions. */
export interface FakeState {
  mergeRequest: FakeMergeRequest
  /** Oldest first; the last is current. */
  versions: FakeVersion[]
  /** Every stored note (system notes included), in creation order. */
  notes: FakeNote[]
  /** Every thread, in creation order. */
  discussions: FakeDiscussion[]
  approvals: FakeApproval[]
  approvalEvents: FakeApprovalEvent[]
  reviewers: FakeReviewer[]
  requestChanges: FakeRequestChanges[]
  /** Quick actions found in any note body posted or edited through the API (or addHumanNote). */
  executedQuickActions: FakeQuickAction[]
  requests: FakeRequest[]
  users: FakeUser[]
  /** Project members, in the order they were added. */
  members: FakeMember[]
  /** Unexpected exceptions inside the fake (each answered 500). */
  fakeErrors: string[]
}

/** Who made a request (internal: not exported by the package). */
export interface Caller {
  user: FakeUser | null
  kind: "token" | "job" | "anonymous" | "invalid"
}

/** A user as webhooks show it (`User#hook_attrs`); `email` is "[REDACTED]" without a public email. */
export interface GitlabWebhookUser {
  id: number
  name: string
  username: string
  avatar_url: string
  email: string
}

/** A project as webhooks show it (`Project#hook_attrs`, with its backward-compatible keys). */
export interface GitlabWebhookProject {
  id: number
  name: string
  description: string | null
  web_url: string
  avatar_url: string | null
  git_ssh_url: string
  git_http_url: string
  namespace: string
  /** 0 private, 10 internal, 20 public. */
  visibility_level: 0 | 10 | 20
  path_with_namespace: string
  default_branch: string
  ci_config_path: string | null
  homepage: string
  url: string
  ssh_url: string
  http_url: string
}

/** The note in a note webhook (`Gitlab::HookData::NoteBuilder` plus `action` and `url`). */
export interface GitlabWebhookNote {
  attachment: null
  author_id: number
  change_position: FakePosition | null
  commit_id: string | null
  /** GitLab's webhook time format: "2023-05-25 19:04:19 UTC". */
  created_at: string
  discussion_id: string
  id: number
  internal: boolean
  line_code: string | null
  note: string
  noteable_id: number
  noteable_type: "MergeRequest"
  original_position: FakePosition | null
  position: FakePosition | null
  project_id: number
  resolved_at: string | null
  resolved_by_id: number | null
  resolved_by_push: boolean | null
  st_diff: null
  system: false
  /** null for a plain comment, "DiscussionNote" in a thread, "DiffNote" on a line. */
  type: FakeNote["type"]
  updated_at: string
  updated_by_id: number | null
  description: string
  url: string
  action: "create" | "update"
}

/** The merge request in a note webhook (`Gitlab::HookData::MergeRequestBuilder`). */
export interface GitlabWebhookMergeRequest {
  assignee_id: number | null
  author_id: number
  created_at: string
  description: string
  draft: boolean
  head_pipeline_id: number | null
  id: number
  iid: number
  last_edited_at: string | null
  last_edited_by_id: number | null
  merge_commit_sha: string | null
  merge_error: string | null
  merge_params: Record<string, string>
  merge_status: string
  merge_user_id: number | null
  merge_when_pipeline_succeeds: boolean
  milestone_id: number | null
  source_branch: string
  source_project_id: number
  /** 1 opened, 2 closed, 3 merged, 4 locked. */
  state_id: 1 | 2 | 3 | 4
  target_branch: string
  target_project_id: number
  time_estimate: number
  title: string
  updated_at: string
  updated_by_id: number | null
  url: string
  source: GitlabWebhookProject
  target: GitlabWebhookProject
  /** The head commit of the MR's current diff version (`Commit#hook_attrs`). */
  last_commit: {
    id: string
    message: string
    title: string
    timestamp: string
    url: string
    author: { name: string; email: string }
  }
  work_in_progress: boolean
  total_time_spent: number
  time_change: number
  human_total_time_spent: string | null
  human_time_change: string | null
  human_time_estimate: string | null
  assignee_ids: number[]
  reviewer_ids: number[]
  labels: {
    id: number
    title: string
    color: string
    project_id: number
    created_at: string
    updated_at: string
    template: boolean
    description: string | null
    type: "ProjectLabel"
    group_id: number | null
  }[]
  state: FakeMergeRequest["state"]
  blocking_discussions_resolved: boolean
  first_contribution: boolean
  detailed_merge_status: string
}

/** The body of a project webhook's note event on the fake's merge request (docs/gitlab.md). */
export interface GitlabNoteWebhook {
  object_kind: "note"
  /** "confidential_note" for an internal note. */
  event_type: "note" | "confidential_note"
  /** The note's author. */
  user: GitlabWebhookUser
  project_id: number
  project: GitlabWebhookProject
  object_attributes: GitlabWebhookNote
  /** Deprecated by GitLab; still sent. */
  repository: { name: string; url: string; description: string | null; homepage: string }
  merge_request: GitlabWebhookMergeRequest
}
