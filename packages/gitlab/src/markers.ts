import { hiddenMarker, neutralizeForGitlab, readMarker } from "./neutralize"

/** The kinds of hidden markers the bot puts in what it posts. */
export const markers = {
  /** The summary note; value `<head sha>:<nonce>` (the nonce finds a note that landed despite an error). */
  summary: "summary",
  /** First note of an inline thread; value the finding's fingerprint. */
  finding: "finding",
  /** The severity a thread stands at (first note, and a reopening reply). */
  severity: "severity",
  /** The finding's title, base64url, for review.json's new/persisting/resolved. */
  title: "title",
  /** A reply of the bot in its thread; value `<fingerprint>:<what>:<short sha>`. */
  reply: "reply",
  /** The finding's category when the thread was posted (first note). */
  category: "category",
  /** Where the thread was anchored: base64url JSON `{sha, path, line}` of the reviewed head (first note). */
  anchor: "anchor",
} as const

/** The commit, file and new-side line a thread was posted on. */
export interface Anchor {
  sha: string
  path: string
  line: number
}

/** The anchor marker's value for a thread posted at `anchor`. */
export function encodeAnchor(anchor: Anchor): string {
  return Buffer.from(JSON.stringify(anchor), "utf8").toString("base64url")
}

/** The anchor a thread's first note carries, or null (older threads, or a value that does not parse). */
export function decodeAnchor(value: string | null): Anchor | null {
  if (value === null) return null
  try {
    const parsed: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"))
    const { sha, path, line } = (parsed ?? {}) as Record<string, unknown>
    if (
      typeof sha !== "string" ||
      typeof path !== "string" ||
      typeof line !== "number" ||
      !Number.isInteger(line) ||
      line < 1
    )
      return null
    return { sha, path, line }
  } catch {
    return null
  }
}

/** A marker's value in a note body, or null. */
export function markerIn(body: string, kind: string): string | null {
  return readMarker(body, kind)
}

/** A body to post: the text neutralised (quick actions, mentions, forged markers), then our markers. */
export function prepareBody(text: string, list: [string, string][]): { body: string; changes: number } {
  const neutral = neutralizeForGitlab(text)
  const tail = list.map(([kind, value]) => hiddenMarker(kind, value)).join("\n")
  return {
    body: tail === "" ? neutral.text : `${neutral.text.replace(/\n*$/, "")}\n\n${tail}\n`,
    changes: changeCount(neutral.changes),
  }
}

/** A bot note's text without our markers, for the coordinator's view of the previous review. */
export function stripMarkers(body: string): string {
  return body
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
}

// neutralizeForGitlab lists one entry per kind of change, "(×N)" when it happened N times.
function changeCount(changes: readonly string[]): number {
  return changes.reduce((sum, change) => sum + Number(/\(×(\d+)\)$/.exec(change)?.[1] ?? 1), 0)
}
