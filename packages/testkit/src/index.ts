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
