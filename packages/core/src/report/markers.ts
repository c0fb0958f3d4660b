import { type Neutralized, neutralizeMarkdown, type PlatformName } from "./neutralize"

// The bot's hidden markers, `<!-- opencode-reviewer:kind=value -->`, in what it posts on GitLab
// and GitHub: both hide an HTML comment from readers and return it unchanged through their APIs.
// They are appended after neutralising, and neutralised text never holds `<!--`, so model text
// can never forge one.

/** The kinds of hidden markers the bot puts in what it posts. */
export const markers = {
  /** The summary comment; value `<head sha>:<nonce>` (the nonce finds a comment that landed despite an error). */
  summary: "summary",
  /** First comment of an inline thread; value the finding's fingerprint. */
  finding: "finding",
  /** The severity a thread stands at (first comment, and a reopening reply). */
  severity: "severity",
  /** The finding's title, base64url, for review.json's new/persisting/resolved. */
  title: "title",
  /** A reply of the bot in its thread; value `<fingerprint>:<what>:<short sha>`. */
  reply: "reply",
  /** The finding's category when the thread was posted (first comment). */
  category: "category",
  /** Where the thread was anchored: base64url JSON `{sha, path, line}` of the reviewed head (first comment). */
  anchor: "anchor",
  /** A GitHub pull request review of the bot; value `<head sha>:<nonce>`, so one that landed behind an error is found again. */
  review: "review",
} as const

/** The commit, file and new-side line a thread was posted on. */
export interface Anchor {
  sha: string
  path: string
  line: number
}

/** A body ready to post, and how many changes neutralising made (each repeat counted). */
export interface PreparedBody {
  body: string
  changes: number
}

/** `<!-- opencode-reviewer:kind -->` or `<!-- opencode-reviewer:kind=value -->`; add it after neutralising. */
export function hiddenMarker(kind: string, value?: string): string {
  if (!markerKind.test(kind)) throw new RangeError(`marker kind ${JSON.stringify(kind)} must match ${markerKind}`)
  if (value === undefined || value === "") return `<!-- ${markerPrefix}${kind} -->`
  if (!markerValue.test(value)) throw new RangeError(`marker value ${JSON.stringify(value)} must match ${markerValue}`)
  return `<!-- ${markerPrefix}${kind}=${value} -->`
}

/**
 * The value of the last `kind` marker in a comment body: "" for a marker without a value, null
 * when there is none. Neutralised text never contains `<!--`, so a marker cannot come from model text.
 */
export function readMarker(body: string, kind: string): string | null {
  if (!markerKind.test(kind)) return null
  const pattern = new RegExp(`<!-- ${markerPrefix}${kind}(?:=([A-Za-z0-9:_-]+))? -->`, "g")
  let found: string | null = null
  for (const match of body.matchAll(pattern)) found = match[1] ?? ""
  return found
}

/** The anchor marker's value for a thread posted at `anchor`. */
export function encodeAnchor(anchor: Anchor): string {
  return Buffer.from(JSON.stringify(anchor), "utf8").toString("base64url")
}

/** The anchor a thread's first comment carries, or null (older threads, or a value that does not parse). */
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

/**
 * A body to post on `platform`: the text neutralised (commands, mentions, references, forged
 * markers), then our markers, one a line, after a blank line. `list` holds `[kind, value]` pairs.
 */
export function prepareBody(
  text: string,
  list: readonly (readonly [kind: string, value: string])[],
  platform: PlatformName,
): PreparedBody {
  const neutral = neutralizeMarkdown(text, platform)
  const tail = list.map(([kind, value]) => hiddenMarker(kind, value)).join("\n")
  return {
    body: tail === "" ? neutral.text : `${neutral.text.replace(/\n*$/, "")}\n\n${tail}\n`,
    changes: changeCount(neutral),
  }
}

/** A bot comment's text without our markers, for the coordinator's view of the previous review. */
export function stripMarkers(body: string): string {
  return body
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim()
}

const markerPrefix = "opencode-reviewer:"
const markerKind = /^[A-Za-z0-9_-]+$/
const markerValue = /^[A-Za-z0-9:_-]+$/

// The neutraliser lists one entry per kind of change, "(×N)" when it happened N times.
function changeCount(neutral: Neutralized): number {
  return neutral.changes.reduce((sum, change) => sum + Number(/\(×(\d+)\)$/.exec(change)?.[1] ?? 1), 0)
}
