import {
  type AccessLevel,
  type AccessOf,
  type BreakGlassOutcome,
  botHandle,
  type Change,
  ChangeReadError,
  type Config,
  decideBreakGlass,
  gitlabAccess,
  hasPhrase,
  type Logger,
  type MergeRequestComment,
  type PreviousFinding,
  type PreviousReview,
  type PreviousThread,
  type PublishOptions,
  parseDiff,
  type ReviewRecord,
  readHeadsWith,
  requestOf,
  silentLogger,
  type VcsProvider,
} from "@opencode-reviewer/core"
import { type AssembledDiff, assembleDiff, type UnreviewedFile, unlistedFiles } from "./api-diff"
import type { ApiMergeRequest, ApiNote, ApiUser, Discussion } from "./api-schemas"
import { botThreads, threadResolved } from "./bot-threads"
import { type CiContext, type Environment, readCiContext, rejectedTokenHint } from "./ci-context"
import { GitlabAuthError, GitlabRequestError } from "./errors"
import { createGitlabClient, type GitlabClient } from "./gitlab-client"
import { markerIn, markers, stripMarkers } from "./markers"
import type { DiffRefs } from "./position"
import { readPreviousFindings } from "./previous-threads"
import { type AskedNote, type PublishResult, publishFailure, publishReview, type ReadState } from "./publisher"

export type { BreakGlass } from "./publisher"

import { createRequester } from "./requester"

/** What the CLI hands the GitLab provider. Nothing here reads `process.env`: `env` is the CLI's. */
export interface GitlabProviderOptions {
  env: Environment
  /** The CI checkout; the diff is read with local git when it has the merge request's commits. */
  repoDir?: string
  /**
   * `git diff` (with the flags every part of the system agrees on) between two commits of the
   * checkout, or null when it lacks them; GitLab's `/diffs` is the fallback.
   */
  readLocalDiff?: (base: string, head: string) => Promise<Uint8Array | null>
  /** First bytes of files at a commit of the checkout; without it, files are read through the API. */
  readLocalHeads?: (commit: string, paths: readonly string[]) => Promise<Map<string, string>>
  /** A whole file at a commit of the checkout, or null (missing there, or the checkout lacks the commit); the API is the fallback. */
  readLocalFile?: (commit: string, path: string) => Promise<string | null>
  fetch?: typeof fetch
  sleep?: (ms: number) => Promise<void>
  now?: () => number
  /** Per-request timeout and attempts of the requester (defaults 30 s, 5). */
  timeoutMs?: number
  maxAttempts?: number
  log?: Logger
}

/** A change read from a GitLab merge request: core's Change plus what only GitLab knows. */
export interface GitlabChange extends Change {
  /** Changed files GitLab sent no content for (collapsed, too large): never reviewed, listed in the summary. */
  unreviewed: UnreviewedFile[]
  /** The bot's earlier findings (from its inline threads), for new/persisting/resolved in review.json. */
  previousFindings: PreviousFinding[]
}

/** The GitLab VCS provider: reads the merge request, publishes the review to it. */
export interface GitlabProvider extends VcsProvider {
  readonly name: "gitlab"
  readonly context: CiContext
  readChange(signal?: AbortSignal): Promise<GitlabChange>
  /** Files GitLab sent no content for; empty before readChange. */
  readonly unreviewed: readonly UnreviewedFile[]
  /**
   * The human (not the bot) notes that contain the phrase (case- and spacing-insensitive), decided
   * by each author's role in the project (GitLab's members API): the first from someone with at
   * least `minAccess` (Developer by default) breaks the glass. Call after readChange.
   */
  breakGlass(glass: Config["breakGlass"]): Promise<BreakGlassOutcome>
  /** Posts the summary note and threads, resolves fixed threads, takes the approval action. Writes no files. */
  publish(record: ReviewRecord, options?: PublishOptions): Promise<PublishResult>
}

/** GitLab's Developer role: the least access that may ask the bot for a review. */
const developerAccess = 30
const diffRefsAttempts = 5
const diffRefsDelayMs = 2_000
const apiHeadsLimit = 200
const headBytes = 1024

/**
 * Creates the provider from the CI environment. Throws GitlabContextError outside a merge request
 * pipeline and GitlabAuthError without a usable token (CI_JOB_TOKEN alone is not enough), so the
 * CLI can stop before any model runs.
 */
export function createGitlabProvider(options: GitlabProviderOptions): GitlabProvider {
  const context = readCiContext(options.env)
  const log = (options.log ?? silentLogger).child({ plugin: "gitlab" })
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const requester = createRequester({
    apiUrl: context.apiUrl,
    token: context.token,
    fetch: options.fetch,
    sleep,
    now: options.now,
    timeoutMs: options.timeoutMs,
    maxAttempts: options.maxAttempts,
    log,
  })
  const client = createGitlabClient({
    requester,
    serverUrl: context.serverUrl,
    projectId: context.projectId,
    iid: context.iid,
    log,
  })
  let state: ReadState | null = null
  let asked: AskedNote | null = null
  let botUser: Promise<ApiUser> | null = null
  const whoAmI = () => {
    botUser ??= authed(client.currentUser()).catch((error: unknown) => {
      botUser = null
      throw error
    })
    return botUser
  }
  // A person's role in the project, asked once per run (GET /projects/:id/members/all/:user_id).
  const roles = new Map<number, Promise<AccessLevel>>()
  const accessOf: AccessOf = (person) => {
    if (person.id === undefined) return Promise.resolve("none")
    const known = roles.get(person.id)
    if (known) return known
    const asked = authed(client.memberAccess(person.id)).then(gitlabAccess)
    roles.set(person.id, asked)
    return asked
  }
  let mergeRequest: Promise<ApiMergeRequest> | null = null
  const readMergeRequest = () => {
    mergeRequest ??= authed(client.mergeRequest()).catch((error: unknown) => {
      mergeRequest = null
      throw error
    })
    return mergeRequest
  }

  const provider: GitlabProvider = {
    name: "gitlab",
    context,
    get unreviewed() {
      return state?.unreviewed ?? []
    },
    async readChange() {
      const bot = await whoAmI()
      const { mergeRequest: mr, refs } = await readVersion(client, context, sleep, log)
      mergeRequest = Promise.resolve(mr)
      const local = await readLocal(options, refs, log)
      const assembled = local === null ? await readApiDiff(mr) : { diff: local, unreviewed: [] }
      const diffBytes = typeof assembled.diff === "string" ? new TextEncoder().encode(assembled.diff) : assembled.diff
      const discussions = await client.discussions()
      const previous = previousReviewOf(discussions, bot)
      const humanNotes = humanNotesOf(discussions, bot)
      state = {
        bot,
        mergeRequest: mr,
        refs,
        files: parseDiff(diffBytes).files,
        unreviewed: assembled.unreviewed,
        humanNotes,
        breakGlass: null,
        asked,
      }
      for (const file of assembled.unreviewed) log.warn({ path: file.path, reason: file.reason }, "file not reviewable")
      const range = `${refs.baseSha.slice(0, 12)}..${refs.headSha.slice(0, 12)}`
      return {
        source:
          local === null
            ? `GitLab merge request !${mr.iid} diffs (${range})`
            : `git diff ${range} in ${options.repoDir ?? "the checkout"}`,
        diff: diffBytes,
        mergeRequest: {
          title: mr.title,
          description: mr.description ?? "",
          author: mr.author?.username ?? null,
          sourceBranch: mr.source_branch ?? null,
          targetBranch: mr.target_branch,
          baseSha: refs.baseSha,
          headSha: refs.headSha,
          url: mr.web_url ?? null,
        },
        // Replies in the bot's own threads travel with the previous review, not as comments.
        comments: askedComments(
          humanNotes.filter((note) => !previous.threadNoteIds.has(note.id)),
          asked,
        ),
        ...(asked ? { request: asked.request } : {}),
        previousReview: previous.review,
        customInstructions: null,
        readHeads: (paths) =>
          options.readLocalHeads
            ? options.readLocalHeads(refs.headSha, paths)
            : readHeadsWith((path) => client.rawFile(path, refs.headSha), paths, {
                limit: apiHeadsLimit,
                bytes: headBytes,
              }),
        async readHeadFile(path) {
          const local = options.readLocalFile ? await options.readLocalFile(refs.headSha, path).catch(() => null) : null
          return local ?? authed(client.rawFile(path, refs.headSha))
        },
        unreviewed: assembled.unreviewed,
        previousFindings: await readPreviousFindings({
          discussions,
          bot,
          headSha: refs.headSha,
          files: state.files,
          accessOf,
          readFileAt: async (sha, path) =>
            (options.readLocalFile ? await options.readLocalFile(sha, path).catch(() => null) : null) ??
            client.rawFile(path, sha),
        }),
      } satisfies GitlabChange
    },
    async readTrustedFile(path) {
      const mr = await readMergeRequest()
      return authed(client.rawFile(path, mr.target_branch))
    },
    async listTrustedFiles(dir) {
      const folder = dir.replace(/^\.?\/+/, "").replace(/\/+$/, "")
      if (folder.split("/").includes("..")) return null
      const mr = await readMergeRequest()
      const entries = await authed(client.tree(folder, mr.target_branch))
      // Symlinks (mode 120000) are blobs too; their text is a path, never a document.
      return entries === null
        ? null
        : entries.filter((entry) => entry.type === "blob" && entry.mode !== "120000").map((entry) => entry.path)
    },
    async readRequest() {
      const note = context.note
      if (!note) return null
      if (note.action !== null && note.action !== "create")
        return { run: false, reason: `the note was ${note.action}d; only a new note asks the bot` }
      const bot = await whoAmI()
      // The bot's own notes, and those of project or group access tokens' bot users, never ask.
      if (note.authorId === bot.id || /^(?:project|group)_\d+_bot(?:_[0-9a-f]+)?$/.test(note.authorUsername))
        return { run: false, reason: `${note.authorUsername} is a bot; a bot's note never starts a review` }
      let inBotThread = false
      if (note.discussionId) {
        const discussion = await client.discussion(note.discussionId).catch(() => null)
        inBotThread = discussion !== null && botThreads([discussion], bot).length > 0
      }
      const kind = requestOf(note.body, { inBotThread })
      if (kind === null)
        return {
          run: false,
          reason: `the note by ${note.authorUsername} asks nothing of the bot (it answers \`/review\`, \`/review full\` and questions to @${botHandle})`,
        }
      const level = await authed(client.memberAccess(note.authorId))
      if (level === null || level < developerAccess)
        return {
          run: false,
          reason: `${note.authorUsername} is ${level === null ? "not a member of the project" : `a member with access level ${level}`}; only Developers and above can ask the bot`,
        }
      asked = {
        request: { kind, by: note.authorUsername, body: note.body },
        noteId: note.id,
        discussionId: note.discussionId,
        inThread: inBotThread || note.type === "DiffNote" || note.type === "DiscussionNote",
      }
      return { run: true, request: asked.request }
    },
    async breakGlass(glass) {
      if (!state) throw new Error("breakGlass called before readChange")
      const requests = state.humanNotes
        .filter((note) => hasPhrase(note.body, glass.phrase))
        .map((note) => ({ by: { name: note.author.username, id: note.author.id }, at: note.created_at ?? null }))
      const outcome = await decideBreakGlass(requests, glass.minAccess, accessOf)
      state.breakGlass = outcome.honoured
      return outcome
    },
    async publish(record) {
      if (!state) await provider.readChange()
      return publishReview({ client, context, state: state as ReadState, record, log })
    },
    async publishFailure(failure) {
      // Before the merge request was read (no token, GitLab down) there is nothing to post to.
      if (!state) return []
      return publishFailure({ client, context, state, failure, log })
    },
  }
  return provider

  // GitLab's /diffs, plus the files it left out past its diff limits (they count as not reviewed).
  async function readApiDiff(mr: ApiMergeRequest): Promise<AssembledDiff> {
    const files = await client.diffs()
    const assembled = assembleDiff(files)
    const unlisted = unlistedFiles(mr.changes_count ?? null, files.length)
    if (unlisted) assembled.unreviewed.push(unlisted)
    return assembled
  }

  async function authed<T>(call: Promise<T>): Promise<T> {
    try {
      return await call
    } catch (error) {
      if (error instanceof GitlabRequestError && (error.data.status === 401 || error.data.status === 403)) {
        throw new GitlabAuthError(
          `GitLab refused GITLAB_TOKEN (HTTP ${error.data.status} on ${error.data.path}): ${rejectedTokenHint()}`,
          { reason: "rejected", status: error.data.status, hint: rejectedTokenHint() },
          error,
        )
      }
      throw error
    }
  }
}

// diff_refs fill in asynchronously after the merge request is created (docs/gitlab.md#the-merge-request-and-diff_refs).
async function readVersion(
  client: GitlabClient,
  context: CiContext,
  sleep: (ms: number) => Promise<void>,
  log: Logger,
): Promise<{ mergeRequest: ApiMergeRequest; refs: DiffRefs }> {
  for (let attempt = 1; ; attempt += 1) {
    const mergeRequest = await client.mergeRequest()
    const refs = mergeRequest.diff_refs
    if (refs?.base_sha && refs.head_sha) {
      return {
        mergeRequest,
        refs: { baseSha: refs.base_sha, headSha: refs.head_sha, startSha: refs.start_sha ?? refs.base_sha },
      }
    }
    if (attempt >= diffRefsAttempts) {
      // CI knows the base the pipeline was created for; with the MR's head it names the same diff.
      if (context.diffBaseSha && mergeRequest.sha) {
        log.warn(
          { base: context.diffBaseSha, head: mergeRequest.sha },
          "diff_refs still empty; using CI_MERGE_REQUEST_DIFF_BASE_SHA",
        )
        return {
          mergeRequest,
          refs: { baseSha: context.diffBaseSha, headSha: mergeRequest.sha, startSha: context.diffBaseSha },
        }
      }
      throw new ChangeReadError(
        `GitLab has not computed the diff of merge request !${context.iid} yet (diff_refs is empty)`,
        {
          source: `GitLab merge request !${context.iid}`,
          hint: "retry the job in a minute; GitLab fills diff_refs asynchronously after a merge request is created or pushed",
        },
      )
    }
    log.info({ attempt }, "diff_refs empty; waiting")
    await sleep(diffRefsDelayMs * attempt)
  }
}

async function readLocal(options: GitlabProviderOptions, refs: DiffRefs, log: Logger): Promise<Uint8Array | null> {
  if (!options.readLocalDiff) return null
  try {
    const diff = await options.readLocalDiff(refs.baseSha, refs.headSha)
    if (diff === null)
      log.info(
        { base: refs.baseSha, head: refs.headSha },
        "checkout lacks the merge request commits; reading the diff from the API",
      )
    return diff
  } catch (error) {
    log.warn(
      { error: error instanceof Error ? error.message : String(error) },
      "local git diff failed; reading the diff from the API",
    )
    return null
  }
}

// The previous review as the coordinator reads it: the summary note (the oldest bot summary, the
// one the publisher keeps) and every bot thread with its notes. The findings themselves, traced to
// the new head, come from readPreviousFindings.
function previousReviewOf(
  discussions: Discussion[],
  bot: ApiUser,
): { review: PreviousReview | null; threadNoteIds: Set<number> } {
  const summaryNote = discussions
    .flatMap((discussion) => discussion.notes)
    .filter((note) => note.author.id === bot.id && !note.system && markerIn(note.body, markers.summary) !== null)
    .sort((a, b) => a.id - b.id)[0]
  const threads: PreviousThread[] = []
  for (const discussion of botThreads(discussions, bot)) {
    const first = discussion.notes[0] as ApiNote
    const file = first.position?.new_path ?? first.position?.old_path ?? null
    const line = first.position?.new_line ?? first.position?.old_line ?? null
    const resolved = threadResolved(discussion)
    threads.push({
      id: discussion.id,
      file,
      line,
      resolved,
      notes: discussion.notes
        .filter((note) => !note.system)
        .map((note) => {
          const ours = isOwnThreadNote(note, bot)
          return { author: note.author.username, body: ours ? stripMarkers(note.body) : note.body, bot: ours }
        }),
    })
  }
  const review =
    summaryNote || threads.length > 0 ? { summary: summaryNote ? stripMarkers(summaryNote.body) : "", threads } : null
  const threadNoteIds = new Set(
    botThreads(discussions, bot).flatMap((discussion) => discussion.notes.map((note) => note.id)),
  )
  return { review, threadNoteIds }
}

// The bot's own note in its thread: its user, and the marker every note it posts there carries
// (the finding's on the first note, a reply's on the rest). Its text may quote an attacker; it is
// still sanitised, but never reported as an injection attempt.
function isOwnThreadNote(note: ApiNote, bot: ApiUser): boolean {
  return (
    note.author.id === bot.id &&
    (markerIn(note.body, markers.finding) !== null || markerIn(note.body, markers.reply) !== null)
  )
}

// Every note a person wrote (not system notes, not the bot's), oldest first, thread replies included.
function humanNotesOf(discussions: Discussion[], bot: ApiUser): ApiNote[] {
  return discussions
    .flatMap((discussion) => discussion.notes)
    .filter((note) => !note.system && note.author.id !== bot.id)
    .sort((a, b) => (a.created_at ?? "").localeCompare(b.created_at ?? ""))
}

function commentOf(note: ApiNote): MergeRequestComment {
  const file = note.position?.new_path ?? undefined
  const line = note.position?.new_line ?? undefined
  return {
    author: note.author.username,
    createdAt: note.created_at ?? null,
    body: note.body,
    // A note on the diff says where: the coordinator then tells whether it already raised a finding.
    ...(file && line ? { file, line } : {}),
  }
}

// The notes the coordinator reads; a question that started the run is marked, so it is the one
// answered (added when it sits in the bot's own thread, where comments do not list it).
function askedComments(notes: readonly ApiNote[], asked: AskedNote | null): MergeRequestComment[] {
  const question = asked?.request.kind === "question" ? asked : null
  const comments = notes.map((note) =>
    question && note.id === question.noteId ? { ...commentOf(note), asked: true } : commentOf(note),
  )
  if (question && !comments.some((comment) => comment.asked))
    comments.push({ author: question.request.by, createdAt: null, body: question.request.body, asked: true })
  return comments
}
