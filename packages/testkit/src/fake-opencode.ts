#!/usr/bin/env bun
// A stand-in for the `opencode` binary in runner tests: a tiny real process whose behaviour per
// invocation comes from $FAKE_OPENCODE (a JSON array, one entry per attempt). It logs what it was
// given (argv, stdin size, env names, config model) to $FAKE_OPENCODE_LOG as JSON lines.
import { appendFileSync, existsSync, readFileSync } from "node:fs"

interface Script {
  lines?: (Record<string, unknown> | string)[]
  stderr?: string
  exit?: number
  hang?: boolean
  lineDelayMs?: number
}

const scripts = JSON.parse(process.env.FAKE_OPENCODE ?? "[]") as Script[]
const state = process.env.FAKE_OPENCODE_LOG ?? "/dev/null"
const attempt = existsSync(state) ? readFileSync(state, "utf8").split("\n").filter(Boolean).length : 0
const script = scripts[Math.min(attempt, scripts.length - 1)] ?? {}
const stdin = new Uint8Array(await Bun.stdin.arrayBuffer())
const config = JSON.parse(process.env.OPENCODE_CONFIG_CONTENT ?? "{}") as { model?: string }
appendFileSync(
  state,
  JSON.stringify({
    argv: process.argv.slice(2),
    stdinBytes: stdin.length,
    stdinHead: new TextDecoder().decode(stdin.slice(0, 200)),
    env: Object.keys(process.env).sort(),
    pwd: process.env.PWD,
    model: config.model,
  }) + "\n",
)
if (script.stderr) process.stderr.write(script.stderr)
for (const line of script.lines ?? []) {
  process.stdout.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n")
  if (script.lineDelayMs) await Bun.sleep(script.lineDelayMs)
}
if (script.hang) await new Promise(() => {})
process.exit(script.exit ?? 0)
