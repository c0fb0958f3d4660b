import {
  type AccessLevel,
  type AccessOf,
  botHandle,
  type Change,
  decideBreakGlass,
  hasAccess,
  hasPhrase,
  type Logger,
  type MergeRequestComment,
  type PreviousReview,
  type PublishOptions,
  parseDiff,
  type ReviewRecord,
  readHeadsWith,
  requestOf,
  silentLogger,
  tracePreviousFindings,
  type VcsProvider,
} from "@opencode-reviewer/core"
import { diffFromFiles } from "./api-diff"
import { type AskedComment, type BotIdentity, botThreadOf, type HumanComment, identify, isBot, ownThreads } from "./bot"
import { type ApiIssueComment, type ApiPull, type ApiReviewComment, type ApiUser, createGithubClient } from "./client"
import { type Environment, type GithubContext, type ReadFile, readGithubContext } from "./context"
import { GithubAccessError } from "./errors"
import { markerIn, markers, stripMarkers } from "./markers"
import { type GithubPublishResult, publishFailure, publishReview, type ReadState } from "./publisher"
import type { GithubFetch } from "./requester"

/** What the CLI hands the GitHub provider. Nothing here reads `process.env`: `env` is the CLI's. */
export interface GithubProviderOptions {
  env: Environment
  /** Reads GITHUB_EVENT_PATH; default from disk. */
  readFile?: ReadFile
  /** A whole file at a commit of the checkout, or null; the contents API is the fallback. */
  readLocalFile?: (commit: string, path: string) => Promise<string | null>
  /** First bytes of files at a commit of the checkout; without it, files are read through the API. */
  readLocalHeads?: (commit: string, paths: readonly string[]) => Promise<Map<string, string>>
  fetch?: GithubFetch
  sleep?: (ms: number) => Promise<void>
  now?: () => number
  timeoutMs?: number
  maxAttempts?: number
  maxWaitMs?: number
  log?: Logger
}

/** The GitHub VCS provider: reads the pull request, publishes the review to it. */
export interface GithubProvider extends VcsProvider {
  readonly name: "github"
  readonly context: GithubContext
  publish(record: ReviewRecord, options?: PublishOptions): Promise<GithubPublishResult>
}

const apiHeadsLimit = 200
const headBytes = 1024

/**
 * Creates the provider from the Actions environment. Throws GithubContextError outside a pull
 * request event or without a token, so the CLI stops before any model runs.
 */
export function createGithubProvider(options: GithubProviderOptions): GithubProvider {
  const context = readGithubContext(options.env, options.readFile)
  const log = (options.log ?? silentLogger).child({ plugin: "github" })
  const client = createGithubClient({
    context,
    fetch: options.fetch,
    sleep: options.sleep,
    now: options.now,
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
    maxWaitMs: options.maxWaitMs,
    log,
  })
  let state: ReadState | null = null
  let asked: AskedComment | null = null
  let identity: Promise<BotIdentity> | null = null
  const whoAmI = () => {
    identity ??= identify(client, context)
    return identity
  }
  let pull: Promise<ApiPull> | null = null
  const readPull = () => {
    pull ??= client.pull().catch((error: unknown) => {
      pull = null
      throw error
    })
    return pull
  }
  // A person's collaborator role, asked once per run (GET /repos/…/collaborators/{user}/permission).
  const roles = new Map<string, Promise<AccessLevel>>()
  const accessOf: AccessOf = (person) => {
    const known = roles.get(person.name)
    if (known) return known
    const asked = access(context, client.permission(person.name))
    roles.set(person.name, asked)
    return asked
  }
  const fileAt = async (sha: string, path: string) =>
    (options.readLocalFile ? await options.readLocalFile(sha, path).catch(() => null) : null) ??
    client.fileAt(path, sha)

  const provider: GithubProvider = {
    name: "github",
    context,
    async readChange() {
      const [bot, pr] = await access(context, Promise.all([whoAmI(), readPull()]))
      if (pr.state !== "open") log.warn({ state: pr.state }, "the pull request is not open")
      const headSha = pr.head.sha
      const text = await client.diff()
      const assembled =
        text === null ? diffFromFiles(await client.files(), pr.changed_files ?? null) : { diff: text, unreviewed: [] }
      const diff = new TextEncoder().encode(assembled.diff)
      const files = parseDiff(diff).files
      const [comments, reviewComments, threads] = await Promise.all([
        client.issueComments(),
        client.reviewComments(),
        client.threads(),
      ])
      const own = ownThreads(threads, bot)
      const threadCommentIds = new Set(own.flatMap((thread) => thread.comments.map((comment) => comment.databaseId)))
      const summary = comments
        .filter((comment) => isBot(comment.user, bot) && markerIn(comment.body ?? "", markers.summary) !== null)
        .sort((a, b) => a.id - b.id)[0]
      const botThreads = own.map((thread) => botThreadOf(thread, bot))
      const previousReview: PreviousReview | null =
        summary || botThreads.length > 0
          ? {
              summary: summary ? stripMarkers(summary.body ?? "") : "",
              threads: botThreads.map((thread) => ({
                id: thread.id,
                file: thread.file,
                line: thread.line,
                resolved: thread.resolved,
                notes: thread.notes.map((note) => ({
                  author: note.author,
                  body: note.bot ? stripMarkers(note.body) : note.body,
                  bot: note.bot,
                })),
              })),
            }
          : null
      const human = humanComments(comments, reviewComments, bot, threadCommentIds)
      state = {
        bot,
        pull: pr,
        headSha,
        files,
        unreviewed: assembled.unreviewed,
        humanComments: human,
        breakGlass: null,
        asked,
      }
      for (const file of assembled.unreviewed) log.warn({ path: file.path, reason: file.reason }, "file not reviewable")
      return {
        source: `GitHub pull request #${pr.number} (${pr.base.sha.slice(0, 12)}...${headSha.slice(0, 12)})`,
        diff,
        mergeRequest: {
          title: pr.title,
          description: pr.body ?? "",
          author: pr.user?.login ?? null,
          sourceBranch: pr.head.ref,
          targetBranch: pr.base.ref,
          baseSha: pr.base.sha,
          headSha,
          url: pr.html_url,
        },
        comments: askedComments(human, asked),
        ...(asked ? { request: asked.request } : {}),
        previousReview,
        customInstructions: null,
        readHeads: (paths) =>
          options.readLocalHeads
            ? options.readLocalHeads(headSha, paths)
            : readHeadsWith((path) => client.fileAt(path, headSha), paths, { limit: apiHeadsLimit, bytes: headBytes }),
        readHeadFile: (path) => fileAt(headSha, path),
        unreviewed: assembled.unreviewed,
        previousFindings: await tracePreviousFindings(botThreads, { headSha, files, readFileAt: fileAt, accessOf }),
      } satisfies Change
    },
    async readTrustedFile(path) {
      // The base branch as GitHub has it now, never the pull request's head (a fork's, perhaps).
      const pr = await access(context, readPull())
      return client.fileAt(path.replace(/^\.?\/+/, ""), pr.base.sha)
    },
    async listTrustedFiles(dir) {
      const folder = dir.replace(/^\.?\/+/, "").replace(/\/+$/, "")
      if (folder.split("/").includes("..")) return null
      const pr = await access(context, readPull())
      const tree = await client.tree(pr.base.sha)
      if (tree === null) return null
      if (tree.truncated)
        log.warn({ dir: folder }, "GitHub truncated the base branch's tree; some files may be missing")
      const inside = tree.entries.filter((entry) => folder === "" || entry.path.startsWith(`${folder}/`))
      if (folder !== "" && !tree.entries.some((entry) => entry.path === folder && entry.type === "tree")) return null
      // Symlinks (mode 120000) are blobs too; their text is a path, never a document.
      return inside.filter((entry) => entry.type === "blob" && entry.mode !== "120000").map((entry) => entry.path)
    },
    async readRequest() {
      const comment = context.comment
      if (!comment) return null
      const login = comment.author.login
      if (context.action !== null && context.action !== "created")
        return { run: false, reason: `the comment was ${context.action}; only a new comment asks the bot` }
      const bot = await access(context, whoAmI())
      if (context.isBotComment || isBot({ login, type: comment.author.type }, bot))
        return { run: false, reason: `${login} is a bot; a bot's comment never starts a review` }
      let inBotThread = false
      if (comment.kind === "review" && comment.inReplyToId !== null) {
        const root = (await client.reviewComments()).find((candidate) => candidate.id === comment.inReplyToId)
        inBotThread = root !== undefined && isBot(root.user, bot) && markerIn(root.body, markers.finding) !== null
      }
      const kind = requestOf(comment.body, { inBotThread })
      if (kind === null)
        return {
          run: false,
          reason: `the comment by ${login} asks nothing of the bot (it answers \`/review\`, \`/review full\` and questions to @${botHandle})`,
        }
      // Write access or more (docs/github.md); the payload's author_association is not enough.
      const permission = await accessOf({ name: login })
      if (!hasAccess(permission, "write"))
        return {
          run: false,
          reason: `${login} has ${permission} access to ${context.owner}/${context.repo}; only people with write access can ask the bot`,
        }
      await client
        .addReaction(comment.id, comment.kind, "eyes")
        .catch((error: unknown) => log.warn({ error: String(error) }, "could not react to the comment"))
      asked = {
        request: { kind, by: login, body: comment.body },
        commentId: comment.id,
        kind: comment.kind,
        rootId: comment.inReplyToId ?? comment.id,
      }
      return { run: true, request: asked.request }
    },
    async breakGlass(glass) {
      if (!state) throw new Error("breakGlass called before readChange")
      const requests = state.humanComments
        .filter((entry) => hasPhrase(entry.comment.body, glass.phrase))
        .map((entry) => ({ by: { name: entry.comment.author }, at: entry.comment.createdAt }))
      const outcome = await decideBreakGlass(requests, glass.minAccess, accessOf)
      state.breakGlass = outcome.honoured
      return outcome
    },
    async publish(record) {
      if (!state) await provider.readChange()
      // GitHub gave this run a read-only token (a fork's pull_request run, Dependabot): posting would
      // only fail with 403, so say where the review is instead (docs/github-actions.md, forks).
      if (context.readOnlyToken) return readOnlyResult(record)
      return publishReview({ client, context, state: state as ReadState, record, log })
    },
    async publishFailure(failure) {
      if (!state || context.readOnlyToken) return []
      return publishFailure({ client, context, state, failure, log })
    },
  }
  return provider
}

function readOnlyResult(record: ReviewRecord): GithubPublishResult {
  const why =
    "GITHUB_TOKEN is read-only in this run (a pull request from a fork, or one Dependabot opened), so nothing was posted on the pull request"
  return {
    files: [],
    summaryComment: null,
    threads: { created: [], kept: [], reopened: [], resolved: [], dismissed: [], movedToSummary: [] },
    decision: { action: "nothing_to_do", reviewId: null, sha: null, detail: why },
    answer: null,
    notices: [],
    warnings: [why],
    neutralized: 0,
    lines: [
      `GitHub: nothing posted — ${why}; the review (${record.decision.replace(/_/g, " ")}) is in review.json and review.md, and the exit code is the check. To comment on fork pull requests, see docs/github-actions.md`,
    ],
  }
}

/**
 * Octokit's 401, 403 and 404 on the first reads, said so a person can act: the token is wrong, or
 * lacks a permission, or cannot see the repository (GitHub answers 404 for a private one).
 */
async function access<T>(context: GithubContext, call: Promise<T>): Promise<T> {
  try {
    return await call
  } catch (error) {
    const status = (error as { status?: unknown }).status
    if (status !== 401 && status !== 403 && status !== 404) throw error
    const path = (() => {
      try {
        return new URL((error as { request?: { url?: string } }).request?.url ?? "").pathname
      } catch {
        return `/repos/${context.owner}/${context.repo}/pulls/${context.number}`
      }
    })()
    const hint =
      status === 401
        ? `${context.tokenVariable} is not a valid token: pass \`secrets.GITHUB_TOKEN\` (or an App installation token) to the step`
        : status === 403
          ? "give the workflow `permissions: contents: read` and `pull-requests: write` (docs/github-actions.md)"
          : `the token cannot see ${context.owner}/${context.repo} or its pull request #${context.number}: check the repository name and the token's access`
    throw new GithubAccessError(
      `GitHub refused ${context.tokenVariable} (HTTP ${status} on ${path}): ${error instanceof Error ? error.message : String(error)}`,
      { status, path, hint },
      error,
    )
  }
}

// Every comment a person wrote, oldest first: the conversation, and review comments outside the
// bot's own threads (replies there travel with the previous review).
function humanComments(
  comments: readonly ApiIssueComment[],
  reviewComments: readonly ApiReviewComment[],
  bot: BotIdentity,
  threadCommentIds: ReadonlySet<number>,
): HumanComment[] {
  const people = (user: ApiUser | null) => user !== null && !isBot(user, bot) && user.type !== "Bot"
  return [
    ...comments
      .filter((comment) => people(comment.user))
      .map((comment) => ({
        id: comment.id,
        kind: "conversation" as const,
        comment: { author: comment.user?.login ?? "ghost", createdAt: comment.created_at, body: comment.body ?? "" },
      })),
    ...reviewComments
      .filter((comment) => people(comment.user) && !threadCommentIds.has(comment.id))
      .map((comment) => ({
        id: comment.id,
        kind: "review" as const,
        comment: {
          author: comment.user?.login ?? "ghost",
          createdAt: comment.created_at,
          body: comment.body,
          // Where it sits (null once outdated), so the coordinator can tell a finding a person already raised.
          ...(comment.line ? { file: comment.path, line: comment.line } : {}),
        },
      })),
  ].sort((a, b) => (a.comment.createdAt ?? "").localeCompare(b.comment.createdAt ?? ""))
}

// The comments the coordinator reads; a question that started the run is marked, so it is the one
// answered (added when it sits in the bot's own thread, where comments do not list it).
function askedComments(human: readonly HumanComment[], asked: AskedComment | null): MergeRequestComment[] {
  const comments = human.map((entry) =>
    asked?.request.kind === "question" && entry.id === asked.commentId && entry.kind === asked.kind
      ? { ...entry.comment, asked: true }
      : entry.comment,
  )
  if (asked?.request.kind === "question" && !comments.some((comment) => comment.asked))
    comments.push({ author: asked.request.by, createdAt: null, body: asked.request.body, asked: true })
  return comments
}
