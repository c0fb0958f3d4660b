export { createTempRepo, gitEnv, type TempRepo } from "./repo"
export {
  createOpencodeSandbox,
  findOpencodeBinary,
  opencodeVersion,
  runOpencode,
  type OpencodeRun,
  type OpencodeSandbox,
} from "./opencode"
export const fakeOpencodePath = new URL("./fake-opencode.ts", import.meta.url).pathname
export {
  contextOverflowReply,
  findingsReply,
  findingsXml,
  hangReply,
  lengthReply,
  rateLimitReply,
  resetReply,
  stallReply,
  startModelServer,
  statusReply,
  text,
  titleSystemMarker,
  toolCall,
  type ModelServer,
  type ModelServerOptions,
  type RecordedRequest,
  type Reply,
  type ScriptedFinding,
  type Usage,
} from "./model-server"
