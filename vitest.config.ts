import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // vitest's default leaves a core idle (one worker on a 2-core runner); the end-to-end suites
    // spend much of their time waiting on opencode processes, so every core gets a worker.
    maxWorkers: availableParallelism(),
    // Stop at once, with one clear message, when the run is not on Bun (test/setup/bun-runtime.ts).
    globalSetup: ["test/setup/bun-runtime.ts"],
    setupFiles: ["test/setup/bun-runtime-worker.ts"],
  },
})
