import { prepareBody as prepareMarkdownBody } from "@opencode-reviewer/core"

// GitLab's names for core's hidden markers (`packages/core/src/report/markers.ts`).
export type { Anchor } from "@opencode-reviewer/core"
export { decodeAnchor, encodeAnchor, markers, readMarker as markerIn, stripMarkers } from "@opencode-reviewer/core"

/** A note body to post on GitLab: the text neutralised (quick actions, mentions, forged markers), then our markers. */
export function prepareBody(text: string, list: [string, string][]): { body: string; changes: number } {
  return prepareMarkdownBody(text, list, "gitlab")
}
