/** Base of every error core raises: a stable name, structured data, and whether a retry could help. */
export class ReviewError<Data extends Record<string, unknown> = Record<string, unknown>> extends Error {
  readonly data: Data
  readonly retryable: boolean

  constructor(name: string, message: string, data: Data, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = name
    this.data = data
    this.retryable = options.retryable ?? false
  }

  /** A plain object that survives JSON (for logs, review.json and tool outputs). */
  toJSON() {
    return { name: this.name, message: this.message, data: this.data, retryable: this.retryable }
  }
}

/** The user's configuration file is unreadable or invalid; `issues` name the key paths. */
/**
 * The facts of an API request a provider's request layer gave up on (GitLab, GitHub). `status` is
 * null when no response came (timeout, dropped connection).
 */
export interface RequestFailure extends Record<string, unknown> {
  method: string
  /** The URL's path only, never its query string. */
  path: string
  status: number | null
  /** The service's own message (JSON), the plain-text body, or what went wrong on the wire. */
  description: string
  attempts: number
  /**
   * A create (POST, GraphQL mutation) whose outcome is unknown (5xx, timeout, dropped connection)
   * and that was not sent again, because whether it landed could not be told.
   */
  ambiguous: boolean
}

export class ConfigInvalidError extends ReviewError<{ file: string | null; issues: string[] }> {
  constructor(file: string | null, issues: string[], cause?: unknown) {
    const where = file ?? "configuration"
    super("ConfigInvalidError", `${where} is invalid:\n  ${issues.join("\n  ")}`, { file, issues }, { cause })
  }
}

/** A plugin's `configure` hook failed; the run stops with the plugin's name. */
export class PluginConfigureError extends ReviewError<{ plugin: string; phase: string }> {
  constructor(plugin: string, phase: string, cause: unknown) {
    super(
      "PluginConfigureError",
      `plugin "${plugin}" failed in ${phase}: ${describe(cause)}`,
      { plugin, phase },
      { cause },
    )
  }
}

/** The change to review could not be read (missing repository, unknown ref, unreadable patch). */
export class ChangeReadError extends ReviewError<{ source: string; hint: string | null }> {
  constructor(message: string, data: { source: string; hint?: string | null }, cause?: unknown) {
    super("ChangeReadError", message, { source: data.source, hint: data.hint ?? null }, { cause })
  }
}

/** The assembled opencode.json failed its own schema: a bug in an assembler contribution. */
export class ConfigAssemblyError extends ReviewError<{ issues: string[] }> {
  constructor(issues: string[]) {
    super("ConfigAssemblyError", `assembled opencode.json is invalid:\n  ${issues.join("\n  ")}`, { issues })
  }
}

/** A patch file name that would be written outside the work dir. */
export class DiffPatchPathError extends ReviewError<{ patchFile: string }> {
  constructor(patchFile: string) {
    super("DiffPatchPathError", `patch file ${JSON.stringify(patchFile)} is not inside the output directory`, {
      patchFile,
    })
  }
}

/** A short message for any thrown value. */
export function describe(error: unknown): string {
  if (error instanceof Error) return error.message
  return String(error)
}

/** The opencode binary could not be started at all (missing, not executable). */
export class OpencodeStartError extends ReviewError<{ binary: string; hint: string }> {
  constructor(binary: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | null)?.code
    const hint =
      "set OPENCODE_BIN to a working opencode 1.18.x binary, or reinstall opencode-reviewer so its opencode-ai dependency brings the platform binary (opencode-linux-x64 and the like)"
    super(
      "OpencodeStartError",
      `cannot start opencode at ${binary}: ${code ?? describe(cause)}`,
      { binary, hint },
      { cause },
    )
  }
}
