// The types of the GitHub fake: what a test imports (re-exported by github-fake.ts and the package
// index). No code. What the fake must do, and where each fact was verified, is in docs/github.md;
// what it leaves out is in packages/testkit/README.md ("The GitHub fake").

/** A repository role as `GET /repos/{o}/{r}/collaborators/{user}/permission` reports it. */
export type GithubPermission = "admin" | "maintain" | "write" | "triage" | "read" | "none"

/** Someone holding a token: the Actions bot, an App bot or a human with a PAT. */
export interface GithubActorOptions {
  login: string
  /** Default "Bot" when the login ends in "[bot]", else "User". */
  type?: "User" | "Bot"
  /** Default: 41898282 for github-actions[bot] (its id on github.com), else a counter from 1001. */
  id?: number
  /** The token this actor authenticates with (default: a random `ghs_`/`ghp_` string). */
  token?: string
  /** Permission on every repository not named in `repos` (default "write"). */
  permission?: GithubPermission
  /** Per-repository permission by full name ("owner/name"); "none" hides a private repository (404). */
  repos?: Record<string, GithubPermission>
  /**
   * Primary rate limit per hour (default 1,000 for github-actions[bot], as GITHUB_TOKEN has; else
   * 5,000). The rate-limit message names a "user ID" for Users and an "installation ID" for Bots.
   */
  rateLimit?: number
  /**
   * Default true. False makes GraphQL `resolveReviewThread`/`unresolveReviewThread` answer FORBIDDEN
   * "Resource not accessible by integration" for this bot, as reported for GITHUB_TOKEN without
   * `contents: write` (docs/github.md, "GraphQL").
   */
  resolveThreads?: boolean
}

/**
 * One pull request and its diff. Give `diff` (a `git diff` text) or `git` (a real repository); with
 * neither, the repository's `dir` gives it (`baseRef` and `headRef` there).
 */
export interface GithubPullOptions {
  number: number
  /** Login of the author; an actor is created for it when none is configured (permission "write"). */
  author: string
  title?: string
  body?: string | null
  draft?: boolean
  state?: "open" | "closed"
  /** Base branch (default: the repository's default branch). */
  baseRef?: string
  /** Head branch (default "feature"). */
  headRef?: string
  /** Full name of the fork the head branch lives in (default: the same repository). */
  headRepo?: string
  /** The PR's unified diff as `git diff base...head` prints it (with `diff --git` headers). */
  diff?: string
  /** Default: a sha derived from the diff. Ignored with `git`. */
  headSha?: string
  /** Default: a sha derived from the base ref. Ignored with `git`. */
  baseSha?: string
  /** Read the diff from a repository: `git diff <merge-base of base and head> head`. */
  git?: { dir: string; base: string; head: string }
}

export interface GithubRepoOptions {
  owner: string
  name: string
  /** Numeric id, used in `/repositories/{id}/…` pagination links (default from 100001). */
  id?: number
  /** Default true: an actor without access gets 404, as GitHub hides private repositories. */
  private?: boolean
  /** Default "main". */
  defaultBranch?: string
  /**
   * The repository setting "Allow GitHub Actions to create and approve pull requests" (API field
   * `can_approve_pull_request_reviews`). Default false, GitHub's default: github-actions[bot] may
   * not APPROVE.
   */
  actionsCanApprove?: boolean
  /**
   * A real git repository on disk whose branches, tags and commits serve `GET …/contents/{path}`
   * and `GET …/git/trees/{tree_sha}` (docs/github.md, "Repository contents and trees"). A ref is a
   * branch, a tag, or a full or abbreviated (7+ hex digits) sha; without it those routes answer 500
   * and record a fake error. Pulls without `diff` or `git` read their diff from it.
   */
  dir?: string
  pulls?: GithubPullOptions[]
}

/** Options of {@link startGithubFake}. */
export interface GithubFakeOptions {
  /** Default: one repository "acme/widgets" with no pull requests. */
  repos?: GithubRepoOptions[]
  /** Default: github-actions[bot] with "write". PR authors not listed are added as Users with "write". */
  actors?: GithubActorOptions[]
  /**
   * `pulls/{n}/files` omits `patch` for a file whose hunk text is longer than this many bytes
   * (default 100,000; GitHub's exact threshold is not documented, see docs/github.md).
   */
  maxPatchBytes?: number
  /**
   * The 422 wording for a review comment that does not resolve: "current" (default,
   * `["Line could not be resolved"]`, reported in 2025–2026) or "legacy" (the combined
   * `"Pull request review thread line must be part of the diff, …"` string reported until 2025).
   */
  lineErrors?: "current" | "legacy"
  /**
   * `git/trees/{sha}?recursive=1` lists at most this many entries and then says `truncated: true`
   * (default 100,000, GitHub's documented limit; its 7 MB limit is not modelled).
   */
  maxTreeEntries?: number
}

/** A user as the fake stores it. */
export interface FakeGithubUser {
  id: number
  login: string
  type: "User" | "Bot"
  nodeId: string
}

export interface FakeGithubActor {
  user: FakeGithubUser
  token: string
  permission: GithubPermission
  repos: Record<string, GithubPermission>
  rateLimit: number
  resolveThreads: boolean
}

/** A file of a pull request's diff. */
export interface FakeGithubFile {
  filename: string
  previousFilename?: string
  status: "added" | "removed" | "modified" | "renamed"
  additions: number
  deletions: number
  changes: number
  /** Hunk text from the first `@@` (what `pulls/{n}/files` calls `patch`); "" for binary files. */
  patch: string
  binary: boolean
  /** The file's `diff --git` block as the diff media type shows it. */
  block: string
  hunks: FakeGithubHunk[]
}

export interface FakeGithubHunk {
  header: string
  oldStart: number
  newStart: number
  lines: FakeGithubDiffLine[]
}

export interface FakeGithubDiffLine {
  kind: "context" | "added" | "deleted"
  /** Line number on the LEFT (base) side; absent for added lines. */
  old?: number
  /** Line number on the RIGHT (head) side; absent for deleted lines. */
  new?: number
  text: string
}

/** One state of the pull request's head: the first from the options, then one per `push()`. */
export interface FakeGithubVersion {
  headSha: string
  baseSha: string
  diff: string
  files: FakeGithubFile[]
}

export interface FakeGithubPull {
  id: number
  nodeId: string
  number: number
  title: string
  body: string | null
  state: "open" | "closed"
  draft: boolean
  author: FakeGithubUser
  baseRef: string
  headRef: string
  headRepo: string
  versions: FakeGithubVersion[]
  createdAt: string
  updatedAt: string
}

export interface FakeGithubRepo {
  id: number
  nodeId: string
  owner: string
  name: string
  fullName: string
  private: boolean
  defaultBranch: string
  actionsCanApprove: boolean
  /** The repository on disk that serves contents and trees (`GithubRepoOptions.dir`), if any. */
  dir: string | null
  pulls: FakeGithubPull[]
}

export type FakeReactionContent = "+1" | "-1" | "laugh" | "confused" | "heart" | "hooray" | "rocket" | "eyes"

export interface FakeGithubReaction {
  id: number
  nodeId: string
  user: FakeGithubUser
  content: FakeReactionContent
  createdAt: string
}

export interface FakeIssueComment {
  id: number
  nodeId: string
  repo: string
  issueNumber: number
  user: FakeGithubUser
  body: string
  createdAt: string
  updatedAt: string
  reactions: FakeGithubReaction[]
}

export type FakeReviewState = "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED" | "PENDING" | "DISMISSED"

export interface FakeGithubReview {
  id: number
  nodeId: string
  repo: string
  pullNumber: number
  user: FakeGithubUser
  /** The review's own text; a dismissal keeps it (the dismissal message is stored beside it). */
  body: string
  state: FakeReviewState
  commitId: string
  submittedAt: string | null
  /** Set once the review was dismissed (`state` is then "DISMISSED"). */
  dismissal: FakeReviewDismissal | null
}

/** Who dismissed a review, when, and the message they gave (`PUT …/reviews/{id}/dismissals`). */
export interface FakeReviewDismissal {
  message: string
  user: FakeGithubUser
  at: string
}

/** Where a review comment or its thread sits: the file, the side and the (multi-)line range. */
export interface FakeLinePlacement {
  path: string
  side: "LEFT" | "RIGHT"
  startSide: "LEFT" | "RIGHT" | null
  /** Current line, null once the thread is outdated (GitHub returns `line: null` then). */
  line: number | null
  startLine: number | null
  originalLine: number
  originalStartLine: number | null
}

export interface FakeReviewComment extends FakeLinePlacement {
  id: number
  nodeId: string
  repo: string
  pullNumber: number
  reviewId: number
  threadId: number
  inReplyToId: number | null
  user: FakeGithubUser
  body: string
  commitId: string
  originalCommitId: string
  diffHunk: string
  createdAt: string
  updatedAt: string
  reactions: FakeGithubReaction[]
}

export interface FakeReviewThread extends FakeLinePlacement {
  id: number
  /** GraphQL node id ("PRRT_…"), what `resolveReviewThread(input: { threadId })` takes. */
  nodeId: string
  repo: string
  pullNumber: number
  isResolved: boolean
  resolvedBy: FakeGithubUser | null
  isOutdated: boolean
  commentIds: number[]
}

/** One request as the fake saw it (the request log tests assert on). */
export interface FakeGithubRequest {
  id: number
  method: string
  /** Path without the query, e.g. `/repos/acme/widgets/pulls/7/reviews`. */
  path: string
  query: Record<string, string>
  headers: Record<string, string>
  /** Parsed JSON body, or the raw text when it was not JSON; undefined for no body. */
  body: unknown
  status?: number
  /** Login of the authenticated actor, if any. */
  actor?: string
  /** Set when a fault answered: "502", "502-after-store", "secondary-rate-limit", "rate-limit". */
  injected?: string
}

/** Everything the fake stored; read it in tests, change it only through the fake's methods. */
export interface FakeGithubState {
  repos: FakeGithubRepo[]
  users: FakeGithubUser[]
  issueComments: FakeIssueComment[]
  reviews: FakeGithubReview[]
  reviewComments: FakeReviewComment[]
  threads: FakeReviewThread[]
  requests: FakeGithubRequest[]
  /** Errors thrown inside the fake's own code (a bug in the fake, answered with 500). */
  fakeErrors: string[]
}

/** Which requests a fault applies to: `path` is matched against the path without the query. */
export interface FakeGithubMatch {
  method?: string
  path?: RegExp | string
}

/** An injected failure: a status with a body, answered before the request is processed or after it was stored. */
export interface FakeGithubFailure {
  status: number
  /** JSON body (default: GitHub's `{"message": "Server Error"}` for 5xx, else a message for the status). */
  body?: unknown
  headers?: Record<string, string>
  /** Process (store) the request first, then answer with the failure: a write that landed behind a 502. */
  afterStore?: boolean
}

/**
 * A GitHub for tests: a real HTTP server on 127.0.0.1 serving the REST routes and the GraphQL
 * queries a pull-request reviewer uses, for repositories and pull requests with real diffs. Built
 * to docs/github.md; `packages/github/src/fake-contract.test.ts` proves it through @octokit/rest.
 */
export interface GithubFake {
  /** Base URL, e.g. http://127.0.0.1:PORT: octokit's `baseUrl` (REST at the root, GraphQL at /graphql). */
  url: string
  /** Login → token, for every actor. */
  tokens: Record<string, string>
  state: FakeGithubState
  /** The pull request, by repository full name and number (throws when unknown). */
  pull(repo: string, number: number): FakeGithubPull
  /** The pull request's current version (head sha, diff, files). */
  head(repo: string, number: number): FakeGithubVersion
  /** A push: the head moves to a new diff; threads whose line no longer resolves become outdated. */
  push(
    repo: string,
    number: number,
    next: { diff: string; headSha?: string } | { git: { dir: string; base: string; head: string } },
  ): FakeGithubVersion
  /** Adds an issue comment as `login` (e.g. a human's reply on the PR conversation). */
  addIssueComment(repo: string, number: number, login: string, body: string): FakeIssueComment
  /** Fails the next `times` matching requests (first registered rule first). */
  failNext(match: FakeGithubMatch, failure: FakeGithubFailure, times?: number): void
  /**
   * Answers the next `times` matching requests with GitHub's secondary rate limit: 403 (or 429)
   * with `retry-after` and the "You have exceeded a secondary rate limit" body.
   */
  secondaryRateLimit(
    match: FakeGithubMatch,
    options?: { status?: 403 | 429; retryAfter?: number; times?: number },
  ): void
  /** Uses up `login`'s primary limit for `resource`; requests then get 403 (or 429) with remaining 0 until `resetRateLimit`. */
  exhaustRateLimit(login: string, options?: { resource?: "core" | "graphql"; status?: 403 | 429 }): void
  resetRateLimit(login?: string): void
  /** The requests so far, optionally filtered: a copy of `state.requests`. */
  requests(match?: FakeGithubMatch): FakeGithubRequest[]
  close(): Promise<void>
}
