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

type Parsed = ReturnType<typeof import("node:util").parseArgs<ParseConfig>>
type ParseConfig = { args: string[]; options: typeof commonOptions; allowPositionals: false; strict: true }

/** Parses one command's flags; an unknown or malformed flag is a usage error naming the command. */
export async function parse(args: string[], command: keyof typeof commandHelp): Promise<Parsed> {
  const plain = parsePlain(args)
  if (plain !== null) return plain
  // Anything else is node's parseArgs' to read, or to refuse with its own message. Loaded here
  // only: node:util costs every start-up about 10 ms.
  const { parseArgs } = await import("node:util")
  try {
    return parseArgs({ args, options: commonOptions, allowPositionals: false, strict: true })
  } catch (error) {
    // Loaded only for the error: errors.ts brings core, which `--help` never needs.
    const { CliUsageError } = await import("./errors")
    throw new CliUsageError((error as Error).message, command)
  }
}

/**
 * What node's parseArgs returns for flags written the plain way (`--flag`, `--name value`,
 * `--name=value`, `-v`, `-h`), or null for anything else: other forms, unknown names, a value that
 * looks like a flag, a missing value.
 */
export function parsePlain(args: readonly string[]): Parsed | null {
  const values: Record<string, string | boolean> = Object.create(null)
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!
    if (arg === "-v" || arg === "-h") {
      values[arg === "-v" ? "verbose" : "help"] = true
      continue
    }
    if (!arg.startsWith("--")) return null
    const equals = arg.indexOf("=")
    const name = equals === -1 ? arg.slice(2) : arg.slice(2, equals)
    if (!Object.hasOwn(commonOptions, name)) return null
    const type = commonOptions[name as keyof typeof commonOptions].type
    if (type === "boolean") {
      if (equals !== -1) return null
      values[name] = true
    } else if (equals !== -1) values[name] = arg.slice(equals + 1)
    else {
      // parseArgs takes the next argument unless it looks like a flag ("-" alone does not).
      const value = args[index + 1]
      if (value === undefined || (value.length > 1 && value.startsWith("-"))) return null
      values[name] = value
      index += 1
    }
  }
  return { values, positionals: [] } as unknown as Parsed
}

/** Parsed common flags. */
export type Flags = Parsed["values"]
