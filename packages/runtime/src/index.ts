// The runtime package's public surface. OpenCode loads ./plugin.ts (function exports only); this
// file is for tests and tools that need the pieces.

export {
  classifyError,
  describeError,
  type ErrorKind,
  type ErrorVerdict,
  isSessionError,
  type SessionError,
} from "@opencode-reviewer/core/run/provider-errors"
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
export {
  type AssistantReply,
  addTokens,
  createClientDriver,
  noTokens,
  readReply,
  type SessionClient,
  type SessionDriver,
  splitModel,
  type Tokens,
} from "./driver"
export { ChildSessionRequestError } from "./errors"
export { type RetryStatus, readEvent, readStatus, type SessionSignal } from "./events"
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
