// What other packages may import from core, by stage (the data flow reads top to bottom).
// The runtime plugin imports pure modules by path instead; see the exports map in package.json.

// opencode (the adapter's): the config type plugins see in postConfigure.
export { OpencodeConfig } from "@opencode-reviewer/opencode/config"
// assemble
export { assembleConfig } from "./assemble/assemble"
export type { Config, ConfigResult } from "./config/config"
// config
export { applyModelEnv, ConfigInput, defaults, ModelTier, parseConfigText, resolveConfig } from "./config/config"
export { priceOf } from "./config/spend"
// judge
export { atOrAbove } from "./judge/decision"
export { parseFindings, parseReview, Review, renderReviewXml } from "./judge/findings-xml"
export { findingFingerprints } from "./judge/fingerprints"
export { traceLine } from "./judge/line-trace"
export type { PreviousFinding } from "./judge/previous-findings"
export type { ReviewRecordInput } from "./judge/review-record"
export { buildReviewRecord, PlanFacts, parsePlanFacts, ReviewFinding, ReviewRecord } from "./judge/review-record"
// model
export { ChangeReadError, describe, ReviewError } from "./model/errors"
export { compareSeverity, Decision, Finding, Severity, severityOrder } from "./model/finding"
export type { Logger } from "./model/logger"
export { silentLogger } from "./model/logger"
export { modelIdSchema, providerOf, splitModelId } from "./model/model-id"
export {
  controlCharacters,
  countFindings,
  findingLocation,
  formatDuration,
  formatNumber,
  inlineCode,
  invisibleCharacters,
  oneLine,
  plural,
  removeInvisible,
  reviewIncomplete,
} from "./model/text"
export type { UsageItem } from "./model/usage"
export { reviewUsageTotal, TokenCounts, tallyUsage } from "./model/usage"
// plan
export { coordinatorName } from "./plan/agents"
export type { Change, PublishOptions, PublishReport, VcsProvider } from "./plan/change"
export { anonymousMergeRequest } from "./plan/change"
export type { DiffFile } from "./plan/diff"
export { gitDiffArgs, parseDiff } from "./plan/diff"
export { compileGlobs } from "./plan/glob"
export type { ReviewPlan } from "./plan/plan"
export { planJson, planReview } from "./plan/plan"
export type { Mechanic, MechanicsKind } from "./plan/signals"
export { isAgentsFile, isLockfile, mechanicsKindOf } from "./plan/signals"
// plugin
export type { Contributions } from "./plugin/contributions"
export { runLifecycle } from "./plugin/lifecycle"
export type { ConfigureContext, PlanView, PromptSection, ReviewPlugin } from "./plugin/plugin"
export type { InjectionAttempt, MergeRequestComment, PreviousReview, PreviousThread } from "./prompt/prompt"
export type { PromptLibrary } from "./prompt/prompt-files"
// prompt
export { loadPrompts } from "./prompt/prompt-files"
export { boundaryTags, escapeAttribute, sanitizeUntrusted } from "./prompt/sanitize"
// protocol
export { holdVariable, submitReviewTool, tools, workDirVariable, workFiles } from "./protocol/names"
export { parseProgressLine } from "./protocol/progress"
export { parseSpawnMetadata, ReviewerOutcome, SpawnMetadata } from "./protocol/spawn-metadata"
export { parseSubmission, Submission } from "./protocol/submission"
// report
export { reportFiles, writeReports } from "./report/reports"
// run
export { childEnv } from "./run/child-env"
export type { CoordinatorResult, StepUsage } from "./run/coordinator"
export { describeAttempt, runCoordinator } from "./run/coordinator"
export { missingProviderKeys, ProviderKeyMissingError, providerKeyVariables } from "./run/provider-keys"
