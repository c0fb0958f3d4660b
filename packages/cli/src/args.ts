import { parseArgs } from "node:util"
import type { commandHelp } from "./help"

/** The flags every command shares (interfaces: docs/contracts.md). */
export const commonOptions = {
  repo: { type: "string" },
  base: { type: "string" },
  head: { type: "string" },
  "working-tree": { type: "boolean" },
  patch: { type: "string" },
  title: { type: "string" },
  "description-file": { type: "string" },
  config: { type: "string" },
  "work-dir": { type: "string" },
  "output-dir": { type: "string" },
  vcs: { type: "string" },
  json: { type: "boolean" },
  "fail-on": { type: "string" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const

/** Parses one command's flags; an unknown or malformed flag is a usage error naming the command. */
export async function parse(args: string[], command: keyof typeof commandHelp) {
  try {
    return parseArgs({ args, options: commonOptions, allowPositionals: false, strict: true })
  } catch (error) {
    // Loaded only for the error: errors.ts brings core, which `--help` never needs.
    const { CliUsageError } = await import("./errors")
    throw new CliUsageError((error as Error).message, command)
  }
}

/** Parsed common flags. */
export type Flags = Awaited<ReturnType<typeof parse>>["values"]
