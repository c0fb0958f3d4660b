export { createGit, type Git, type GitResult } from "./git"
export { createLocalProvider, type LocalOptions, readCommitFile, readCommitHeads } from "./local-provider"
export { type LocalPublishOptions, publishLocal, renderMarkdown, renderTerminal } from "./local-publisher"
export { createPatchProvider, type PatchOptions } from "./patch-provider"
