export { createGit, type Git, type GitResult } from "./git"
export { createLocalProvider, diffArgs, readCommitFile, readCommitHeads, type LocalOptions } from "./local-provider"
export { createPatchProvider, type PatchOptions } from "./patch-provider"
export { publishLocal, renderMarkdown, renderTerminal, type LocalPublishOptions } from "./local-publisher"
