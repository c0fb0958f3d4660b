/** The logging surface core needs; a pino logger satisfies it. Only the CLI creates the root logger. */
export interface Logger {
  debug(data: object, message?: string): void
  info(data: object, message?: string): void
  warn(data: object, message?: string): void
  error(data: object, message?: string): void
  child(bindings: Record<string, unknown>): Logger
}

/** A logger that drops everything, for tests and library callers that pass none. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child() {
    return silentLogger
  },
}
