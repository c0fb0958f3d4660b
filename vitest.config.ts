import { availableParallelism } from "node:os"
import { configDefaults, defineConfig } from "vitest/config"

// Two projects: `unit` (every package's own tests: no OpenCode process, under a minute) and `e2e`
// (test/: the real opencode binary, the scripted model server, the GitLab fake). `bun run test`
// runs both; `bun run test:unit` / `bun run test:e2e` one.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // vitest's default leaves a core idle (one worker on a 2-core runner); the end-to-end suites
    // spend much of their time waiting on opencode processes, so every core gets a worker.
    maxWorkers: availableParallelism(),
    // Stop at once, with one clear message, when the run is not on Bun (test/setup/bun-runtime.ts).
    globalSetup: ["test/setup/bun-runtime.ts"],
    setupFiles: ["test/setup/bun-runtime-worker.ts"],
    projects: [
      // test/action runs action.yml's steps with a stub bunx, no OpenCode process: fast enough for unit.
      {
        extends: true,
        test: { name: "unit", include: ["packages/*/src/**/*.test.ts", "test/action/**/*.test.ts"] },
      },
      // A test that runs two or three whole reviews takes 25-40 s on a busy 2-core runner, so the
      // end-to-end budget is 90 s a test; a hung process still fails well inside it.
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/**/*.test.ts"],
          // Already in unit: counted once.
          exclude: [...configDefaults.exclude, "test/action/**"],
          testTimeout: 90_000,
        },
      },
    ],
  },
})
