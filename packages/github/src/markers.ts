import { type PreparedBody, prepareBody as prepareFor, readMarker } from "@opencode-reviewer/core"

export { decodeAnchor, encodeAnchor, markers, neutralizeForGithub, stripMarkers } from "@opencode-reviewer/core"

/** A body to post on GitHub: neutralised for GitHub-flavoured Markdown, then our markers. */
export function prepareBody(text: string, list: readonly (readonly [kind: string, value: string])[]): PreparedBody {
  return prepareFor(text, list, "github")
}

/** A marker's value in a comment body, or null. */
export const markerIn = readMarker
