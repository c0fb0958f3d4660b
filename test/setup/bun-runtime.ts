// The suite must run on the Bun runtime (`bun run test`, i.e. `bun --bun vitest run`): the code and
// the tests use `Bun.*` throughout. On Node every such test fails on its own with
// "ReferenceError: Bun is not defined" (and the rest pass, so the run looks half broken), which is
// what a dangling /tmp/bun-node-<revision>/node shim produces (see AGENTS.md). This stops the run
// at the start with one message instead.
//
// Registered twice in vitest.config.ts: as `globalSetup` (the default export, in vitest's main
// process, before any worker starts: the whole run stops at once) and as a `setupFiles` entry
// (`bun-runtime-worker.ts`, in every forked worker, in case a worker was started on another runtime).

/** Why this process is not a usable Bun runtime, or null when it is. */
export function bunRuntimeProblem(where: string): string | null {
  if (typeof Bun !== "undefined" && typeof process.versions.bun === "string") return null
  return (
    "the tests must run on the Bun runtime: run `bun run test` (bun --bun vitest run); " +
    `globalThis.Bun is undefined, node is ${process.execPath} (${where}, node ${process.version}). ` +
    "A stale /tmp/bun-node-*/node shim pointing to a deleted bun makes `bun --bun` fall back to Node: " +
    "`bash .ci/run` repairs it, or remove the dangling /tmp/bun-node-* directory."
  )
}

export function assertBunRuntime(where: string): void {
  const problem = bunRuntimeProblem(where)
  if (problem !== null) throw new Error(problem)
}

/**
 * vitest globalSetup: runs once in the main process before any worker starts. It exits rather than
 * throws: vitest would print "No test files found" above a thrown error and still write a JSON report
 * of 0 tests, which `.ci/run` would summarise as if nothing had failed.
 */
export default function setup(): void {
  const problem = bunRuntimeProblem("vitest main process")
  if (problem === null) return
  process.stderr.write(`\nerror: ${problem}\n\n`)
  process.exit(1)
}
