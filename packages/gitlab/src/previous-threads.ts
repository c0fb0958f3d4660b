import { type DiffFile, type PreviousFinding, traceLine } from "@opencode-reviewer/core"
import type { ApiNote, ApiUser, Discussion } from "./api-schemas"
import { botThreads, threadResolved, threadSeverity } from "./bot-threads"
import { type Anchor, decodeAnchor, markerIn, markers, stripMarkers } from "./markers"

/** Reads a file at a commit (local git first, then the API); null when it is not there or cannot be read. */
export type ReadFileAt = (sha: string, path: string) => Promise<string | null>

/** What tracing the earlier threads needs besides the discussions. */
export interface PreviousThreadsInput {
  discussions: readonly Discussion[]
  bot: ApiUser
  /** The head this review reads. */
  headSha: string
  /** The change's files at that head (renames map an anchor's path to its new name). */
  files: readonly DiffFile[]
  readFileAt: ReadFileAt
}

// Each traced thread costs up to two file reads; past this many the rest are left untraced (open).
const maxTraced = 200

/**
 * The bot's earlier inline threads as core's PreviousFinding: title, category, fingerprint and
 * severity from our markers, the last human reply after the bot's last word (classified), and the
 * thread's anchor traced to the reviewed head, so a thread is only ever called fixed where its
 * code changed. A thread whose files cannot be read is left untraced (never fixed, stays open).
 */
export async function readPreviousFindings(input: PreviousThreadsInput): Promise<PreviousFinding[]> {
  const threads = botThreads(input.discussions, input.bot)
  const cache = new Map<string, Promise<string | null>>()
  const read = (sha: string, path: string) => {
    const key = `${sha}\0${path}`
    if (!cache.has(key))
      cache.set(
        key,
        input.readFileAt(sha, path).catch(() => null),
      )
    return cache.get(key)!
  }
  let traced = 0
  return Promise.all(
    threads.map(async (discussion) => {
      const first = discussion.notes[0] as ApiNote
      const resolved = threadResolved(discussion)
      const file = first.position?.new_path ?? first.position?.old_path ?? null
      const line = first.position?.new_line ?? first.position?.old_line ?? null
      const anchor = anchorOf(first)
      const trace = resolved || anchor === null || traced++ >= maxTraced ? null : await traceAnchor(anchor, input, read)
      return {
        id: discussion.id,
        title: decoded(markerIn(first.body, markers.title)) ?? stripMarkers(first.body).split("\n")[0]?.trim() ?? "",
        file,
        line,
        resolved,
        category: decoded(markerIn(first.body, markers.category)),
        fingerprint: markerIn(first.body, markers.finding),
        severity: threadSeverity(discussion, input.bot.id),
        trace,
        reply: replyOf(discussion, input.bot),
      } satisfies PreviousFinding
    }),
  )
}

// Threads posted before the anchor marker existed: the position GitLab reports (which GitLab moves
// to a newer version when it can trace the line). A note on a deleted line has no new-side anchor.
function anchorOf(note: ApiNote): Anchor | null {
  const marked = decodeAnchor(markerIn(note.body, markers.anchor))
  if (marked) return marked
  const position = note.position
  if (!position?.head_sha || !position.new_path || !position.new_line) return null
  return { sha: position.head_sha, path: position.new_path, line: position.new_line }
}

async function traceAnchor(
  anchor: Anchor,
  input: PreviousThreadsInput,
  read: ReadFileAt,
): Promise<PreviousFinding["trace"]> {
  if (anchor.sha === input.headSha) return { file: anchor.path, line: anchor.line, changed: false }
  const renamed = input.files.find(
    (file) => file.oldPath === anchor.path && file.path !== anchor.path && file.status === "renamed",
  )
  const path = renamed?.path ?? anchor.path
  const [before, after] = await Promise.all([read(anchor.sha, anchor.path), read(input.headSha, path)])
  if (before === null) return null
  if (after === null) return { file: path, line: null, changed: true }
  const traced = traceLine(before, after, anchor.line)
  return { file: path, line: traced.line, changed: traced.changed }
}

// A person's last word in the thread, if it came after the bot's: accepting the finding as it is,
// or any other answer (an argument, a question, a claim it is fixed), which the coordinator weighs.
function replyOf(discussion: Discussion, bot: ApiUser): PreviousFinding["reply"] {
  const lastBot = discussion.notes.filter((note) => note.author.id === bot.id).at(-1)
  const human = discussion.notes
    .filter((note) => note.author.id !== bot.id && !note.system && (!lastBot || note.id > lastBot.id))
    .at(-1)
  if (!human) return null
  return { by: human.author.username, kind: acknowledged.test(human.body) ? "acknowledged" : "argued" }
}

const acknowledged =
  /\b(won'?t|will not|not going to|wont) fix\b|\backnowledg|\bintended\b|\bby design\b|\baccepted risk\b/i

function decoded(value: string | null): string | null {
  if (value === null) return null
  try {
    return Buffer.from(value, "base64url").toString("utf8") || null
  } catch {
    return null
  }
}
