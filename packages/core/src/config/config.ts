import * as z from "zod"
import { BreakGlassAccess } from "../model/access"
import { ConfigInvalidError } from "../model/errors"
import { Decision, knownCategories } from "../model/finding"
import { modelIdSchema } from "../model/model-id"

/** Where CI pipelines are defined (GitLab, GitHub Actions, CircleCI, Jenkins, Azure, Bitbucket). */
export const ciPipelineGlobs: readonly string[] = [
  "**/.gitlab-ci.yml",
  "**/.gitlab/ci/**",
  "**/.github/workflows/**",
  "**/.circleci/**",
  "**/jenkinsfile",
  "**/azure-pipelines.yml",
  "**/bitbucket-pipelines.yml",
]

/** The specialist reviewers the system knows; config keys and agent names use these spellings. */
export const ReviewerName = z.enum(knownCategories)
export type ReviewerName = z.infer<typeof ReviewerName>

/** Model families: a reviewer fails back only within its own family's chain. */
export const ModelTier = z.enum(["top", "standard", "light"])
export type ModelTier = z.infer<typeof ModelTier>

const ModelId = modelIdSchema("anthropic/claude-sonnet-4-6").describe("A model as <provider>/<model>.")

const ModelChain = z
  .array(ModelId)
  .min(1, "needs at least one model")
  .describe("The primary model, then its failback chain in order.")

const Glob = z.string().min(1).describe("A glob matched against repository paths, e.g. **/auth/**.")

const TierLimit = z.object({
  lines: z.number().int().nonnegative().optional().describe("At most this many changed lines (added + removed)."),
  files: z.number().int().nonnegative().optional().describe("At most this many changed files."),
})

const ReviewerSettings = z.object({
  enabled: z
    .boolean()
    .optional()
    .describe("false never runs this reviewer; true runs it on every tier that allows it."),
  model: z
    .union([ModelId, ModelChain])
    .optional()
    .describe("Model (or primary + failback chain) for this reviewer, overriding its tier's chain."),
  timeoutMinutes: z.number().positive().max(60).optional().describe("Per-task timeout (default 5, code-quality 10)."),
})

const ProviderBlock = z
  .record(z.string(), z.unknown())
  .describe("An OpenCode provider block; passed through to opencode.json unchanged.")

/** The configuration file as users write it (every key optional). */
/** Which findings a verifier checks before they count (judge/verify.ts): criticals, criticals and warnings, or none. */
export const VerifyLevel = z.enum(["critical", "warning", "off"])
export type VerifyLevel = z.infer<typeof VerifyLevel>

export const ConfigInput = z
  .object({
    $schema: z.string().optional().describe("JSON schema reference for editors."),
    provider: z
      .record(z.string(), ProviderBlock)
      .optional()
      .describe("OpenCode provider blocks (npm, options with {env:VAR} credentials, models with limit and cost)."),
    models: z
      .object({
        top: ModelChain.optional().describe("Coordinator family."),
        standard: ModelChain.optional().describe("Security, performance, code quality, compliance."),
        light: ModelChain.optional().describe("Documentation, release, AGENTS.md."),
      })
      .optional()
      .describe("Model chains per family: the primary then its failback chain."),
    reviewers: z
      .object(Object.fromEntries(ReviewerName.options.map((name) => [name, ReviewerSettings.optional()])))
      .optional()
      .describe("Per-reviewer switches, models and timeouts."),
    tiers: z
      .object({
        trivial: TierLimit.optional().describe("Trivial when both limits hold (default 10 lines, 20 files)."),
        lite: TierLimit.optional().describe("Lite when both limits hold (default 100 lines, 20 files)."),
        fullFiles: z
          .number()
          .int()
          .nonnegative()
          .optional()
          .describe("Full when more files than this change (default 50)."),
      })
      .optional()
      .describe("Risk tier thresholds."),
    securityPaths: z
      .array(Glob)
      .optional()
      .describe(
        "Globs of security-sensitive paths (matched case-insensitively); replaces the defaults. A match forces the full tier.",
      ),
    noise: z
      .object({
        extraPatterns: z
          .array(Glob)
          .optional()
          .describe("More globs of files nobody should read (generated, vendored)."),
        keep: z.array(Glob).optional().describe("Globs that are never filtered, whatever the built-in rules say."),
      })
      .optional()
      .describe("Noise filter additions."),
    remoteConfigUrl: z.url().optional().describe("URL of the remote reviewer-config JSON document."),
    telemetryUrl: z.url().optional().describe("URL of the telemetry tracker endpoint (fire-and-forget JSON events)."),
    pushgatewayUrl: z
      .url()
      .optional()
      .describe("Prometheus Pushgateway for review metrics; without it they go to <output-dir>/metrics.prom."),
    agentsMdTemplateUrl: z
      .url()
      .optional()
      .describe("URL of an AGENTS.md template injected into every agent's prompt."),
    standards: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Engineering standards for the compliance reviewer: a folder or markdown file relative to the repository (read from the target branch, never from the change), an absolute path on the runner, or an http(s) URL of a markdown document or of a JSON index of documents.",
      ),
    gateway: z
      .object({
        baseURL: z.url().describe("The AI gateway's base URL; every provider is routed through it."),
        apiKeyEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .describe("Name of the environment variable holding the gateway key (never the key itself)."),
        userId: z
          .string()
          .min(1)
          .optional()
          .describe("Sent only as an anonymous hash in the gateway's metadata header."),
      })
      .optional()
      .describe("Route every model through an AI gateway."),
    providerTimeouts: z
      .object({
        headerSeconds: z
          .number()
          .positive()
          .max(3600)
          .optional()
          .describe("A provider that sends no response headers this long is retried (default 120)."),
        chunkSeconds: z
          .number()
          .positive()
          .max(3600)
          .optional()
          .describe("A stream that stalls this long is retried (default 120)."),
      })
      .optional()
      .describe("Provider timeouts, so a hung provider cannot stall a job for OpenCode's default 300 s per try."),
    tracing: z
      .object({
        endpoint: z.url().optional().describe("OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces."),
        opencode: z
          .boolean()
          .optional()
          .describe("Also pass OTEL_* to OpenCode so it exports its own spans (default false)."),
      })
      .optional()
      .describe("OpenTelemetry spans for the review, each reviewer and each model step."),
    limits: z
      .object({
        concurrency: z.number().int().min(1).max(16).optional().describe("Reviewer sessions at once (default 7)."),
        overallMinutes: z
          .number()
          .positive()
          .max(120)
          .optional()
          .describe("Budget for the whole spawn_reviewers call (default 25)."),
        idleSeconds: z
          .number()
          .positive()
          .max(3600)
          .optional()
          .describe("A reviewer with no output this long is aborted (default 60)."),
        pollSeconds: z
          .number()
          .positive()
          .max(60)
          .optional()
          .describe("Status poll backing the session events (default 3)."),
        retryBudgetMinutes: z
          .number()
          .nonnegative()
          .max(60)
          .optional()
          .describe("No reviewer retry unless this much of the overall budget remains (default 2)."),
        breakerFailures: z
          .number()
          .int()
          .min(1)
          .max(20)
          .optional()
          .describe("Retryable failures that open a model's circuit breaker (default 3)."),
        breakerCooldownMinutes: z
          .number()
          .positive()
          .max(60)
          .optional()
          .describe("Open breaker cooldown before one probe (default 2)."),
        coordinatorMinutes: z
          .number()
          .positive()
          .max(240)
          .optional()
          .describe("Outer kill timer for the coordinator process (default 40)."),
        heartbeatSeconds: z
          .number()
          .positive()
          .max(600)
          .optional()
          .describe("Heartbeat line interval while the model is quiet (default 30)."),
        descriptionBytes: z
          .number()
          .int()
          .min(1024)
          .max(16_777_216)
          .optional()
          .describe(
            "Bytes of the merge request description the coordinator and the reviewers receive (default 65536); the rest is cut and the review's coverage notes say so.",
          ),
      })
      .optional()
      .describe("Timeouts, concurrency and breaker settings (defaults from the seed system)."),
    prices: z
      .record(
        ModelId,
        z.object({
          input: z.number().nonnegative().describe("USD per million input tokens."),
          output: z.number().nonnegative().describe("USD per million output tokens."),
          cacheRead: z.number().nonnegative().optional().describe("USD per million cached input tokens read."),
          cacheWrite: z
            .number()
            .nonnegative()
            .optional()
            .describe("USD per million input tokens written to the cache."),
        }),
      )
      .optional()
      .describe(
        "Prices per model, overriding the provider blocks' cost; used for the spend cap and for providers that report no cost.",
      ),
    maxCostUsd: z
      .number()
      .positive()
      .optional()
      .describe("Spend cap per review: above the estimate the review runs a cheaper agent set and says so."),
    breakGlass: z
      .union([
        z.string().min(1),
        z.object({
          phrase: z
            .string()
            .min(1)
            .optional()
            .describe('Phrase a person comments on the MR to force approval (default "break glass").'),
          minAccess: BreakGlassAccess.optional().describe(
            'Least access whose request counts: "write" (GitHub write, GitLab Developer; the default), "maintain" (Maintainer), "admin" (Owner), or "anyone" (no check).',
          ),
        }),
      ])
      .optional()
      .describe(
        'Break glass: a person with write access (GitLab: Developer or above) comments this phrase on the MR to force approval. A string is the phrase (default "break glass"); an object sets `phrase` and `minAccess`.',
      ),
    failOn: Decision.optional().describe("Decision at or above which the job exits 2 (default significant_concerns)."),
    verify: VerifyLevel.optional().describe(
      'Findings a verifier must confirm, with the lines it read, before they count: "critical" (default), "warning" (criticals and warnings) or "off". Unconfirmed ones are lowered one severity, with a note.',
    ),
  })
  .describe("opencode-reviewer configuration")
export type ConfigInput = z.infer<typeof ConfigInput>

/** Built-in defaults; where the numbers come from: docs/design-numbers.md. */
export const defaults = {
  models: {
    top: ["anthropic/claude-opus-4-7", "anthropic/claude-opus-4-6"],
    standard: ["anthropic/claude-sonnet-4-6", "anthropic/claude-sonnet-4-5"],
    light: ["moonshotai/kimi-k2.5"],
  } satisfies Record<ModelTier, string[]>,
  tiers: { trivial: { lines: 10, files: 20 }, lite: { lines: 100, files: 20 }, fullFiles: 50 },
  securityPaths: [
    "**/auth/**",
    "**/authn/**",
    "**/authz/**",
    "**/authentication/**",
    "**/authorization/**",
    "**/oauth/**",
    "**/oidc/**",
    "**/saml/**",
    "**/sso/**",
    "**/login/**",
    "**/session/**",
    "**/sessions/**",
    "**/crypto/**",
    "**/cryptography/**",
    "**/*crypto*",
    "**/secret/**",
    "**/secrets/**",
    "**/*secret*",
    "**/*credential*",
    "**/*.pem",
    "**/*.key",
    "**/.env",
    "**/.env.*",
    "**/permission/**",
    "**/permissions/**",
    "**/*permission*",
    "**/rbac/**",
    "**/acl/**",
    "**/policy/**",
    "**/policies/**",
    "**/security/**",
    "**/middleware/**",
    "**/middlewares/**",
    "**/*middleware*",
    "**/.gitlab-ci/**",
    ...ciPipelineGlobs,
    "**/migrations/**",
    "**/migration/**",
    "**/migrate/**",
    "**/alembic/versions/**",
  ],
  limits: {
    concurrency: 7,
    overallMinutes: 25,
    idleSeconds: 60,
    pollSeconds: 3,
    retryBudgetMinutes: 2,
    breakerFailures: 3,
    breakerCooldownMinutes: 2,
    coordinatorMinutes: 40,
    heartbeatSeconds: 30,
    // 64 KiB: about 16k tokens, a twelfth of a 200k window; a description past it is cut and the review says so.
    descriptionBytes: 65_536,
  },
  breakGlass: { phrase: "break glass", minAccess: "write" as BreakGlassAccess },
  failOn: "significant_concerns" as Decision,
  verify: "critical" as VerifyLevel,
  // Findings one review sends to the verifier at most; the rest are counted as they are, and the review says so.
  verifyMax: 8,
  timeoutMinutes: 5,
}

/** The configuration with every default filled in; what the rest of the system reads. */
export interface Config {
  provider: Record<string, Record<string, unknown>>
  models: Record<ModelTier, string[]>
  reviewers: Record<ReviewerName, { enabled: boolean | null; model: string[] | null; timeoutMinutes: number | null }>
  tiers: { trivial: { lines: number; files: number }; lite: { lines: number; files: number }; fullFiles: number }
  securityPaths: string[]
  noise: { extraPatterns: string[]; keep: string[] }
  remoteConfigUrl: string | null
  telemetryUrl: string | null
  pushgatewayUrl: string | null
  agentsMdTemplateUrl: string | null
  standards: string | null
  limits: Limits
  gateway: { baseURL: string; apiKeyEnv: string; userId: string | null } | null
  providerTimeouts: { headerSeconds: number; chunkSeconds: number }
  tracing: { endpoint: string | null; opencode: boolean }
  prices: Record<
    string,
    { input: number; output: number; cacheRead?: number | undefined; cacheWrite?: number | undefined }
  >
  maxCostUsd: number | null
  breakGlass: { phrase: string; minAccess: BreakGlassAccess }
  failOn: Decision
  verify: VerifyLevel
}

/** Timeouts, concurrency and breaker settings, in the units the config uses. */
export type Limits = typeof defaults.limits

/** What loading a config produced: the resolved config, warnings to log, and the file it came from. */
export interface ConfigResult {
  config: Config
  warnings: string[]
  file: string | null
}

/**
 * Validates a parsed JSON value as a config. Unknown keys become warnings; wrong values throw
 * ConfigInvalidError naming each key path.
 */
export function parseConfig(value: unknown, file: string | null = null): ConfigResult {
  const parsed = ConfigInput.safeParse(value)
  if (!parsed.success) throw new ConfigInvalidError(file, parsed.error.issues.map(formatIssue))
  const warnings = unknownKeys(ConfigInput, value, []).map((path) => `unknown key "${path}" is ignored`)
  return { config: resolveConfig(parsed.data), warnings, file }
}

/** Reads and validates a config file; a missing file is an error only when `required`. */
export async function loadConfig(file: string, options: { required: boolean }): Promise<ConfigResult> {
  const handle = Bun.file(file)
  if (!(await handle.exists())) {
    if (options.required) throw new ConfigInvalidError(file, ["file not found"])
    return { config: resolveConfig({}), warnings: [], file: null }
  }
  const text = await handle.text().catch((cause: unknown) => {
    throw new ConfigInvalidError(file, [`cannot read: ${String(cause)}`], cause)
  })
  return parseConfigText(text, file)
}

/** Parses config JSON text (as read from disk or from a git blob). */
export function parseConfigText(text: string, file: string | null): ConfigResult {
  const json = (() => {
    try {
      return { ok: true as const, value: JSON.parse(text) as unknown }
    } catch (cause) {
      return { ok: false as const, cause }
    }
  })()
  if (!json.ok) throw new ConfigInvalidError(file, [`not valid JSON: ${(json.cause as Error).message}`], json.cause)
  return parseConfig(json.value, file)
}

/** Fills defaults into a validated written config. */
export function resolveConfig(input: ConfigInput): Config {
  const reviewers = Object.fromEntries(
    ReviewerName.options.map((name) => {
      const settings = (input.reviewers as Record<string, z.infer<typeof ReviewerSettings> | undefined> | undefined)?.[
        name
      ]
      const model = settings?.model
      return [
        name,
        {
          enabled: settings?.enabled ?? null,
          model: model === undefined ? null : Array.isArray(model) ? model : [model],
          timeoutMinutes: settings?.timeoutMinutes ?? null,
        },
      ]
    }),
  ) as Config["reviewers"]
  return {
    provider: input.provider ?? {},
    models: {
      top: input.models?.top ?? defaults.models.top,
      standard: input.models?.standard ?? defaults.models.standard,
      light: input.models?.light ?? defaults.models.light,
    },
    reviewers,
    tiers: {
      trivial: { ...defaults.tiers.trivial, ...input.tiers?.trivial },
      lite: { ...defaults.tiers.lite, ...input.tiers?.lite },
      fullFiles: input.tiers?.fullFiles ?? defaults.tiers.fullFiles,
    },
    securityPaths: input.securityPaths ?? defaults.securityPaths,
    noise: { extraPatterns: input.noise?.extraPatterns ?? [], keep: input.noise?.keep ?? [] },
    remoteConfigUrl: input.remoteConfigUrl ?? null,
    telemetryUrl: input.telemetryUrl ?? null,
    pushgatewayUrl: input.pushgatewayUrl ?? null,
    agentsMdTemplateUrl: input.agentsMdTemplateUrl ?? null,
    standards: input.standards ?? null,
    limits: { ...defaults.limits, ...input.limits },
    gateway: input.gateway
      ? { baseURL: input.gateway.baseURL, apiKeyEnv: input.gateway.apiKeyEnv, userId: input.gateway.userId ?? null }
      : null,
    providerTimeouts: { headerSeconds: 120, chunkSeconds: 120, ...input.providerTimeouts },
    tracing: { endpoint: input.tracing?.endpoint ?? null, opencode: input.tracing?.opencode ?? false },
    prices: input.prices ?? {},
    maxCostUsd: input.maxCostUsd ?? null,
    breakGlass:
      typeof input.breakGlass === "string"
        ? { ...defaults.breakGlass, phrase: input.breakGlass }
        : { ...defaults.breakGlass, ...input.breakGlass },
    failOn: input.failOn ?? defaults.failOn,
    verify: input.verify ?? defaults.verify,
  }
}

/** The JSON schema editors use for `opencode-reviewer.json` (via its `$schema` key). */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ConfigInput, { io: "input", unrepresentable: "any" }) as Record<string, unknown>
}

function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")
  return `${path}: ${issue.message}`
}

// Walks the value alongside the schema and lists keys the schema does not declare. Records and
// provider blocks are open by design, so only z.object shapes are checked.
function unknownKeys(schema: z.ZodType, value: unknown, path: string[]): string[] {
  const inner = unwrap(schema)
  if (!(inner instanceof z.ZodObject) || !isPlainObject(value)) return []
  const shape = inner.shape as Record<string, z.ZodType>
  return Object.entries(value).flatMap(([key, child]) => {
    const childSchema = shape[key]
    if (!childSchema) return [[...path, key].join(".")]
    return unknownKeys(childSchema, child, [...path, key])
  })
}

function unwrap(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    return unwrap(schema.unwrap() as z.ZodType)
  }
  return schema
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

/** Environment variables that override one model family's chain (comma-separated, primary first). */
export const modelEnvNames: Record<ModelTier, string> = {
  top: "OPENCODE_REVIEWER_MODELS_TOP",
  standard: "OPENCODE_REVIEWER_MODELS_STANDARD",
  light: "OPENCODE_REVIEWER_MODELS_LIGHT",
}

/** Environment variable that sets `maxCostUsd`, the spend cap per review in USD (the CI inputs' `budget`). */
export const maxCostEnvName = "OPENCODE_REVIEWER_MAX_COST_USD"

/**
 * Applies model-chain and spend-cap overrides from the environment (how the CI component and the
 * GitHub Action pass their inputs). Empty variables are ignored; a malformed value fails naming
 * the variable.
 */
export function applyModelEnv(config: Config, env: Record<string, string | undefined>): Config {
  const maxCostUsd = readMaxCost(env[maxCostEnvName]) ?? config.maxCostUsd
  const models = { ...config.models }
  for (const tier of ModelTier.options) {
    const name = modelEnvNames[tier]
    const raw = env[name]?.trim()
    if (!raw) continue
    const chain = raw
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "")
    const parsed = ModelChain.safeParse(chain)
    if (!parsed.success) throw new ConfigInvalidError(`$${name}`, parsed.error.issues.map(formatIssue))
    models[tier] = parsed.data
  }
  return { ...config, models, maxCostUsd }
}

// Plain decimal dollars only: Number() alone would also take "0x10", "1e3" or "Infinity".
const dollars = /^(\d+(\.\d*)?|\.\d+)$/

function readMaxCost(value: string | undefined): number | null {
  const raw = value?.trim()
  if (!raw) return null
  const amount = dollars.test(raw) ? Number(raw) : Number.NaN
  const parsed = ConfigInput.shape.maxCostUsd.safeParse(amount)
  if (!parsed.success || parsed.data === undefined) {
    throw new ConfigInvalidError(`$${maxCostEnvName}`, [
      `expected a positive number of US dollars such as 2.5, got ${JSON.stringify(raw)}`,
    ])
  }
  return parsed.data
}
