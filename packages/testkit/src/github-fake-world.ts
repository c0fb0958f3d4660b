import { randomBytes } from "node:crypto"
import { sha1, versionFromGit, versionFromText } from "./github-fake-diff"
import { FakeRepoGit } from "./github-fake-git"
import type {
  FakeGithubActor,
  FakeGithubPull,
  FakeGithubRepo,
  FakeGithubState,
  FakeGithubUser,
  GithubActorOptions,
  GithubFakeOptions,
  GithubPermission,
  GithubPullOptions,
} from "./github-fake-types"

// The shared mutable world of one GitHub fake: options with defaults, actors and their tokens,
// repositories with their pull requests, id counters and the stored state. startGithubFake
// creates it once; every section module reads and changes the fake through it.

export interface FakeWorld {
  options: GithubFakeOptions
  state: FakeGithubState
  actors: FakeGithubActor[]
  now(): string
  /** The next id of each kind GitHub hands out (databaseId in GraphQL). */
  nextId(kind: "comment" | "review" | "reviewComment" | "thread" | "reaction"): number
  /** Node ids: the prefix GitHub uses for the type ("IC", "PRR", "PRRC", "PRRT", "REA") and a base64 body. */
  nodeId(prefix: string, id: number): string
  findRepo(owner: string, name: string): FakeGithubRepo | undefined
  findRepoById(id: number): FakeGithubRepo | undefined
  findPull(repo: FakeGithubRepo, number: number): FakeGithubPull | undefined
  /** The actor's permission on a repository ("none" when it has no access). */
  permission(actor: FakeGithubActor | null, repo: FakeGithubRepo): GithubPermission
  userByLogin(login: string): FakeGithubUser | undefined
  /** The repository's files on disk (`GithubRepoOptions.dir`), or null when it has none. */
  gitOf(repo: FakeGithubRepo): FakeRepoGit | null
  maxPatchBytes: number
  maxTreeEntries: number
  /** Set once the server listens: http://127.0.0.1:PORT. */
  baseUrl: string
}

export const canWrite = (permission: GithubPermission) => ["admin", "maintain", "write"].includes(permission)
export const canRead = (permission: GithubPermission) => permission !== "none"

export function createWorld(options: GithubFakeOptions): FakeWorld {
  const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z")
  const counters = {
    comment: 1_000_001,
    review: 2_000_001,
    reviewComment: 3_000_001,
    thread: 4_000_001,
    reaction: 5_000_001,
  }
  const state: FakeGithubState = {
    repos: [],
    users: [],
    issueComments: [],
    reviews: [],
    reviewComments: [],
    threads: [],
    requests: [],
    fakeErrors: [],
  }
  let nextUserId = 1001
  const actors: FakeGithubActor[] = []
  const addActor = (spec: GithubActorOptions): FakeGithubActor => {
    const existing = actors.find((actor) => actor.user.login === spec.login)
    if (existing) return existing
    const type = spec.type ?? (spec.login.endsWith("[bot]") ? "Bot" : "User")
    const id = spec.id ?? (spec.login === "github-actions[bot]" ? 41898282 : nextUserId++)
    const user: FakeGithubUser = { id, login: spec.login, type, nodeId: nodeIdOf(type === "Bot" ? "BOT" : "U", id) }
    state.users.push(user)
    const prefix = type === "Bot" ? "ghs_" : "ghp_"
    const actor: FakeGithubActor = {
      user,
      token: spec.token ?? `${prefix}${randomBytes(18).toString("hex")}`,
      permission: spec.permission ?? "write",
      repos: { ...(spec.repos ?? {}) },
      rateLimit: spec.rateLimit ?? (spec.login === "github-actions[bot]" ? 1000 : 5000),
      resolveThreads: spec.resolveThreads ?? true,
    }
    actors.push(actor)
    return actor
  }
  for (const spec of options.actors ?? [{ login: "github-actions[bot]" }]) addActor(spec)

  let nextRepoId = 100001
  let nextPullId = 900001
  const gits = new Map<string, FakeRepoGit>()
  const repoSpecs = options.repos ?? [{ owner: "acme", name: "widgets" }]
  for (const spec of repoSpecs) {
    const fullName = `${spec.owner}/${spec.name}`
    const id = spec.id ?? nextRepoId++
    // Checked now: a dir that is not a repository fails startGithubFake, not a request later.
    if (spec.dir !== undefined) gits.set(fullName, new FakeRepoGit(spec.dir))
    const repo: FakeGithubRepo = {
      id,
      nodeId: nodeIdOf("R", id),
      owner: spec.owner,
      name: spec.name,
      fullName,
      private: spec.private ?? true,
      defaultBranch: spec.defaultBranch ?? "main",
      actionsCanApprove: spec.actionsCanApprove ?? false,
      dir: spec.dir ?? null,
      pulls: [],
    }
    for (const pull of spec.pulls ?? []) {
      const author = addActor({ login: pull.author }).user
      const pullId = nextPullId++
      const created = now()
      repo.pulls.push({
        id: pullId,
        nodeId: nodeIdOf("PR", pullId),
        number: pull.number,
        title: pull.title ?? `Pull request ${pull.number}`,
        body: pull.body ?? null,
        state: pull.state ?? "open",
        draft: pull.draft ?? false,
        author,
        baseRef: pull.baseRef ?? repo.defaultBranch,
        headRef: pull.headRef ?? "feature",
        headRepo: pull.headRepo ?? fullName,
        versions: [firstVersion(pull, repo)],
        createdAt: created,
        updatedAt: created,
      })
    }
    state.repos.push(repo)
  }

  const findRepo = (owner: string, name: string) =>
    state.repos.find(
      (repo) => repo.owner.toLowerCase() === owner.toLowerCase() && repo.name.toLowerCase() === name.toLowerCase(),
    )

  return {
    options,
    state,
    actors,
    now,
    nextId: (kind) => counters[kind]++,
    nodeId: nodeIdOf,
    findRepo,
    findRepoById: (id) => state.repos.find((repo) => repo.id === id),
    findPull: (repo, number) => repo.pulls.find((pull) => pull.number === number),
    permission(actor, repo) {
      if (!actor) return repo.private ? "none" : "read"
      const explicit = actor.repos[repo.fullName]
      const permission = explicit ?? actor.permission
      // Anyone may read a public repository.
      return permission === "none" && !repo.private ? "read" : permission
    },
    userByLogin: (login) => state.users.find((user) => user.login.toLowerCase() === login.toLowerCase()),
    gitOf: (repo) => gits.get(repo.fullName) ?? null,
    maxPatchBytes: options.maxPatchBytes ?? 100_000,
    maxTreeEntries: options.maxTreeEntries ?? 100_000,
    baseUrl: "",
  }
}

function firstVersion(pull: GithubPullOptions, repo: FakeGithubRepo) {
  const { fullName, defaultBranch } = repo
  if (pull.git) return versionFromGit(pull.git)
  if (pull.diff === undefined && repo.dir !== null)
    return versionFromGit({ dir: repo.dir, base: pull.baseRef ?? defaultBranch, head: pull.headRef ?? "feature" })
  if (pull.diff === undefined)
    throw new Error(`github-fake: pull ${fullName}#${pull.number} needs \`diff\`, \`git\` or the repository's \`dir\``)
  return versionFromText(
    pull.diff,
    pull.headSha ?? sha1(`head\0${fullName}\0${pull.number}\0${pull.diff}`),
    pull.baseSha ?? sha1(`base\0${fullName}\0${pull.baseRef ?? defaultBranch}`),
  )
}

/** A node id in the shape of GitHub's newer ids: `<TYPE>_kwDO` and a base64 body. */
export function nodeIdOf(prefix: string, id: number): string {
  return `${prefix}_kwDO${Buffer.from(`${prefix}:${id}`).toString("base64").replace(/=+$/, "")}`
}
