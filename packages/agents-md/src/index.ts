export { category, checkAgentsMd, fillerPhraseOf, fillerPhrases, maxLines, tools } from "./checks"
export { scanMarkdown, type ScannedFile, type ScannedLine } from "./markdown"
export { agentsMdPlugin, checkChangedFiles, reviewerName, type AgentsMdPluginOptions } from "./plugin"
export {
  capText,
  codeFindingsForCoordinator,
  codeFindingsForReviewer,
  injectCapBytes,
  mechanicsSection,
  repositorySection,
  templateSection,
} from "./sections"
export { fetchTemplate, TemplateFetchError, templateDefaults, type TemplateFetchOptions } from "./template"
