import {
  type AccessOf,
  type BotThread,
  type DiffFile,
  decodedMarker,
  type PreviousFinding,
  type ReadFileAt,
  tracePreviousFindings,
} from "@opencode-reviewer/core"
import type { ApiNote, ApiUser, Discussion } from "./api-schemas"
import { botThreads, threadResolved, threadSeverity } from "./bot-threads"
import { type Anchor, decodeAnchor, markerIn, markers, stripMarkers } from "./markers"

/** What tracing the earlier threads needs besides the discussions. */
export interface PreviousThreadsInput {
  discussions: readonly Discussion[]
  bot: ApiUser
  /** The head this review reads. */
  headSha: string
  /** The change's files at that head (renames map an anchor's path to its new name). */
  files: readonly DiffFile[]
  readFileAt: ReadFileAt
  /** Whether a reply's author may dismiss a finding is asked of GitLab's members API through this. */
  accessOf?: AccessOf
}

/**
 * The bot's earlier inline threads as core's PreviousFinding: title, category, fingerprint and
 * severity from our markers, the anchor traced to the reviewed head by core.
 */
export async function readPreviousFindings(input: PreviousThreadsInput): Promise<PreviousFinding[]> {
  const threads: BotThread[] = botThreads(input.discussions, input.bot).map((discussion) => {
    const first = discussion.notes[0] as ApiNote
    return {
      id: discussion.id,
      resolved: threadResolved(discussion),
      file: first.position?.new_path ?? first.position?.old_path ?? null,
      line: first.position?.new_line ?? first.position?.old_line ?? null,
      title:
        decodedMarker(markerIn(first.body, markers.title)) ?? stripMarkers(first.body).split("\n")[0]?.trim() ?? "",
      category: decodedMarker(markerIn(first.body, markers.category)),
      fingerprint: markerIn(first.body, markers.finding),
      severity: threadSeverity(discussion, input.bot.id),
      anchor: anchorOf(first),
      notes: discussion.notes
        .filter((note) => !note.system)
        .map((note) => ({
          author: note.author.username,
          authorId: note.author.id,
          body: note.body,
          bot: note.author.id === input.bot.id,
        })),
    }
  })
  return tracePreviousFindings(threads, input)
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
