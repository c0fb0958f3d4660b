import { fileURLToPath } from "node:url"
import { describe, expect, test } from "vitest"

const logModule = fileURLToPath(new URL("./log.ts", import.meta.url))

// A fresh Bun process (vitest's module cache would hide what loads): the lines it wrote to stderr,
// without their time, and whether pino was loaded before the first line at the level.
function run(level: string | undefined, verbose: boolean): { lines: unknown[]; quietLoadedPino: boolean } {
  const script = `
const { createLogger } = await import(${JSON.stringify(logModule)})
const loaded = () => Object.keys(require.cache).some((path) => /\\/pino@/.test(path))
const log = createLogger({ verbose: ${verbose}, env: ${JSON.stringify(level === undefined ? {} : { OPENCODE_REVIEWER_LOG_LEVEL: level })} })
const child = log.child({ plugin: "p" })
log.debug({ step: 1 }, "debug")
child.info({ step: 2 }, "info")
const quietLoadedPino = loaded()
log.warn({ apiKey: "k", env: { A: "1" }, nested: { token: "t", keep: 1 } }, "warn")
child.warn({ token: "t" }, "child warn")
child.child({ deeper: true }).error({ headers: { authorization: "x" } }, "error")
console.log(JSON.stringify({ quietLoadedPino }))`
  const child = Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" })
  if (child.exitCode !== 0) throw new Error(`bun -e failed: ${child.stderr.toString()}`)
  const lines = child.stderr
    .toString()
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const { time, ...rest } = JSON.parse(line) as { time: number }
      expect(typeof time).toBe("number")
      return rest
    })
  return {
    lines,
    quietLoadedPino: (JSON.parse(child.stdout.toString()) as { quietLoadedPino: boolean }).quietLoadedPino,
  }
}

const warned = [
  { level: 40, apiKey: "[redacted]", env: { A: "[redacted]" }, nested: { token: "[redacted]", keep: 1 }, msg: "warn" },
  { level: 40, plugin: "p", token: "[redacted]", msg: "child warn" },
  { level: 50, plugin: "p", deeper: true, headers: { authorization: "[redacted]" }, msg: "error" },
]

describe("the root logger", () => {
  test("loads pino only when a line is written at its level, and writes what pino writes", () => {
    expect(run(undefined, false)).toEqual({ lines: warned, quietLoadedPino: false })
  })

  test("writes every level asked for, children's bindings included", () => {
    const debug = [{ level: 20, step: 1, msg: "debug" }, { level: 30, plugin: "p", step: 2, msg: "info" }, ...warned]
    expect(run(undefined, true).lines).toEqual(debug)
    expect(run("info", false).lines).toEqual(debug.slice(1))
    expect(run("error", true).lines).toEqual(warned.slice(2))
    expect(run("silent", true)).toEqual({ lines: [], quietLoadedPino: false })
  })

  test("leaves a level pino does not know to pino, which refuses it", () => {
    expect(() => run("loud", false)).toThrow(/default level:loud must be included in custom levels/)
  })
})
