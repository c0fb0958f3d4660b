export { createTempRepo, gitEnv, type TempRepo } from "./repo"
export {
  createOpencodeSandbox,
  findOpencodeBinary,
  opencodeVersion,
  runOpencode,
  seedConfigDir,
  type OpencodeRun,
  type OpencodeSandbox,
} from "./opencode"
