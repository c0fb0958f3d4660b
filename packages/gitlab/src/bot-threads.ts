import { Severity, type Severity as SeverityName } from "@opencode-reviewer/core"
import type { ApiUser, Discussion } from "./api-schemas"
import { markerIn, markers } from "./markers"

/** The bot's inline threads: discussions whose first note is the bot's and carries a finding fingerprint. */
export function botThreads(discussions: readonly Discussion[], bot: ApiUser): Discussion[] {
  return discussions.filter((discussion) => {
    const first = discussion.notes[0]
    return first !== undefined && first.author.id === bot.id && markerIn(first.body, markers.finding) !== null
  })
}

/** A thread is resolved when every resolvable note in it is. */
export function threadResolved(discussion: Discussion): boolean {
  const resolvable = discussion.notes.filter((note) => note.resolvable)
  return resolvable.length > 0 && resolvable.every((note) => note.resolved === true)
}

/** The severity a thread stands at: the last bot note in it that states one. */
export function threadSeverity(discussion: Discussion, botId: number): SeverityName | null {
  for (const note of [...discussion.notes].reverse()) {
    if (note.author.id !== botId) continue
    const parsed = Severity.safeParse(markerIn(note.body, markers.severity))
    if (parsed.success) return parsed.data
  }
  return null
}
