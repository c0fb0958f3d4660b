import { createHash, randomBytes } from "node:crypto"
import { FakeGit, lineCodeForPosition, traceLine, type FakeCommit, type FakeDiffFile } from "./gitlab-fake-git"
import { answerGraphql } from "./gitlab-fake-graphql"
import {
  badRequest,
  coerceBoolean,
  coerceInteger,
  coerceString,
  forbidden,
  grapeError,
  json,
  message,
  notFound,
  paginate,
  ParamsError,
  parseBody,
  reason,
  recordNotFound,
  unauthorized,
  type ParsedBody,
  type Reply,
} from "./gitlab-fake-http"
import { appliesToMergeRequest, extractQuickActions, type ExtractedCommand } from "./gitlab-fake-quick-actions"

export type { FakeCommit, FakeDiffFile } from "./gitlab-fake-git"

/**
 * A local GitLab for tests: a real HTTP server on 127.0.0.1 serving the REST v4 routes and the
 * GraphQL mutation an MR reviewer uses, for ONE merge request whose diff comes from a real git
 * repository. Built to the contract in shared/gitlab-api.md §12 and GitLab's own source; see
 * `GitlabFakeOptions` for the places where GitLab versions or tiers differ.
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
  /** Adds a note as a human (default: the MR author) — a new comment, or a reply in `discussionId`. */
  addHumanNote(body: string, options?: { author?: string; discussionId?: string }): FakeNote
  /** Resolves a thread as the MR author. */
  resolveAsHuman(discussionId: string): void
  /** Adds a system note (e.g. "changed the description"), as GitLab does for events. */
  addSystemNote(body: string, options?: { author?: string }): FakeNote
  /** Edits the MR description as its author would in the UI: GitLab adds a "changed the description" system note. */
  setDescription(description: string): void
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
   * list and its notes. Default false: the job token is ignored everywhere (older GitLab, §15), so
   * reads answer 404 "Project Not Found" / 401 like an anonymous request. Writes always refuse it.
   */
  jobTokenReads?: boolean
  /**
   * Which SHAs a DiffNote position may carry. "current" (default, the §12 contract): exactly the
   * latest version's base/start/head — stale SHAs give the 400 line_code error. "any-version": those of
   * any version of this MR. "repository": any commits git can diff, which is what GitLab itself
   * accepts (a note on stale SHAs is stored and shown as outdated).
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

export type ReviewerState = "unreviewed" | "reviewed" | "requested_changes" | "approved" | "unapproved" | "review_started"

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
  /** Unexpected exceptions inside the fake (each answered 500). */
  fakeErrors: string[]
}

type AuthKind = "none" | "authenticate" | "non_get"

interface Caller {
  user: FakeUser | null
  kind: "token" | "job" | "anonymous" | "invalid"
}

interface Context {
  request: Request
  url: URL
  query: URLSearchParams
  params: Record<string, unknown>
  path: Record<string, string>
  caller: Caller
  body: ParsedBody
}

interface Route {
  method: string
  pattern: string[]
  auth: AuthKind
  jobToken?: boolean
  run(context: Context): Reply | Promise<Reply>
}

interface HoldRule {
  method?: string
  path?: RegExp
  remaining: number
  waiting: (() => void)[]
  arrived: () => void
}

interface FailureRule {
  method?: string
  path?: RegExp
  failure: FakeFailure
  remaining: number
}

const noteLimit = 1_000_000

/** Starts the fake on 127.0.0.1 with a free port, reading the MR from `options.repoDir`. */
export async function startGitlabFake(options: GitlabFakeOptions): Promise<GitlabFake> {
  const git = new FakeGit(options.repoDir)
  const projectId = options.projectId ?? 42
  const projectPath = options.projectPath ?? "group/project"
  const iid = options.iid ?? 7
  const positionShas = options.positionShas ?? "current"
  const unfold = options.unfoldContextLines ?? true
  const tokens = {
    bot: `glpat-bot-${randomBytes(10).toString("hex")}`,
    human: `glpat-human-${randomBytes(10).toString("hex")}`,
    job: `glcbt-${randomBytes(10).toString("hex")}`,
  }
  const now = () => new Date().toISOString()
  let nextUserId = 101
  let nextNoteId = 5001
  let nextVersionId = 801

  const users: FakeUser[] = []
  const addUser = (username: string, bot = false, name?: string): FakeUser => {
    const existing = users.find((user) => user.username === username)
    if (existing) return existing
    const user = { id: bot ? 9000 + projectId : nextUserId++, username, name: name ?? titleCase(username), bot }
    users.push(user)
    return user
  }
  const author = addUser(options.author ?? "alice")
  const bot = addUser(options.botUsername ?? `project_${projectId}_bot`, true, "opencode-reviewer")

  const created = now()
  const state: FakeState = {
    mergeRequest: {
      id: projectId * 1000 + iid,
      iid,
      title: options.title ?? `Merge ${options.sourceBranch} into ${options.targetBranch}`,
      description: options.description ?? "",
      state: "opened",
      draft: options.draft ?? false,
      labels: [...(options.labels ?? [])],
      author,
      sourceBranch: options.sourceBranch,
      targetBranch: options.targetBranch,
      createdAt: created,
      updatedAt: created,
      mergedAt: null,
      closedAt: null,
      discussionLocked: null,
      requestedChangesBy: [],
    },
    versions: [],
    notes: [],
    discussions: [],
    approvals: [],
    approvalEvents: [],
    reviewers: (options.reviewers ?? []).map((username) => ({ user: addUser(username, username === bot.username), state: "unreviewed" as ReviewerState, createdAt: created })),
    requestChanges: [],
    executedQuickActions: [],
    requests: [],
    users,
    fakeErrors: [],
  }
  const failures: FailureRule[] = []
  const holds: HoldRule[] = []
  const hold = async (method: string, path: string) => {
    const rule = holds.find((candidate) => candidate.remaining > 0 && (!candidate.method || candidate.method === method) && (!candidate.path || candidate.path.test(path)))
    if (!rule) return
    rule.remaining -= 1
    const released = new Promise<void>((resolve) => rule.waiting.push(resolve))
    if (rule.remaining === 0) {
      rule.arrived()
      for (const release of rule.waiting.splice(0)) release()
    }
    await released
  }
  const maxPatchBytes = options.maxPatchBytes ?? 200 * 1024
  const maxDiffFiles = options.maxDiffFiles ?? 1000
  const started = performance.now()
  let baseUrl = ""
  const mr = state.mergeRequest

  // ---------------------------------------------------------------- versions (from git)

  const readVersion = (): FakeVersion => {
    const head = git.resolveCommit(`refs/heads/${options.sourceBranch}`) ?? git.resolveCommit(options.sourceBranch)
    const start = git.resolveCommit(`refs/heads/${options.targetBranch}`) ?? git.resolveCommit(options.targetBranch)
    if (!head) throw new Error(`gitlab-fake: source branch ${options.sourceBranch} not found in ${options.repoDir}`)
    if (!start) throw new Error(`gitlab-fake: target branch ${options.targetBranch} not found in ${options.repoDir}`)
    const base = git.mergeBase(start, head)
    if (!base) throw new Error(`gitlab-fake: ${options.sourceBranch} and ${options.targetBranch} have no merge base`)
    const changed = git.diffFiles(base, head)
    // Gitaly stops the collection at diff_max_files; GitLab persists what it got and marks the overflow.
    const files = changed.slice(0, maxDiffFiles)
    const generated = git.generatedByAttributes(head, files.map((file) => file.newPath))
    return {
      id: nextVersionId++,
      headSha: head,
      baseSha: base,
      startSha: start,
      createdAt: now(),
      files: files.map((file) => {
        const tooLarge = Buffer.byteLength(file.diff) >= maxPatchBytes
        const collapsed = !tooLarge && (options.collapsedPaths ?? []).includes(file.newPath)
        return {
          ...file,
          diff: tooLarge || collapsed ? "" : file.diff,
          generated: generated.has(file.newPath) || (options.generatedPaths ?? []).includes(file.newPath) || looksGenerated(file.newPath),
          collapsed,
          tooLarge,
        }
      }),
      overflow: changed.length > files.length,
      commits: git.commits(base, head),
      patchIdSha: git.patchId(base, head),
    }
  }
  // Gitlab::Git::DiffCollection#real_size: the stored count, with "+" when the collection overflowed.
  const realSize = (version: FakeVersion) => `${version.files.length}${version.overflow ? "+" : ""}`
  state.versions.push(readVersion())
  const current = () => state.versions[state.versions.length - 1]!
  const conflictCache = new Map<string, boolean>()
  const hasConflicts = () => {
    const version = current()
    const key = `${version.startSha}\0${version.headSha}`
    if (!conflictCache.has(key)) conflictCache.set(key, git.hasConflicts(version.startSha, version.headSha))
    return conflictCache.get(key)!
  }

  // ---------------------------------------------------------------- rendering (GitLab entities)

  const userBasic = (user: FakeUser) => ({
    id: user.id,
    username: user.username,
    name: user.name,
    state: "active",
    locked: false,
    avatar_url: `https://www.gravatar.com/avatar/${createHash("md5").update(user.username).digest("hex")}?s=80&d=identicon`,
    web_url: `${baseUrl}/${user.username}`,
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
    diff: unidiff && file.diff !== "" && !file.binary ? `--- ${file.newFile ? "/dev/null" : `a/${file.oldPath}`}\n+++ ${file.deletedFile ? "/dev/null" : `b/${file.newPath}`}\n${file.diff}` : file.diff,
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

  const webUrl = () => `${baseUrl}/${projectPath}/-/merge_requests/${iid}`

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
    web_url: `${baseUrl}/${projectPath}/-/commit/${commit.sha}`,
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

  const unresolvedThreads = () => state.discussions.filter((discussion) => discussion.resolvable && !discussion.resolved)

  const detailedMergeStatus = (): string => {
    if (mr.state !== "opened") return "not_open"
    if (mr.draft) return "draft_status"
    if (hasConflicts()) return "conflict"
    if (options.onlyAllowMergeIfAllDiscussionsAreResolved && unresolvedThreads().length > 0) return "discussions_not_resolved"
    if (state.approvals.length < (options.approvalsRequired ?? 0)) return "not_approved"
    if ((options.requestedChangesBlockMerge ?? true) && mr.requestedChangesBy.length > 0) return "requested_changes"
    return "mergeable"
  }

  const renderMergeRequest = (caller: Caller, expanded: boolean, extra: { divergedCommits?: boolean; rebaseInProgress?: boolean } = {}) => {
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
      blocking_discussions_resolved: !(options.onlyAllowMergeIfAllDiscussionsAreResolved && unresolvedThreads().length > 0),
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
      approved_by: state.approvals.map((approval) => ({ user: userBasic(approval.user), approved_at: approval.approvedAt })),
    }
  }

  // ---------------------------------------------------------------- notes, threads, approvals, reviewers

  const syncDiscussion = (discussion: FakeDiscussion) => {
    const resolvable = discussion.notes.filter((note) => note.resolvable)
    discussion.resolvable = resolvable.length > 0
    discussion.resolved = resolvable.length > 0 && resolvable.every((note) => note.resolved)
  }

  const newDiscussionId = () => randomBytes(20).toString("hex")

  const storeNote = (note: FakeNote, discussion: FakeDiscussion | null): FakeDiscussion => {
    state.notes.push(note)
    const thread = discussion ?? { id: note.discussionId, individualNote: note.type === null, notes: [], resolvable: false, resolved: false }
    if (!discussion) state.discussions.push(thread)
    thread.notes.push(note)
    syncDiscussion(thread)
    mr.updatedAt = note.createdAt
    return thread
  }

  const systemNote = (body: string, actor: FakeUser): FakeNote => {
    const at = now()
    const note: FakeNote = {
      id: nextNoteId++,
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

  const canApprove = (user: FakeUser) => mr.state !== "merged" && !approvedBy(user) && (user.id !== mr.author.id || options.authorCanApprove === true)

  const approve = (user: FakeUser, via: "api" | "quick_action") => {
    const at = now()
    state.approvals.push({ user, sha: current().headSha, approvedAt: at, via })
    state.approvalEvents.push({ action: "approve", user, sha: current().headSha, at, via })
    systemNote("approved this merge request", user)
    // ApprovalService → UpdateReviewerStateService(..., "approved"): clears this user's change request.
    replaceAll(mr.requestedChangesBy, mr.requestedChangesBy.filter((requester) => requester.id !== user.id))
    const reviewer = reviewerOf(user)
    if (reviewer) reviewer.state = "approved"
  }

  const unapprove = (user: FakeUser, via: "api" | "quick_action") => {
    replaceAll(state.approvals, state.approvals.filter((approval) => approval.user.id !== user.id))
    state.approvalEvents.push({ action: "unapprove", user, sha: current().headSha, at: now(), via })
    systemNote("unapproved this merge request", user)
    const reviewer = reviewerOf(user)
    if (reviewer) reviewer.state = "unapproved"
  }

  // MergeRequests::UpdateReviewerStateService
  const updateReviewerState = (user: FakeUser, reviewerState: ReviewerState): string[] => {
    const reviewer = reviewerOf(user)
    if (!reviewer) return ["Reviewer not found"]
    if (reviewer.state === "approved" && reviewerState !== "requested_changes" && reviewerState !== "unapproved") return ["Reviewer has approved"]
    reviewer.state = reviewerState
    if (reviewerState === "requested_changes") {
      if (!mr.requestedChangesBy.some((requester) => requester.id === user.id)) mr.requestedChangesBy.push(user)
      systemNote("requested changes", user)
      if (approvedBy(user)) unapprove(user, "api")
    }
    if (reviewerState === "approved") replaceAll(mr.requestedChangesBy, mr.requestedChangesBy.filter((requester) => requester.id !== user.id))
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
    replaceAll(state.reviewers, next.map((user) => before.find((reviewer) => reviewer.user.id === user.id) ?? { user, state: "unreviewed" as ReviewerState, createdAt: at }))
    if (added.length > 0) systemNote(`requested review from ${added.map((user) => `@${user.username}`).join(" and ")}`, actor)
    if (removed.length > 0) systemNote(`removed review request for ${removed.map((reviewer) => `@${reviewer.user.username}`).join(" and ")}`, actor)
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
      state.executedQuickActions.push({ ...command, user: actor, noteId, via, applied: outcome.applied, message: outcome.message, at: now() })
      if (outcome.applied && outcome.message) messages.push(outcome.message)
      if (!outcome.applied) errors.push(outcome.message)
    }
    return { messages, errors, changes }
  }

  const applyCommand = (command: ExtractedCommand, actor: FakeUser, headSha: string | null, changes: Record<string, unknown>): { applied: boolean; message: string } => {
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
        else if (["unreviewed", "reviewed", "approved", "unapproved", "review_started"].includes(wanted)) updateReviewerState(actor, wanted as ReviewerState)
        return { applied: true, message: "Submitted the current review." }
      }
      case "assign_reviewer":
      case "request_review": {
        const wanted = usersIn(command.argument, actor)
        if (wanted.length === 0) return { applied: true, message: "Failed to assign a reviewer because no user was specified." }
        const next = [...state.reviewers.map((reviewer) => reviewer.user), ...wanted.filter((user) => !reviewerOf(user))]
        setReviewers(next, actor)
        changes.reviewer_ids = next.map((user) => user.id)
        return { applied: true, message: `Assigned ${wanted.map((user) => `@${user.username}`).join(" and ")} as reviewer.` }
      }
      case "unassign_reviewer": {
        if (state.reviewers.length === 0) return refused
        const named = usersIn(command.argument, actor)
        const next = named.length > 0 ? state.reviewers.map((reviewer) => reviewer.user).filter((user) => !named.some((other) => other.id === user.id)) : []
        setReviewers(next, actor)
        changes.reviewer_ids = next.map((user) => user.id)
        return { applied: true, message: "Removed reviewer." }
      }
      case "merge":
        if (!open) return refused
        if (!headSha) return { applied: true, message: "The `/merge` quick action requires the SHA of the head of the branch." }
        if (headSha !== current().headSha) return { applied: true, message: "Branch has been updated since the merge was requested." }
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

  // Notes::CreateService: quick actions run before saving; a commands-only note is not stored.
  const createNote = (input: NewNote): { note: FakeNote | null; discussion: FakeDiscussion | null; commands: ReturnType<typeof runQuickActions> & { only: boolean; found: boolean } } => {
    const id = nextNoteId++
    const extracted = extractQuickActions(input.body)
    const commands = runQuickActions(extracted.commands, input.author, input.via, extracted.content === "" ? null : id, input.mergeRequestDiffHeadSha ?? null)
    const only = extracted.content === "" && extracted.commands.length > 0
    if (only) return { note: null, discussion: null, commands: { ...commands, only, found: true } }
    const at = now()
    const discussion = input.discussion
    // A reply to a resolved thread is stored resolved (Notes::BuildService#new_note).
    const resolvable = input.type !== null
    const resolved = resolvable && discussion !== null && discussion.resolved
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
    replaceAll(state.notes, state.notes.filter((other) => other.id !== note.id))
    const discussion = state.discussions.find((other) => other.id === note.discussionId)
    if (!discussion) return
    replaceAll(discussion.notes, discussion.notes.filter((other) => other.id !== note.id))
    if (discussion.notes.length === 0) replaceAll(state.discussions, state.discussions.filter((other) => other !== discussion))
    else syncDiscussion(discussion)
  }

  const canEdit = (note: FakeNote, user: FakeUser) => !note.system && note.author.id === user.id

  // ---------------------------------------------------------------- DiffNote positions

  interface ParsedPosition {
    position: FakePosition
    oldLine: number | null
    newLine: number | null
  }

  // Grape declarations of `optional :position, type: Hash do ... end` in lib/api/discussions.rb.
  const parsePosition = (raw: unknown, errors: string[]): ParsedPosition | null => {
    if (raw === undefined || raw === null) return null
    if (typeof raw !== "object" || Array.isArray(raw)) {
      errors.push("position is invalid")
      return null
    }
    const input = raw as Record<string, unknown>
    const required = (key: string) => {
      if (!(key in input)) {
        errors.push(`position[${key}] is missing`)
        return ""
      }
      return coerceString(input[key], `position[${key}]`, errors) ?? ""
    }
    const baseSha = required("base_sha")
    const startSha = required("start_sha")
    const headSha = required("head_sha")
    const positionType = required("position_type")
    if ("position_type" in input && positionType !== "" && !["text", "image", "file"].includes(positionType)) {
      errors.push("position[position_type] does not have a valid value")
    } else if ("position_type" in input && positionType === "") {
      errors.push("position[position_type] does not have a valid value")
    }
    const newPath = coerceString(input.new_path, "position[new_path]", errors)
    const newLine = coerceInteger(input.new_line, "position[new_line]", errors)
    const oldPath = coerceString(input.old_path, "position[old_path]", errors)
    const oldLine = coerceInteger(input.old_line, "position[old_line]", errors)
    const width = coerceInteger(input.width, "position[width]", errors)
    const height = coerceInteger(input.height, "position[height]", errors)
    const x = coerceInteger(input.x, "position[x]", errors)
    const y = coerceInteger(input.y, "position[y]", errors)
    let lineRange: unknown = null
    if (input.line_range !== undefined && input.line_range !== null) {
      if (typeof input.line_range !== "object" || Array.isArray(input.line_range)) errors.push("position[line_range] is invalid")
      else lineRange = parseLineRange(input.line_range as Record<string, unknown>, errors)
    }
    const type = (["text", "image", "file"].includes(positionType) ? positionType : "text") as FakePosition["position_type"]
    const base = { base_sha: baseSha, start_sha: startSha, head_sha: headSha, old_path: oldPath, new_path: newPath }
    if (type === "file") return { position: { ...base, position_type: "file" }, oldLine, newLine }
    if (type === "image") return { position: { ...base, position_type: "image", width, height, x, y }, oldLine, newLine }
    return {
      position: { ...base, position_type: "text", old_line: oldLine, new_line: newLine, line_range: lineRange, ignore_whitespace_change: false },
      oldLine,
      newLine,
    }
  }

  const parseLineRange = (range: Record<string, unknown>, errors: string[]) => {
    const out: Record<string, unknown> = {}
    for (const end of ["start", "end"]) {
      const value = range[end]
      if (value === undefined || value === null) continue
      if (typeof value !== "object" || Array.isArray(value)) {
        errors.push(`position[line_range][${end}] is invalid`)
        continue
      }
      const fields = value as Record<string, unknown>
      const parsed: Record<string, unknown> = {}
      for (const key of ["line_code", "type", "old_line", "new_line"]) {
        if (key in fields) parsed[key] = coerceString(fields[key], `position[line_range][${end}][${key}]`, errors)
      }
      out[end] = parsed
    }
    return out
  }

  const shasAllowed = (position: FakePosition): boolean => {
    if (positionShas === "repository") return true
    const candidates = positionShas === "current" ? [current()] : state.versions
    return candidates.some((version) => version.baseSha === position.base_sha && version.startSha === position.start_sha && version.headSha === position.head_sha)
  }

  // DiffNote validations: set_line_code (via Gitlab::Diff::Position#line_code) and positions_complete.
  const validateDiffNote = (parsed: ParsedPosition): { lineCode: string | null; errors: [string, string[]][] } => {
    const position = parsed.position
    const errors: [string, string[]][] = []
    const filePath = position.new_path || position.old_path
    const shasComplete = position.base_sha !== "" && position.start_sha !== "" && position.head_sha !== ""
    const formatterComplete =
      position.position_type === "text"
        ? parsed.oldLine !== null || parsed.newLine !== null
        : position.position_type === "file"
          ? !!position.new_path && !!position.old_path
          : position.x != null && position.y != null && position.width != null && position.height != null
    const complete = !!filePath && formatterComplete && shasComplete
    let lineCode: string | null = null
    const paths = [...new Set([position.old_path, position.new_path].filter((path): path is string => !!path))]
    const found = shasAllowed(position) ? diffFileFor(position, paths) : null
    // Gitaly prunes a patch over diff_max_patch_bytes (too_large), so it has no lines to comment on.
    const file = found && Buffer.byteLength(found.diff) >= maxPatchBytes ? { ...found, diff: "" } : found
    if (position.position_type === "text") {
      if (file && complete) {
        lineCode = lineCodeFor(file, position.base_sha, parsed)
      }
      if (!lineCode) errors.push(["line_code", ["can't be blank", "must be a valid line code"]])
    } else if (!file && positionShas !== "repository") {
      // Stricter than GitLab (which stores file/image notes on any path): the §12 contract wants the path in the diff.
      errors.push(["line_code", ["can't be blank", "must be a valid line code"]])
    }
    if (!complete) errors.push(["position", ["is incomplete"]])
    return { lineCode, errors }
  }

  const diffFileFor = (position: FakePosition, paths: string[]): FakeDiffFile | null => {
    const base = git.resolveCommit(position.base_sha)
    const head = git.resolveCommit(position.head_sha)
    if (!base || !head || !git.resolveCommit(position.start_sha)) return null
    try {
      return git.diffFiles(base, head, paths)[0] ?? null
    } catch {
      return null
    }
  }

  const lineCodeFor = (file: FakeDiffFile, baseSha: string, parsed: { oldLine: number | null; newLine: number | null }): string | null => {
    const found = lineCodeForPosition(git, file, baseSha, parsed)
    if (!found) return null
    if (found.unfolded && !unfold) return null
    return found.lineCode
  }

  // DiffNote positions follow pushes (Discussions::UpdateDiffPositionService), approximately: a line
  // that git maps unchanged from the old head to the new one, and that is still in the new diff.
  const tracePositions = (previous: FakeVersion, next: FakeVersion) => {
    for (const discussion of state.discussions) {
      const first = discussion.notes[0]
      const position = first?.position
      if (!first || !position || position.position_type !== "text") continue
      if (position.head_sha !== previous.headSha || position.base_sha !== previous.baseSha) continue
      const oldPath = position.old_path ?? position.new_path ?? ""
      const newPath = position.new_path ?? oldPath
      const oldLine = position.old_line ?? null
      const newLine = position.new_line ?? null
      const tracedNew = newLine === null ? null : traceLine(git, previous.headSha, next.headSha, newPath, newPath, newLine)
      const tracedOld = oldLine === null ? null : previous.baseSha === next.baseSha ? oldLine : traceLine(git, previous.baseSha, next.baseSha, oldPath, oldPath, oldLine)
      if ((newLine !== null && tracedNew === null) || (oldLine !== null && tracedOld === null)) continue
      const moved: FakePosition = { ...position, base_sha: next.baseSha, start_sha: next.startSha, head_sha: next.headSha, old_line: tracedOld, new_line: tracedNew }
      const paths = [...new Set([oldPath, newPath].filter(Boolean))]
      const file = diffFileFor(moved, paths)
      const lineCode = file ? lineCodeFor(file, next.baseSha, { oldLine: tracedOld, newLine: tracedNew }) : null
      if (!lineCode) continue
      for (const note of discussion.notes) {
        note.position = moved
        note.lineCode = lineCode
      }
    }
  }

  // ---------------------------------------------------------------- request plumbing

  const identify = (request: Request, url: URL, jobTokenAllowed: boolean): Caller => {
    const header = (name: string) => request.headers.get(name) ?? undefined
    const bearer = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "")?.[1]
    const personal = header("private-token") ?? url.searchParams.get("private_token") ?? bearer ?? url.searchParams.get("access_token") ?? undefined
    if (personal !== undefined) {
      if (personal === tokens.bot) return { user: bot, kind: "token" }
      if (personal === tokens.human) return { user: author, kind: "token" }
      return { user: null, kind: "invalid" }
    }
    const job = header("job-token") ?? url.searchParams.get("job_token") ?? undefined
    // A job token only authenticates on routes marked job_token_allowed; elsewhere it is ignored.
    if (job !== undefined && jobTokenAllowed) return job === tokens.job ? { user: author, kind: "job" } : { user: null, kind: "invalid" }
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

  const list = <T>(context: Context, items: T[], routeParams: Record<string, string>, render: (item: T) => unknown): Reply => {
    const { page, headers } = paginate(items, context.query, context.url, linkParams(context, routeParams))
    return json(200, page.map(render), headers)
  }

  const noteCreationResult = (result: ReturnType<typeof createNote>, present: () => unknown, status = 201): Reply => {
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

  // ---------------------------------------------------------------- routes

  const mrPath = ["projects", ":id", "merge_requests", ":iid"]
  const routes: Route[] = [
    {
      method: "GET",
      pattern: ["user"],
      auth: "authenticate",
      run: ({ caller }) =>
        json(200, {
          ...userBasic(caller.user!),
          created_at: mr.createdAt,
          bio: "",
          location: "",
          public_email: null,
          skype: "",
          linkedin: "",
          twitter: "",
          discord: "",
          website_url: "",
          organization: "",
          job_title: "",
          pronouns: null,
          bot: caller.user!.bot,
          work_information: null,
          local_time: null,
          last_sign_in_at: null,
          confirmed_at: mr.createdAt,
          last_activity_on: mr.createdAt.slice(0, 10),
          email: `${caller.user!.username}@noreply.example.test`,
          theme_id: 1,
          color_scheme_id: 1,
          projects_limit: 0,
          current_sign_in_at: null,
          identities: [],
          can_create_group: !caller.user!.bot,
          can_create_project: !caller.user!.bot,
          two_factor_enabled: false,
          external: false,
          private_profile: false,
          commit_email: `${caller.user!.username}@noreply.example.test`,
        }),
    },
    { method: "GET", pattern: ["version"], auth: "authenticate", run: () => json(200, { version: options.version ?? "17.6.0-ee", revision: "0000000" }) },
    {
      method: "GET",
      pattern: ["metadata"],
      auth: "authenticate",
      run: () => json(200, { version: options.version ?? "17.6.0-ee", revision: "0000000", kas: { enabled: false, externalUrl: null, version: null }, enterprise: (options.version ?? "17.6.0-ee").endsWith("-ee") }),
    },
    {
      method: "GET",
      pattern: ["projects", ":id"],
      auth: "none",
      run: ({ path, caller }) => {
        if (!projectMatches(path.id ?? "") || (caller.user === null && (options.visibility ?? "private") === "private")) return notFound("Project")
        const name = projectPath.split("/").pop() ?? projectPath
        return json(200, {
          id: projectId,
          description: null,
          name,
          name_with_namespace: projectPath.split("/").map(titleCase).join(" / "),
          path: name,
          path_with_namespace: projectPath,
          created_at: mr.createdAt,
          default_branch: mr.targetBranch,
          web_url: `${baseUrl}/${projectPath}`,
          http_url_to_repo: `${baseUrl}/${projectPath}.git`,
          visibility: options.visibility ?? "private",
          only_allow_merge_if_all_discussions_are_resolved: options.onlyAllowMergeIfAllDiscussionsAreResolved ?? false,
          only_allow_merge_if_pipeline_succeeds: false,
        })
      },
    },
    {
      // Repository files API: a file's raw content at a ref (branch, tag or sha); the provider reads
      // the config and review instructions from the target branch through it.
      method: "GET",
      pattern: ["projects", ":id", "repository", "files", ":file_path", "raw"],
      auth: "authenticate",
      run: ({ path, query }) => {
        if (!projectMatches(path.id ?? "")) return notFound("Project")
        const ref = query.get("ref")
        if (!ref) return grapeError(400, "ref is missing")
        const commit = git.resolveCommit(ref)
        if (!commit) return notFound("Commit")
        const blob = git.run(["cat-file", "blob", `${commit}:${path.file_path ?? ""}`])
        if (blob.code !== 0) return notFound("File")
        return { status: 200, text: blob.stdout, contentType: "text/plain; charset=utf-8" }
      },
    },
    {
      // Repository tree API (lib/api/repositories.rb): a folder's entries at a ref, trees first,
      // then blobs, then submodules (Gitlab::Git::Tree#sorted_entries); offset ("legacy")
      // pagination by default. An unknown ref is "404 Tree Not Found"; a path that is missing at
      // the ref, or is a file, is "404 invalid revision or path Not Found" (Gitaly's IndexError).
      method: "GET",
      pattern: ["projects", ":id", "repository", "tree"],
      auth: "authenticate",
      run: (context) => {
        const { path, query } = context
        if (!projectMatches(path.id ?? "")) return notFound("Project")
        const errors: string[] = []
        const recursive = coerceBoolean(query.get("recursive") ?? undefined, "recursive", errors) ?? false
        const pagination = query.get("pagination") ?? "legacy"
        if (!["legacy", "keyset", "none"].includes(pagination)) errors.push("pagination does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        if (pagination === "none" && !recursive) return grapeError(400, 'pagination cannot be "none" unless "recursive" is true')
        if (pagination === "keyset") throw new Error("gitlab-fake: keyset pagination of repository/tree is not implemented")
        const commit = git.resolveCommit(query.get("ref") ?? mr.targetBranch)
        if (!commit) return notFound("Tree")
        const folder = (query.get("path") ?? "").replace(/\/+$/, "")
        const treeish = folder === "" ? `${commit}^{tree}` : `${commit}:${folder}`
        if (git.run(["cat-file", "-t", treeish]).stdout.trim() !== "tree") return notFound("invalid revision or path")
        const listed = git.run(["ls-tree", "-z", ...(recursive ? ["-r", "-t"] : []), treeish])
        if (listed.code !== 0) return notFound("invalid revision or path")
        const entries = listed.stdout.split("\0").flatMap((line) => {
          const tab = line.indexOf("\t")
          if (tab < 0) return []
          const [mode = "", type = "", id = ""] = line.slice(0, tab).split(" ")
          const relativePath = line.slice(tab + 1)
          const full = folder === "" ? relativePath : `${folder}/${relativePath}`
          return [{ id, name: full.slice(full.lastIndexOf("/") + 1), type, path: full, mode }]
        })
        const sorted = ["tree", "blob", "commit"].flatMap((type) => entries.filter((entry) => entry.type === type))
        if (pagination === "none") return json(200, sorted)
        return list(context, sorted, { id: path.id!, pagination: "legacy", recursive: String(recursive) }, (entry) => entry)
      },
    },
    {
      method: "GET",
      pattern: ["projects", ":id", "merge_requests"],
      auth: "non_get",
      jobToken: true,
      run: (context) => {
        if (!projectMatches(context.path.id ?? "") || (context.caller.user === null && (options.visibility ?? "private") === "private")) return notFound("Project")
        const stateFilter = context.query.get("state") ?? "all"
        const sourceFilter = context.query.get("source_branch")
        const targetFilter = context.query.get("target_branch")
        const iids = context.query.getAll("iids[]")
        const matches =
          (stateFilter === "all" || stateFilter === mr.state) &&
          (!sourceFilter || sourceFilter === mr.sourceBranch) &&
          (!targetFilter || targetFilter === mr.targetBranch) &&
          (iids.length === 0 || iids.includes(String(iid)))
        return list(context, matches ? [mr] : [], { id: context.path.id!, order_by: "created_at", sort: "desc", state: "all", with_labels_details: "false", with_merge_status_recheck: "false" }, () =>
          renderMergeRequest(context.caller, false),
        )
      },
    },
    {
      method: "GET",
      pattern: mrPath,
      auth: "non_get",
      jobToken: true,
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const diverged = coerceBoolean(context.query.get("include_diverged_commits_count") ?? undefined, "include_diverged_commits_count", errors)
        const rebase = coerceBoolean(context.query.get("include_rebase_in_progress") ?? undefined, "include_rebase_in_progress", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return json(200, renderMergeRequest(context.caller, true, { divergedCommits: diverged === true, rebaseInProgress: rebase === true }))
      },
    },
    {
      method: "PUT",
      pattern: mrPath,
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        const updatable = ["title", "description", "reviewer_ids", "labels", "add_labels", "remove_labels", "state_event", "discussion_locked", "squash", "target_branch", "assignee_id", "assignee_ids", "milestone_id", "remove_source_branch", "allow_collaboration", "allow_maintainer_to_push"]
        if (!updatable.some((key) => key in context.params)) {
          return grapeError(400, `${updatable.join(", ")} are missing, at least one parameter must be provided`)
        }
        const errors: string[] = []
        const title = coerceString(context.params.title, "title", errors)
        const description = coerceString(context.params.description, "description", errors)
        const reviewerIds = "reviewer_ids" in context.params ? integerList(context.params.reviewer_ids, "reviewer_ids", errors) : null
        const stateEvent = coerceString(context.params.state_event, "state_event", errors)
        if (stateEvent !== null && !["close", "reopen"].includes(stateEvent)) errors.push("state_event does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        if (title !== null) mr.title = title
        if (description !== null) mr.description = description
        if ("labels" in context.params) mr.labels = labelsIn(String(arrayOrString(context.params.labels)))
        if ("add_labels" in context.params) mr.labels = [...new Set([...mr.labels, ...labelsIn(String(arrayOrString(context.params.add_labels)))])]
        if ("remove_labels" in context.params) {
          const remove = labelsIn(String(arrayOrString(context.params.remove_labels)))
          mr.labels = mr.labels.filter((label) => !remove.includes(label))
        }
        if (reviewerIds !== null) setReviewers(reviewerIds.map((id) => users.find((user) => user.id === id)).filter((user): user is FakeUser => !!user), actor)
        if (stateEvent === "close" && mr.state === "opened") {
          mr.state = "closed"
          mr.closedAt = now()
          systemNote("closed", actor)
        }
        if (stateEvent === "reopen" && mr.state === "closed") {
          mr.state = "opened"
          mr.closedAt = null
          systemNote("reopened", actor)
        }
        mr.updatedAt = now()
        return json(200, renderMergeRequest(context.caller, true))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "diffs"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return list(context, current().files, { id: context.path.id!, merge_request_iid: context.path.iid!, unidiff: "false" }, (file) => renderDiff(file, unidiff === true))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "changes"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return json(200, { ...renderMergeRequest(context.caller, true), changes: current().files.map((file) => renderDiff(file, unidiff === true)), overflow: current().overflow })
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "raw_diffs"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const version = current()
        return { status: 200, text: git.rawDiff(version.baseSha, version.headSha), contentType: "text/plain; charset=utf-8" }
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "commits"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(context, current().commits, { id: context.path.id!, merge_request_iid: context.path.iid! }, renderCommit)
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "versions"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(context, [...state.versions].reverse(), { id: context.path.id!, merge_request_iid: context.path.iid! }, renderVersion)
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "versions", ":version_id"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const versionId = coerceInteger(context.path.version_id, "version_id", errors)
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const version = state.versions.find((candidate) => candidate.id === versionId)
        if (!version) return recordNotFound()
        return json(200, { ...renderVersion(version), commits: version.commits.map(renderCommit), diffs: version.files.map((file) => renderDiff(file, unidiff === true)) })
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "reviewers"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(context, state.reviewers, { id: context.path.id!, merge_request_iid: context.path.iid! }, (reviewer) => ({
          user: userBasic(reviewer.user),
          state: reviewer.state,
          created_at: reviewer.createdAt,
        }))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "approvals"],
      auth: "non_get",
      run: (context) => target(context, "merge_request_iid") ?? json(200, approvalsEntity(context.caller)),
    },
    {
      method: "POST",
      pattern: [...mrPath, "approve"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        const errors: string[] = []
        const sha = coerceString(context.params.sha, "sha", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        // check_sha_param!: the message names the MR's actual head, not the SHA sent.
        if (sha && sha !== current().headSha) return message(409, `SHA does not match HEAD of source branch: ${current().headSha}`)
        // ApprovalService returns nothing when the user cannot approve (already approved, author, merged) → unauthorized!
        if (!canApprove(actor)) return unauthorized()
        approve(actor, "api")
        return json(201, approvalsEntity(context.caller))
      },
    },
    {
      method: "POST",
      pattern: [...mrPath, "unapprove"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        if (!approvedBy(actor)) return notFound()
        unapprove(actor, "api")
        return json(201, approvalsEntity(context.caller))
      },
    },
    {
      method: "PUT",
      pattern: [...mrPath, "reset_approvals"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        if (!actor.bot || mr.state === "merged") return unauthorized()
        for (const approval of state.approvals) state.approvalEvents.push({ action: "reset", user: approval.user, sha: current().headSha, at: now(), via: "api" })
        state.approvals.length = 0
        // `status :accepted` is the endpoint's last expression, so Grape renders it as the body.
        return json(202, 202)
      },
    },
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
        if (!["all_notes", "only_comments", "only_activity"].includes(filter)) errors.push("activity_filter does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const key = orderBy === "updated_at" ? "updatedAt" : "createdAt"
        const notes = state.notes
          .filter((note) => (filter === "only_comments" ? !note.system : filter === "only_activity" ? note.system : true))
          .sort((a, b) => (a[key] === b[key] ? a.id - b.id : a[key] < b[key] ? -1 : 1) * (sort === "asc" ? 1 : -1))
        return list(context, notes, { id: context.path.id!, noteable_id: context.path.iid!, order_by: orderBy, sort, activity_filter: filter }, renderNote)
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
        const internal = coerceBoolean(context.params.internal, "internal", errors) ?? coerceBoolean(context.params.confidential, "confidential", errors)
        const headSha = coerceString(context.params.merge_request_diff_head_sha, "merge_request_diff_head_sha", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const failed = target(context, "noteable_id")
        if (failed) return failed
        if (mr.discussionLocked && mustWrite(context).id !== mr.author.id) return forbidden()
        const modelErrors = noteErrors(body ?? "")
        if (modelErrors.length > 0) return badRequest(`Note ${rubyInspect(modelErrors)}`)
        const result = createNote({ author: mustWrite(context), body: body ?? "", type: null, discussion: null, internal: internal ?? false, via: "note", mergeRequestDiffHeadSha: headSha })
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
        return list(context, state.discussions, { id: context.path.id!, noteable_id: context.path.iid! }, renderDiscussion)
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
        if (hasBody === hasResolved) errors.push(hasBody ? "body, resolved are mutually exclusive" : "body, resolved are missing, exactly one parameter must be provided")
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

  const matchRoute = (segments: string[], method: string): { route?: Route; path: Record<string, string>; allowed: string[] } => {
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

  const takeFailure = (method: string, path: string): FakeFailure | null => {
    for (const rule of failures) {
      if (rule.remaining <= 0) continue
      if (rule.method && rule.method.toUpperCase() !== method) continue
      if (rule.path && !rule.path.test(path)) continue
      rule.remaining -= 1
      return rule.failure
    }
    return null
  }

  const injectedReply = (failure: FakeFailure): Reply => {
    if (failure.status === 429 && !("body" in failure) && !("afterStore" in failure)) {
      const retryAfter = "retryAfter" in failure && failure.retryAfter !== undefined ? failure.retryAfter : 60
      if ("rateLimitHeaders" in failure && failure.rateLimitHeaders === false) {
        // Gitlab::ApplicationRateLimiter (e.g. notes_create): JSON, no RateLimit-* headers.
        const headers: Record<string, string> = "retryAfter" in failure && failure.retryAfter !== undefined ? { "Retry-After": String(retryAfter) } : {}
        return { status: 429, body: { message: { error: "This endpoint has been requested too many times. Try again later." } }, headers }
      }
      const reset = Math.floor(Date.now() / 1000) + retryAfter
      return {
        status: 429,
        text: "Retry later\n",
        contentType: "text/plain",
        headers: {
          "Retry-After": String(retryAfter),
          "RateLimit-Name": "throttle_authenticated_api",
          "RateLimit-Limit": "2000",
          "RateLimit-Observed": "2001",
          "RateLimit-Remaining": "0",
          "RateLimit-Reset": String(reset),
          "RateLimit-ResetTime": new Date(reset * 1000).toUTCString(),
        },
      }
    }
    if (failure.status === 502 && !("body" in failure)) return badGateway()
    const body = "body" in failure && failure.body !== undefined ? failure.body : { message: `${failure.status} ${reason(failure.status)}` }
    return { status: failure.status, body }
  }

  const badGateway = (): Reply => ({
    status: 502,
    text: "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
    contentType: "text/html",
  })

  const dispatch = async (request: Request, url: URL, body: ParsedBody, entry: FakeRequest): Promise<Reply> => {
    if (url.pathname === "/api/graphql") {
      if (request.method !== "POST" && request.method !== "GET") return grapeError(405, "405 Not Allowed")
      const caller = identify(request, url, false)
      if (caller.kind === "invalid") return { status: 401, body: { errors: [{ message: "Invalid token" }] } }
      if (caller.user) entry.user = caller.user.username
      const graphqlBody = request.method === "GET" ? { query: url.searchParams.get("query"), variables: parseJsonOr(url.searchParams.get("variables"), {}) } : body.value
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
      if (allowed.length > 0) return { ...grapeError(405, "405 Not Allowed"), headers: { Allow: [...new Set([...allowed, "OPTIONS"])].join(", ") } }
      return grapeError(404, "404 Not Found")
    }
    const caller = identify(request, url, options.jobTokenReads === true && route.jobToken === true && request.method === "GET")
    if (caller.user) entry.user = caller.user.username
    if (caller.kind === "invalid") return unauthorized()
    if (!caller.user && (route.auth === "authenticate" || (route.auth === "non_get" && request.method !== "GET"))) return unauthorized()
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
        at: Math.round(performance.now() - started),
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
  baseUrl = `http://127.0.0.1:${server.port}`

  const humanUser = (username?: string) => (username ? addUser(username) : author)

  return {
    url: baseUrl,
    apiUrl: `${baseUrl}/api/v4`,
    projectId,
    projectPath,
    iid,
    tokens,
    state,
    async push() {
      const previous = current()
      const next = readVersion()
      if (next.headSha === previous.headSha) {
        nextVersionId -= 1
        return
      }
      state.versions.push(next)
      const added = git.run(["merge-base", "--is-ancestor", previous.headSha, next.headSha]).code === 0 ? git.commits(previous.headSha, next.headSha) : next.commits
      const items = added.map((commit) => `<li>${commit.sha.slice(0, 8)} - ${escapeHtml(commit.message.split("\n")[0] ?? "")}</li>`).join("")
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
        systemNote(`reset approvals from ${approvers.map((user) => `@${user.username}`).join(" and ")} by pushing to the branch`, author)
      }
      tracePositions(previous, next)
      mr.updatedAt = now()
    },
    addHumanNote(body, noteOptions = {}) {
      const user = humanUser(noteOptions.author)
      if (noteOptions.discussionId) {
        const discussion = findDiscussion(noteOptions.discussionId)
        if (!discussion) throw new Error(`gitlab-fake: no discussion ${noteOptions.discussionId}`)
        const result = reply(discussion, user, body, "reply")
        if (!result.note) throw new Error("gitlab-fake: the note held only quick actions, so GitLab did not store it")
        return result.note
      }
      const result = createNote({ author: user, body, type: null, discussion: null, via: "note" })
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
    failNext(match, failure, times = 1) {
      failures.push({ method: match.method, path: match.path, failure, remaining: times })
    },
    holdTogether(match, count) {
      let arrived = () => {}
      const promise = new Promise<void>((resolve) => (arrived = resolve))
      holds.push({ method: match.method, path: match.path, remaining: count, waiting: [], arrived })
      return { arrived: promise }
    },
    async close() {
      await server.stop(true)
    },
  }
}

/** Replaces an array's contents in place, so references held by tests stay live. */
function replaceAll<T>(target: T[], items: T[]): void {
  target.splice(0, target.length, ...items)
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

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
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

/** Ruby's Hash#inspect of ActiveModel errors (Ruby < 3.4): {:line_code=>["can't be blank", ...]}. */
function rubyInspect(errors: [string, string[]][]): string {
  const merged = new Map<string, string[]>()
  for (const [key, messages] of errors) merged.set(key, [...(merged.get(key) ?? []), ...messages])
  const quote = (text: string) => `"${text.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`
  return `{${[...merged].map(([key, messages]) => `:${key}=>[${messages.map(quote).join(", ")}]`).join(", ")}}`
}

/** API::Validations::Types::CommaSeparatedToIntegerArray: [1, 2], "1,2" or reviewer_ids[]=1. */
function integerList(value: unknown, name: string, errors: string[]): number[] {
  if (value === "" || value === null || value === undefined) return []
  const items = Array.isArray(value) ? value : String(value).split(",")
  const out: number[] = []
  for (const item of items) {
    const parsed = coerceInteger(typeof item === "string" ? item.trim() : item, name, errors)
    if (parsed !== null) out.push(parsed)
  }
  return out
}

function arrayOrString(value: unknown): string {
  return Array.isArray(value) ? value.join(",") : String(value ?? "")
}

function labelsIn(text: string | null): string[] {
  if (!text) return []
  const labels: string[] = []
  for (const match of text.matchAll(/~"([^"]+)"|~?([^\s,~"]+)/g)) labels.push((match[1] ?? match[2] ?? "").trim())
  return labels.filter(Boolean)
}

function titleCase(text: string): string {
  return text
    .split(/[_\-.]/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ")
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[char] ?? char)
}

// A few files Linguist always treats as generated (GitLab's generated_file also reads gitattributes).
function looksGenerated(path: string): boolean {
  const name = path.split("/").pop() ?? path
  return (
    ["package-lock.json", "npm-shrinkwrap.json", "composer.lock", "Pipfile.lock", "poetry.lock", "Cargo.lock"].includes(name) ||
    /\.min\.(js|css)$/.test(name) ||
    /\.(js|css)\.map$/.test(name) ||
    /\.pb\.go$/.test(name) ||
    /_pb2\.py$/.test(name)
  )
}
