// The runtime package's public surface. OpenCode loads ./plugin.ts (function exports only); this
// file is for tests and tools that need the pieces.

export {
  classifyError,
  describeError,
  type ErrorKind,
  type ErrorVerdict,
} from "@opencode-reviewer/core/run/provider-errors"
// OpenCode's shapes the runtime's own types use; the adapter reads them.
export type { SessionError } from "@opencode-reviewer/opencode/errors"
export {
  type AssistantReply,
  ChildSessionRequestError,
  type RetryStatus,
  type SessionClient,
  type SessionSignal,
} from "@opencode-reviewer/opencode/session"
export {
  type BreakerEvent,
  type BreakerOptions,
  type BreakerState,
  type Breakers,
  createBreakers,
  type ModelChoice,
  selectModel,
} from "./breaker"
export { type Clock, createManualClock, type ManualClock, systemClock } from "./clock"
export { addTokens, createClientDriver, noTokens, type SessionDriver, type Tokens } from "./driver"
export { askForCorrection, askForShorterAnswer, type Briefing, briefReviewer } from "./instructions"
export {
  createSessionMonitor,
  type SessionMonitor,
  type StopReason,
  type TurnEnd,
  type TurnOptions,
  type TurnWatch,
} from "./monitor"
export {
  type LimitsMs,
  limitsInMs,
  type PlanParse,
  type PlanRead,
  parsePlan,
  RuntimeAgent,
  RuntimeLimits,
  RuntimePlan,
  readPlanFile,
} from "./plan-file"
export { ReviewRuntime } from "./plugin"
export { outputLimits, type RenderedResults, type RenderOptions, renderFailure, renderResults } from "./render"
export {
  createRuntimeHooks,
  logService,
  planTasks,
  type RuntimeOptions,
  type SpawnArgs,
  type SpawnMetadata,
  sentinelFile,
} from "./runtime"
export {
  type FindingsParse,
  type ReviewerOutcome,
  type ReviewerTask,
  type RunOptions,
  runReviewers,
  type SchedulerLimits,
} from "./scheduler"
