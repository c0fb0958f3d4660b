// The runtime package's public surface. OpenCode loads ./plugin.ts (function exports only); this
// file is for tests and tools that need the pieces.
export {
  createBreakers,
  selectModel,
  type BreakerEvent,
  type BreakerOptions,
  type Breakers,
  type BreakerState,
  type ModelChoice,
} from "./breaker"
export {
  classifyError,
  describeError,
  isSessionError,
  type ErrorKind,
  type ErrorVerdict,
  type SessionError,
} from "@opencode-reviewer/core/run/provider-errors"
export { createManualClock, systemClock, type Clock, type ManualClock } from "./clock"
export {
  addTokens,
  createClientDriver,
  noTokens,
  readReply,
  splitModel,
  type AssistantReply,
  type SessionClient,
  type SessionDriver,
  type Tokens,
} from "./driver"
export { ChildSessionRequestError } from "./errors"
export { readEvent, readStatus, type RetryStatus, type SessionSignal } from "./events"
export { askForCorrection, askForShorterAnswer, briefReviewer, type Briefing } from "./instructions"
export {
  createSessionMonitor,
  type SessionMonitor,
  type StopReason,
  type TurnEnd,
  type TurnOptions,
  type TurnWatch,
} from "./monitor"
export {
  limitsInMs,
  parsePlan,
  readPlanFile,
  RuntimeAgent,
  RuntimeLimits,
  RuntimePlan,
  type LimitsMs,
  type PlanRead,
} from "./plan-file"
export { outputLimits, renderFailure, renderResults, type RenderedResults, type RenderOptions } from "./render"
export {
  createRuntimeHooks,
  logService,
  planTasks,
  sentinelFile,
  type RuntimeOptions,
  type SpawnArgs,
  type SpawnMetadata,
} from "./runtime"
export {
  runReviewers,
  type FindingsParse,
  type ReviewerOutcome,
  type ReviewerTask,
  type RunOptions,
  type SchedulerLimits,
} from "./scheduler"
export { ReviewRuntime } from "./plugin"
