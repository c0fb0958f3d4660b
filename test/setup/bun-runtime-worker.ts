// vitest setupFiles entry: runs in each forked worker before its test file (see bun-runtime.ts).
import { assertBunRuntime } from "./bun-runtime"

assertBunRuntime(`vitest worker pid ${process.pid}`)
