// What other packages may import from core; each path names its stage folder (the stage order is in
// AGENTS.md). OpencodeConfig is the adapter's, re-exported as the config postConfigure sees. The
// runtime plugin and the comment server import pure modules by path instead: see package.json.

export { OpencodeConfig } from "@opencode-reviewer/opencode/config"
export { assembleConfig } from "./assemble/assemble"
export type { Config, ConfigResult } from "./config/config"
export {
  applyModelEnv,
  ConfigInput,
  defaults,
  ModelTier,
  parseConfigText,
  resolveConfig,
  VerifyLevel,
} from "./config/config"
export type { RaisedBy, RaisedSplit } from "./judge/already-raised"
export { raisedLineWindow, splitAlreadyRaised } from "./judge/already-raised"
export { atOrAbove } from "./judge/decision"
export { findingFingerprints } from "./judge/fingerprints"
export { traceLine } from "./judge/line-trace"
export type { PreviousFinding } from "./judge/previous-findings"
export type { ReviewRecordInput } from "./judge/review-record"
export { buildReviewRecord, PlanFacts, parsePlanFacts, ReviewFinding, ReviewRecord } from "./judge/review-record"
export type { ApplicableSuggestion } from "./judge/suggestion"
export { applicableSuggestion } from "./judge/suggestion"
export type { CheckedEvidence, Evidence, Verdict, VerifierAnswer } from "./judge/verify"
export {
  applyVerdict,
  checkedEvidence,
  evidenceWindowLines,
  findingsToVerify,
  parseVerdicts,
  readVerdicts,
  verifierPrompt,
} from "./judge/verify"
export { AccessLevel, BreakGlassAccess, describeAccess, dismissAccess, hasAccess } from "./model/access"
export type { RequestFailure } from "./model/errors"
export { ChangeReadError, describe, ReviewError } from "./model/errors"
export { compareSeverity, Decision, Finding, Severity, severityOrder, Verification } from "./model/finding"
export type { Logger } from "./model/logger"
export { silentLogger } from "./model/logger"
export { modelIdSchema, providerOf, splitModelId } from "./model/model-id"
export type { RetryTiming } from "./model/retry"
export { resolveRetryTiming } from "./model/retry"
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
export { coordinatorName } from "./plan/agents"
export type { DiffFile } from "./plan/diff"
export { gitDiffArgs, parseDiff } from "./plan/diff"
export { compileGlobs } from "./plan/glob"
export type { Mechanic, MechanicsKind } from "./plan/signals"
export { isAgentsFile, isLockfile, mechanicsKindOf } from "./plan/signals"
export { priceOf } from "./plan/spend"
export type { Contributions } from "./plugin/contributions"
export { runLifecycle } from "./plugin/lifecycle"
export type { ConfigureContext, PlanView, PromptSection, ReviewPlugin } from "./plugin/plugin"
export type { InjectionAttempt } from "./prompt/injection"
export type { MergeRequestComment, PreviousReview, PreviousThread } from "./prompt/prompt"
export type { PromptLibrary } from "./prompt/prompt-files"
export { loadPrompts } from "./prompt/prompt-files"
export { boundaryTags, escapeAttribute, sanitizeUntrusted } from "./prompt/sanitize"
export { parseFindings, parseReview, Review, renderReviewXml } from "./protocol/findings-xml"
export { submitReviewTool, tools, workDirVariable, workFiles } from "./protocol/names"
export { parseProgressLine } from "./protocol/progress"
export { parseSpawnMetadata, ReviewerOutcome, SpawnMetadata } from "./protocol/spawn-metadata"
export { parseSubmission, Submission } from "./protocol/submission"
export type { Anchor, PreparedBody } from "./report/markers"
export {
  decodeAnchor,
  encodeAnchor,
  hiddenMarker,
  markers,
  prepareBody,
  readMarker,
  stripMarkers,
} from "./report/markers"
export type { Neutralized, PlatformName } from "./report/neutralize"
export { neutralizeForGithub, neutralizeForGitlab, neutralizeMarkdown } from "./report/neutralize"
export { reportFiles, writeReports } from "./report/reports"
export type { InlineFinding, ReviewPlatform, ReviewWarning, SummaryInput } from "./report/review-summary"
export {
  incompleteHeadline,
  recordWarnings,
  renderFailureSummary,
  renderSummary,
  renderThread,
} from "./report/review-summary"
export type { AccessOf, BreakGlassOutcome, BreakGlassRequest, Person } from "./review/access"
export { decideBreakGlass, githubAccess, gitlabAccess } from "./review/access"
export type {
  Change,
  ChangeRequest,
  PublishOptions,
  PublishReport,
  RequestOutcome,
  UnreadFile,
  VcsProvider,
} from "./review/change"
export { anonymousMergeRequest } from "./review/change"
export type { ReviewPlan } from "./review/plan-review"
export { planJson, planReview } from "./review/plan-review"
export type { BotThread, ReadFileAt, TraceInput } from "./review/previous-threads"
export { decodedMarker, tracePreviousFindings } from "./review/previous-threads"
export type { PublishLog } from "./review/publishing"
export {
  closingReplies,
  continuationOf,
  createPublishLog,
  errorText,
  findingMarkers,
  fitComment,
  hasPhrase,
  postableSuggestion,
  readHeadsWith,
  reopenText,
  shortSha,
  threadMatcher,
} from "./review/publishing"
export { botHandle, requestOf } from "./review/request"
export type { SummaryComment, SummaryOutcome, SummaryStore, SummaryWrite } from "./review/summary-upsert"
export { upsertSummary } from "./review/summary-upsert"
export { childEnv } from "./run/child-env"
export type { CoordinatorResult, StepUsage } from "./run/coordinator"
export { describeAttempt, runCoordinator } from "./run/coordinator"
export { missingProviderKeys, ProviderKeyMissingError, providerKeyVariables } from "./run/provider-keys"
