import type pino from "pino"

// pino's own levels: a call below the logger's level writes nothing.
const levelValues: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
}

/**
 * The root logger: JSON lines on stderr, secrets redacted, quiet unless --verbose or a level is set.
 * pino loads when something is logged at or above the level (or the logger is asked anything else):
 * most runs log nothing, and pino costs a start-up tens of milliseconds.
 */
export function createLogger(options: { verbose: boolean; env: Record<string, string | undefined> }): pino.Logger {
  const level = options.env.OPENCODE_REVIEWER_LOG_LEVEL ?? (options.verbose ? "debug" : "warn")
  const threshold = Object.hasOwn(levelValues, level) ? levelValues[level]! : undefined
  // A level pino may refuse is pino's to judge, at once.
  if (threshold === undefined) return rootLogger(level)
  let root: pino.Logger | undefined
  return lazyLogger(() => (root ??= rootLogger(level)), threshold)
}

// Stands in for the logger `load` makes: calls below the level do nothing, anything else loads it.
function lazyLogger(load: () => pino.Logger, threshold: number): pino.Logger {
  let real: pino.Logger | undefined
  const target = () => (real ??= load())
  const quiet = () => {}
  return new Proxy({} as pino.Logger, {
    get(_, property) {
      if (real === undefined && typeof property === "string") {
        const value = levelValues[property]
        if (value !== undefined && property !== "silent" && value < threshold) return quiet
        // A child at a level of its own is made at once.
        if (property === "child")
          return (bindings: pino.Bindings, childOptions?: pino.ChildLoggerOptions) =>
            childOptions?.level === undefined
              ? lazyLogger(() => target().child(bindings, childOptions), threshold)
              : target().child(bindings, childOptions)
      }
      const logger = target()
      const value: unknown = Reflect.get(logger, property, logger)
      return typeof value === "function" ? value.bind(logger) : value
    },
    set(_, property, value) {
      return Reflect.set(target(), property, value)
    },
    has(_, property) {
      return Reflect.has(target(), property)
    },
  })
}

function rootLogger(level: string): pino.Logger {
  // Loaded here, synchronously, the first time a line is written.
  const pino = (require("pino") as { default: typeof import("pino").default }).default
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
