#!/usr/bin/env bun
import { main } from "../src/main"

const code = await main({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  execPath: process.execPath,
  stdin: async () => new Uint8Array(await Bun.stdin.arrayBuffer()),
})
process.exit(code)
