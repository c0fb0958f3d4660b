import { ReviewError } from "@opencode-reviewer/core"

/** The command line itself is wrong; the message says what to type instead. */
export class CliUsageError extends ReviewError<{ command: string | null }> {
  constructor(message: string, command: string | null) {
    super("CliUsageError", message, { command })
  }
}

/** Exit code for anything thrown out of a command: every failure to review is 1. */
export function exitCodeFor(_error: unknown): number {
  return 1
}

/** The text a person sees for an error: what happened, then what they can do about it. */
export function formatError(error: unknown): string {
  if (error instanceof CliUsageError) {
    const help = error.data.command ? `opencode-reviewer ${error.data.command} --help` : "opencode-reviewer --help"
    return `error: ${error.message}\nrun "${help}" for usage\n`
  }
  if (error instanceof ReviewError) {
    const hint = typeof error.data.hint === "string" ? `\nhint: ${error.data.hint}` : ""
    return `error: ${error.message}${hint}\n`
  }
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error)
  return `error: internal error, please report it with the output below\n${detail}\n`
}
