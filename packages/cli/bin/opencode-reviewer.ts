#!/usr/bin/env bun
import { main } from "../src/main"

/**
 * Writes to a standard stream and tells when every byte has been handed to the OS. `process.exit`
 * drops whatever a pipe has not taken yet (a slow reader got only the first 64 KiB), so the process
 * exits only once each stream's write callbacks have run. A reader that closed the pipe (EPIPE) ends
 * the wait for that stream instead of crashing or hanging: nothing more can reach it.
 */
function flushingWriter(stream: NodeJS.WriteStream) {
  let pending = 0
  let broken = false
  const waiting: (() => void)[] = []
  const settle = () => {
    if (pending === 0 || broken) for (const resolve of waiting.splice(0)) resolve()
  }
  stream.on("error", () => {
    broken = true
    settle()
  })
  return {
    write(text: string) {
      if (broken || stream.destroyed) return
      pending++
      try {
        stream.write(text, () => {
          pending--
          settle()
        })
      } catch {
        broken = true
        settle()
      }
    },
    flushed: () =>
      new Promise<void>((resolve) => {
        if (stream.destroyed) broken = true
        waiting.push(resolve)
        settle()
      }),
  }
}

const stdout = flushingWriter(process.stdout)
const stderr = flushingWriter(process.stderr)
const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => stdout.write(text),
  stderr: (text) => stderr.write(text),
  execPath: process.execPath,
  stdin: async () => new Uint8Array(await Bun.stdin.arrayBuffer()),
})
await Promise.all([stdout.flushed(), stderr.flushed()])
// Still an explicit exit: a handle left open (a timer, a socket) must not keep the CLI alive.
process.exit(code)
