// What other packages may import from core, by stage (the data flow reads top to bottom).
// The runtime plugin imports pure modules by path instead; see the exports map in package.json.

// model
export { ChangeReadError, ReviewError, describe } from "./model/errors"
export { Decision, Finding, Severity, compareSeverity, severityOrder } from "./model/finding"
export { silentLogger } from "./model/logger"
export type { Logger } from "./model/logger"
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
export { TokenCounts, reviewUsageTotal, tallyUsage } from "./model/usage"
export type { UsageItem } from "./model/usage"

// protocol
export { holdVariable, submitReviewTool, tools, workDirVariable, workFiles } from "./protocol/names"
export { parseProgressLine } from "./protocol/progress"
export { ReviewerOutcome, SpawnMetadata, parseSpawnMetadata } from "./protocol/spawn-metadata"
export { Submission, parseSubmission } from "./protocol/submission"

// config
export { ConfigInput, ModelTier, applyModelEnv, defaults, parseConfigText, resolveConfig } from "./config/config"
export type { Config, ConfigResult } from "./config/config"
export { priceOf } from "./config/spend"

// plan
export { coordinatorName } from "./plan/agents"
export { anonymousMergeRequest } from "./plan/change"
export type { Change, PublishOptions, VcsProvider } from "./plan/change"
export { parseDiff } from "./plan/diff"
export type { DiffFile } from "./plan/diff"
export { compileGlobs } from "./plan/glob"
export { planJson, planReview } from "./plan/plan"
export type { ReviewPlan } from "./plan/plan"
export { isAgentsFile, isLockfile, mechanicsKindOf } from "./plan/signals"
export type { Mechanic, MechanicsKind } from "./plan/signals"

// plugin
export type { Contributions } from "./plugin/contributions"
export { runLifecycle } from "./plugin/lifecycle"
export type { ConfigureContext, PlanView, PromptSection, ReviewPlugin } from "./plugin/plugin"

// prompt
export { loadPrompts } from "./prompt/prompt-files"
export type { PromptLibrary } from "./prompt/prompt-files"
export type { InjectionAttempt, MergeRequestComment, PreviousReview, PreviousThread } from "./prompt/prompt"
export { boundaryTags, escapeAttribute, sanitizeUntrusted } from "./prompt/sanitize"

// assemble
export { assembleConfig } from "./assemble/assemble"
export { OpencodeConfig } from "./assemble/opencode-config"

// run
export { childEnv } from "./run/child-env"
export { describeAttempt, runCoordinator } from "./run/coordinator"
export type { CoordinatorResult, StepUsage } from "./run/coordinator"
export type { RunEvent } from "./run/jsonl"
export {
  findOpencodeBinary,
  opencodeHomeEnv,
  opencodeQuietEnv,
  opencodeVersion,
  prepareOpencodeHome,
} from "./run/opencode-binary"
export { ProviderKeyMissingError, missingProviderKeys, providerKeyVariables } from "./run/provider-keys"

// judge
export { atOrAbove } from "./judge/decision"
export { Review, parseFindings, parseReview, renderReviewXml } from "./judge/findings-xml"
export { findingFingerprints } from "./judge/fingerprints"
export { traceLine } from "./judge/line-trace"
export type { PreviousFinding } from "./judge/previous-findings"
export { PlanFacts, ReviewFinding, ReviewRecord, buildReviewRecord, parsePlanFacts } from "./judge/review-record"
export type { ReviewRecordInput } from "./judge/review-record"

// report
export { reportFiles, writeReports } from "./report/reports"
