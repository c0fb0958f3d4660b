import { traceLine } from "../judge/line-trace"
import type { PreviousFinding } from "../judge/previous-findings"
import { dismissAccess, hasAccess } from "../model/access"
import type { Severity } from "../model/finding"
import type { DiffFile } from "../plan/diff"
import type { Anchor } from "../report/markers"
import type { AccessOf } from "./access"

/** Reads a file at a commit; null when it is not there or cannot be read. */
export type ReadFileAt = (sha: string, path: string) => Promise<string | null>

/**
 * One of the bot's earlier inline threads as any provider reads it back from its platform: what
 * its first note's markers said, where it sits, and its notes in order.
 */
export interface BotThread {
  /** The platform's thread id (a GitLab discussion id, a GitHub review thread node id). */
  id: string
  resolved: boolean
  file: string | null
  line: number | null
  title: string
  category: string | null
  fingerprint: string | null
  /** The severity the thread stands at (the bot's last note that states one). */
  severity: Severity | null
  /** Where it was posted, to trace to the reviewed head; null when unknown. */
  anchor: Anchor | null
  /** Oldest first: who wrote each note (and their GitLab user id), and whether it is the bot's own. */
  notes: { author: string; authorId?: number; body: string; bot: boolean }[]
}

/** What tracing earlier threads needs besides the threads. */
export interface TraceInput {
  /** The head this review reads. */
  headSha: string
  /** The change's files at that head (renames map an anchor's path to its new name). */
  files: readonly DiffFile[]
  readFileAt: ReadFileAt
  /**
   * The platform's answer on a reply's author: a "won't fix" dismisses a finding only from someone
   * with write access (GitLab: Developer) or above. Without it no reply is trusted.
   */
  accessOf?: AccessOf
}

// Each traced thread costs up to two file reads; past this many the rest are left untraced (open).
const maxTraced = 200

/**
 * The bot's earlier threads as core's PreviousFinding: each open thread's anchor traced to the
 * reviewed head (so a thread is only ever called fixed where its code changed), and the last human
 * reply after the bot's last word, classified, with whether its author may dismiss findings (asked
 * of the platform). A thread whose files cannot be read stays untraced (never fixed, left open).
 */
export async function tracePreviousFindings(
  threads: readonly BotThread[],
  input: TraceInput,
): Promise<PreviousFinding[]> {
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
    threads.map(async (thread) => {
      const trace =
        thread.resolved || thread.anchor === null || traced++ >= maxTraced
          ? null
          : await traceAnchor(thread.anchor, input, read)
      return {
        id: thread.id,
        title: thread.title,
        file: thread.file,
        line: thread.line,
        resolved: thread.resolved,
        category: thread.category,
        fingerprint: thread.fingerprint,
        severity: thread.severity,
        trace,
        reply: await replyOf(thread, input.accessOf),
      } satisfies PreviousFinding
    }),
  )
}

async function traceAnchor(anchor: Anchor, input: TraceInput, read: ReadFileAt): Promise<PreviousFinding["trace"]> {
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

// A person's last word in the thread, if it came after the bot's: accepting the finding as it is
// ("won't fix", with the words that said so), or any other answer (an argument, a question, a claim
// it is fixed), which the coordinator weighs. Either counts for the thread's outcome only from
// someone who may dismiss findings (judge/previous-findings.ts).
async function replyOf(thread: BotThread, accessOf: AccessOf | undefined): Promise<PreviousFinding["reply"]> {
  let lastBot = -1
  for (const [index, note] of thread.notes.entries()) if (note.bot) lastBot = index
  const human = thread.notes
    .slice(lastBot + 1)
    .filter((note) => !note.bot)
    .at(-1)
  if (!human) return null
  const person = { name: human.author, ...(human.authorId === undefined ? {} : { id: human.authorId }) }
  const level = accessOf ? await accessOf(person).catch(() => null) : null
  const trusted = level !== null && hasAccess(level, dismissAccess)
  const words = acceptance(human.body)
  if (!words) return { by: human.author, kind: "argued", trusted }
  return { by: human.author, kind: "acknowledged", trusted, words }
}

const accepting =
  /\b(?:won'?t|will not|not going to|wont) fix\b|\backnowledged?\b|\bintended\b|\bby design\b|\baccepted risk\b/gi
// "not intended", "isn't by design": the same words, saying the opposite.
const negated = /\b(?:not|isn'?t|wasn'?t|aren'?t|never|no)\s+(?:\w+\s+)?$/i

// The words of a reply that accept a finding as it is, lowercased; null when none do. A question
// ("Is this intended?") or a negation ("this is not intended") accepts nothing.
function acceptance(body: string): string | null {
  for (const match of body.matchAll(accepting)) {
    const at = match.index ?? 0
    const sentenceEnd = /[.!?\n]/.exec(body.slice(at + match[0].length))?.[0]
    if (sentenceEnd === "?") continue
    const sentenceStart = Math.max(body.lastIndexOf(".", at), body.lastIndexOf("\n", at), body.lastIndexOf("?", at))
    if (negated.test(body.slice(sentenceStart + 1, at))) continue
    return match[0].toLowerCase().replace(/\s+/g, " ")
  }
  return null
}

/** A base64url marker value decoded as UTF-8 text, or null. */
export function decodedMarker(value: string | null): string | null {
  if (value === null) return null
  try {
    return Buffer.from(value, "base64url").toString("utf8") || null
  } catch {
    return null
  }
}
