// The OpenCode adapter: everything that knows OpenCode's config shape, CLI flags, event and tool
// names, SDK calls and plugin API. Code bundled into small scripts imports the pure modules by path
// (config, errors, events, model-id, session). The plugin API's values (`tool`, `writeLog`,
// `sessionClientOf`) come only from `@opencode-reviewer/opencode/plugin`, so that importing this
// index never loads @opencode-ai/plugin (and the zod copy inside it); its types are here.

export {
  findOpencodeBinary,
  type OpencodeHome,
  opencodeHomeEnv,
  opencodeQuietEnv,
  opencodeVersion,
  prepareOpencodeHome,
} from "./binary"
export {
  AgentBlock,
  builtInAgents,
  OpencodeConfig,
  Permission,
  readOnlyProblem,
  readOnlyTools,
  withDefaultAgentModel,
} from "./config"
export { isSessionError, type SessionError } from "./errors"
export {
  cutOffReason,
  defaultFlush,
  errorEventOf,
  type FlushPolicy,
  type JsonlLine,
  parseJsonlLine,
  type RunEvent,
  readJsonl,
  type StepFinish,
  stepFinishOf,
  type TokenUsage,
  type ToolUse,
  textOf,
  toolUseOf,
} from "./events"
export { ModelId, modelIdPattern, modelIdSchema, splitModelId } from "./model-id"
export type { Hooks, LogEntry, LogLevel, Plugin, PluginInput } from "./plugin"
export {
  type PromptAnswer,
  type PromptInput,
  PromptModelError,
  PromptRequestError,
  type PromptServer,
  type PromptServerOptions,
  PromptServerStartError,
  promptAgentName,
  promptServerConfig,
  promptServerEnv,
  startPromptServer,
} from "./prompt-server"
export { type RunOptions, type RunProcess, runArgs, runEnv, spawnRun } from "./run"
export {
  type AssistantReply,
  ChildSessionRequestError,
  type ChildSessions,
  type ClientResult,
  childSessions,
  type RetryStatus,
  readEvent,
  readReply,
  readStatus,
  type SessionClient,
  type SessionSignal,
  splitModel,
} from "./session"
