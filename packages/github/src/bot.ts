import {
  type BotThread,
  type ChangeRequest,
  decodedMarker,
  type MergeRequestComment,
  Severity,
} from "@opencode-reviewer/core"
import type { ApiThread, ApiUser, GithubClient } from "./client"
import type { GithubContext } from "./context"
import { decodeAnchor, markerIn, markers, stripMarkers } from "./markers"

// Who the bot is on GitHub, and which review threads are its own.

/** Who the bot is: its login when the token tells (a user, or GITHUB_TOKEN's Actions bot), else any App bot. */
export interface BotIdentity {
  login: string | null
}

/**
 * The bot's identity. GITHUB_TOKEN always acts as `github-actions[bot]`; a user token names its
 * user (`GET /user`); an App installation token cannot ask (403, docs/github.md), so any App bot's
 * comment that carries our markers counts as ours.
 */
export async function identify(client: GithubClient, context: GithubContext): Promise<BotIdentity> {
  if (context.tokenVariable === "GITHUB_TOKEN") return { login: "github-actions[bot]" }
  const user = await client.authenticatedUser()
  return { login: user?.login ?? null }
}

/** A REST user is the bot. */
export function isBot(user: ApiUser | null, bot: BotIdentity): boolean {
  if (!user) return false
  return bot.login === null ? user.type === "Bot" : sameLogin(user.login, bot.login)
}

// GraphQL names an App without its "[bot]" suffix (docs/github.md, "GraphQL").
export function isBotAuthor(author: { login: string; __typename: string } | null, bot: BotIdentity): boolean {
  if (!author) return false
  return bot.login === null ? author.__typename === "Bot" : sameLogin(author.login, bot.login)
}

function sameLogin(a: string, b: string): boolean {
  const bare = (login: string) => login.toLowerCase().replace(/\[bot\]$/, "")
  return bare(a) === bare(b)
}

/** The bot's own review threads: the first comment is the bot's and carries a finding fingerprint. */
export function ownThreads(threads: readonly ApiThread[], bot: BotIdentity): ApiThread[] {
  return threads.filter((thread) => {
    const first = thread.comments[0]
    return first !== undefined && isBotAuthor(first.author, bot) && markerIn(first.body, markers.finding) !== null
  })
}

/** A GitHub review thread as core's BotThread. */
export function botThreadOf(thread: ApiThread, bot: BotIdentity): BotThread {
  const first = thread.comments[0]!
  const anchor = decodeAnchor(markerIn(first.body, markers.anchor))
  let severity: BotThread["severity"] = null
  for (const comment of [...thread.comments].reverse()) {
    if (!isBotAuthor(comment.author, bot)) continue
    const parsed = Severity.safeParse(markerIn(comment.body, markers.severity))
    if (parsed.success) {
      severity = parsed.data
      break
    }
  }
  return {
    id: thread.id,
    resolved: thread.isResolved,
    file: thread.path,
    line: thread.line ?? anchor?.line ?? null,
    title: decodedMarker(markerIn(first.body, markers.title)) ?? stripMarkers(first.body).split("\n")[0]?.trim() ?? "",
    category: decodedMarker(markerIn(first.body, markers.category)),
    fingerprint: markerIn(first.body, markers.finding),
    severity,
    anchor,
    notes: thread.comments.map((comment) => ({
      author: comment.author?.login ?? "ghost",
      body: comment.body,
      bot: isBotAuthor(comment.author, bot),
    })),
  }
}

/** A person's comment, with where it is (for break glass and for questions to the bot). */
export interface HumanComment {
  comment: MergeRequestComment
  id: number
  kind: "conversation" | "review"
}

/** The comment that started this run and what it asked, with where an answer goes. */
export interface AskedComment {
  request: ChangeRequest
  commentId: number
  kind: "conversation" | "review"
  /** The review comment a reply answers (the thread's first), or the comment itself. */
  rootId: number
}
