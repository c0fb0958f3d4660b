// GitLab's entry points to core's Markdown neutraliser (`packages/core/src/report/neutralize.ts`,
// the rules for GitLab and GitHub with their sources) and hidden markers.
export type { Neutralized } from "@opencode-reviewer/core"
export { hiddenMarker, neutralizeForGitlab, readMarker } from "@opencode-reviewer/core"
