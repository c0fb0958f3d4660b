import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Stop at once, with one clear message, when the run is not on Bun (test/setup/bun-runtime.ts).
    globalSetup: ["test/setup/bun-runtime.ts"],
    setupFiles: ["test/setup/bun-runtime-worker.ts"],
  },
})
