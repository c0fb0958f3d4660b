import { randomBytes } from "node:crypto"
import { FakeGit } from "./gitlab-fake-git"
import type {
  FakeMember,
  FakeMergeRequest,
  FakeState,
  FakeUser,
  FakeVersion,
  GitlabAccessLevel,
  GitlabFakeOptions,
  ReviewerState,
} from "./gitlab-fake-types"

// The shared mutable world of one GitLab fake: the options with their defaults, the stored state,
// the repository, the users, the id counters and the current version. startGitlabFake creates it
// once; every section module reads and changes the fake through it.

/** Everything the sections of one fake share. Mutable fields are read through the object, never copied. */
export interface FakeWorld {
  options: GitlabFakeOptions
  git: FakeGit
  projectId: number
  projectPath: string
  iid: number
  positionShas: NonNullable<GitlabFakeOptions["positionShas"]>
  /** `options.unfoldContextLines` (default true). */
  unfold: boolean
  tokens: { bot: string; job: string; human: string }
  now(): string
  /** The next ids GitLab hands out; `push()` gives a version id back when nothing changed. */
  ids: { note: number; version: number }
  users: FakeUser[]
  /** The known user by that username, or a new one. */
  addUser(username: string, bot?: boolean, name?: string): FakeUser
  /** The MR author, who owns `tokens.human`. */
  author: FakeUser
  /** The bot user behind `tokens.bot`. */
  bot: FakeUser
  /** Makes `username` a member with that level, or removes the membership with null. */
  setMember(username: string, accessLevel: GitlabAccessLevel | null): FakeUser
  state: FakeState
  /** `state.mergeRequest`. */
  mr: FakeMergeRequest
  maxPatchBytes: number
  maxDiffFiles: number
  /** performance.now() at the start, for `FakeRequest.at`. */
  started: number
  /** Set once the server listens: http://127.0.0.1:PORT. */
  baseUrl: string
  /** The latest version (the first is read right after the world is created). */
  current(): FakeVersion
}

export function createWorld(options: GitlabFakeOptions): FakeWorld {
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
    reviewers: (options.reviewers ?? []).map((username) => ({
      user: addUser(username, username === bot.username),
      state: "unreviewed" as ReviewerState,
      createdAt: created,
    })),
    requestChanges: [],
    executedQuickActions: [],
    requests: [],
    users,
    members: [],
    fakeErrors: [],
  }
  const setMember = (username: string, accessLevel: GitlabAccessLevel | null): FakeUser => {
    if (accessLevel !== null && ![10, 20, 30, 40, 50].includes(accessLevel))
      throw new Error(`gitlab-fake: ${accessLevel} is not a project access level (10, 20, 30, 40 or 50)`)
    const user = addUser(username, username === bot.username)
    const existing = state.members.find((member) => member.user.id === user.id)
    if (accessLevel === null) {
      if (existing) state.members.splice(state.members.indexOf(existing), 1)
    } else if (existing) {
      existing.accessLevel = accessLevel
    } else {
      const member: FakeMember = { user, accessLevel, createdAt: now(), expiresAt: null }
      state.members.push(member)
    }
    return user
  }
  const members = { [author.username]: 30, [bot.username]: 30, ...(options.members ?? {}) }
  for (const [username, accessLevel] of Object.entries(members))
    setMember(username, accessLevel as GitlabAccessLevel | null)
  const maxPatchBytes = options.maxPatchBytes ?? 200 * 1024
  const maxDiffFiles = options.maxDiffFiles ?? 1000
  const started = performance.now()
  const mr = state.mergeRequest
  return {
    options,
    git,
    projectId,
    projectPath,
    iid,
    positionShas,
    unfold,
    tokens,
    now,
    ids: { note: 5001, version: 801 },
    users,
    addUser,
    author,
    bot,
    setMember,
    state,
    mr,
    maxPatchBytes,
    maxDiffFiles,
    started,
    baseUrl: "",
    current: () => state.versions[state.versions.length - 1]!,
  }
}

export function titleCase(text: string): string {
  return text
    .split(/[_\-.]/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(" ")
}
