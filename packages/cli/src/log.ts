import pino from "pino"

/** The root logger: JSON lines on stderr, secrets redacted, quiet unless --verbose or a level is set. */
export function createLogger(options: { verbose: boolean; env: Record<string, string | undefined> }): pino.Logger {
  const level = options.env.OPENCODE_REVIEWER_LOG_LEVEL ?? (options.verbose ? "debug" : "warn")
  return pino(
    {
      level,
      base: undefined,
      // Top-level and one level down: pino paths do not recurse.
      redact: {
        paths: [
          "apiKey",
          "token",
          "authorization",
          "headers.authorization",
          "*.apiKey",
          "*.token",
          "*.authorization",
          "*.headers.authorization",
          "env.*",
        ],
        censor: "[redacted]",
      },
    },
    pino.destination({ fd: 2, sync: true }),
  )
}
