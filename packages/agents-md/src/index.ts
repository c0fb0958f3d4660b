export { category, checkAgentsMd, fillerPhraseOf, fillerPhrases, maxLines, tools } from "./checks"
export { type ScannedFile, type ScannedLine, scanMarkdown } from "./markdown"
export { type AgentsMdPluginOptions, agentsMdPlugin, checkChangedFiles, reviewerName } from "./plugin"
export {
  capText,
  codeFindingsForCoordinator,
  codeFindingsForReviewer,
  injectCapBytes,
  mechanicsSection,
  repositorySection,
  templateSection,
} from "./sections"
export { fetchTemplate, TemplateFetchError, type TemplateFetchOptions, templateDefaults } from "./template"
