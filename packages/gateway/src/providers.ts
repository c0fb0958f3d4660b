import { createHash } from "node:crypto"
import { providerOf } from "@opencode-reviewer/core"
import * as z from "zod"

/** An OpenCode provider block as it goes into opencode.json (`provider.<id>`). */
export type ProviderBlock = Record<string, unknown>

/** Milliseconds, or `false` to switch that timeout off (OpenCode's own convention). */
const Timeout = z.union([z.number().int().positive(), z.literal(false)])

/** Provider timeouts written into every used provider's `options` unless the user's block sets them. */
export const ProviderTimeouts = z.object({
  /** `options.headerTimeout`: response headers must arrive within this (default 120000; OpenCode's is 300000). */
  headerMs: Timeout.optional(),
  /** `options.chunkTimeout`: longest gap between streamed chunks (default 120000; OpenCode's is 300000). */
  chunkMs: Timeout.optional(),
  /** `options.timeout`: the whole request; not set unless given (a long review stream is legitimate). */
  requestMs: Timeout.optional(),
})
export type ProviderTimeouts = z.infer<typeof ProviderTimeouts>

/** An AI gateway every provider is routed through. */
export const GatewaySettings = z.object({
  /** The gateway's base URL; provider `<id>` is reached at `<baseURL>/<id>` (trailing slashes dropped). */
  baseURL: z.url(),
  /** Name of the environment variable holding the gateway key; only `{env:NAME}` is ever written. */
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name, not a key"),
  /** Header carrying the gateway key as `Bearer {env:NAME}` (default "authorization"). */
  header: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, "must be an HTTP header name")
    .optional(),
  /** Sent only as an anonymous hash in the metadata header. */
  userId: z.string().min(1).nullish(),
})
export type GatewaySettings = z.infer<typeof GatewaySettings>

/** What `gatewayProviders` needs. */
export interface GatewayProvidersInput {
  /** The user's provider blocks (config `provider`), kept and deep-merged, never dropped. */
  userProviders: Readonly<Record<string, Record<string, unknown>>>
  /** Every planned model, "provider/model": decides which providers get a block. */
  models: readonly string[]
  gateway?: GatewaySettings | null
  timeouts?: ProviderTimeouts
}

export const defaultTimeouts = { headerMs: 120_000, chunkMs: 120_000 } as const

/** The metadata header added to every provider when a gateway is configured. */
export const metadataHeader = "x-opencode-reviewer-metadata"

/**
 * The provider blocks for opencode.json, one per provider a planned model uses:
 * - `options.headerTimeout`/`chunkTimeout` (default 120 s each; `options.timeout` only when given),
 *   so a hung provider fails in minutes instead of OpenCode's 300 s × 6 attempts (docs/opencode.md#errors-and-retries, pitfall 9);
 *   a value the user's block sets, `false` included, always wins;
 * - the user's block deep-merged over those defaults (npm, models, other options all kept);
 * - a provider the user did not declare (anthropic, openai, or any other models.dev provider) gets a
 *   minimal `{ options: {timeouts} }` block: OpenCode reads its key from the usual env var itself,
 *   and no key is ever written here.
 * With a gateway, every used provider is also routed through it: `options.baseURL` becomes
 * `<gateway>/<provider id>` (the Cloudflare AI Gateway / LiteLLM-style per-provider path),
 * `options.apiKey` becomes `{env:<apiKeyEnv>}`, and `options.headers` (and any per-model
 * `headers`) lose every authorization, host, cookie, token, secret and api-key header
 * (case-insensitively) and gain the gateway's auth header plus `x-opencode-reviewer-metadata`
 * carrying an anonymous user id (a SHA-256 of the user id, never the raw name).
 */
export function gatewayProviders(input: GatewayProvidersInput): Record<string, ProviderBlock> {
  const timeouts = ProviderTimeouts.parse(input.timeouts ?? {})
  const gateway = input.gateway ? GatewaySettings.parse(input.gateway) : null
  const defaults: Record<string, unknown> = {
    headerTimeout: timeouts.headerMs ?? defaultTimeouts.headerMs,
    chunkTimeout: timeouts.chunkMs ?? defaultTimeouts.chunkMs,
    ...(timeouts.requestMs !== undefined ? { timeout: timeouts.requestMs } : {}),
  }
  const blocks: Record<string, ProviderBlock> = {}
  for (const id of usedProviders(input.models)) {
    const user = Object.hasOwn(input.userProviders, id) ? input.userProviders[id] : undefined
    const block = deepMerge({ options: defaults }, user ?? {})
    blocks[id] = gateway ? throughGateway(id, block, gateway) : block
  }
  return blocks
}

/** The distinct provider ids of "provider/model" ids, in first-use order (malformed ids are skipped). */
export function usedProviders(models: readonly string[]): string[] {
  const ids = models.flatMap((model) => providerOf(model) ?? [])
  return [...new Set(ids)]
}

/** A stable anonymous id for the gateway's metadata: the first 32 hex digits of a SHA-256. */
export function anonymousUserId(userId: string): string {
  return createHash("sha256").update(`opencode-reviewer:${userId}`).digest("hex").slice(0, 32)
}

/** True for a header that must never reach the gateway from a user's block. */
export function isSensitiveHeader(name: string): boolean {
  const lower = name.trim().toLowerCase()
  return lower === "host" || /auth|token|api[-_]?key|secret|cookie|password/.test(lower)
}

function throughGateway(id: string, block: ProviderBlock, gateway: GatewaySettings): ProviderBlock {
  const options = isRecord(block.options) ? block.options : {}
  const metadata = JSON.stringify({
    client: "opencode-reviewer",
    user: gateway.userId ? anonymousUserId(gateway.userId) : "anonymous",
  })
  const headers = {
    ...stripHeaders(options.headers),
    [(gateway.header ?? "authorization").toLowerCase()]: `Bearer {env:${gateway.apiKeyEnv}}`,
    [metadataHeader]: metadata,
  }
  const result: ProviderBlock = {
    ...block,
    options: {
      ...options,
      baseURL: `${gateway.baseURL.replace(/\/+$/, "")}/${id}`,
      apiKey: `{env:${gateway.apiKeyEnv}}`,
      headers,
    },
  }
  if (isRecord(block.models)) {
    result.models = Object.fromEntries(
      Object.entries(block.models).map(([name, model]) =>
        isRecord(model) && model.headers !== undefined
          ? [name, { ...model, headers: stripHeaders(model.headers) }]
          : [name, model],
      ),
    )
  }
  return result
}

function stripHeaders(headers: unknown): Record<string, unknown> {
  if (!isRecord(headers)) return {}
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !isSensitiveHeader(name) && name.toLowerCase() !== metadataHeader),
  )
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = structuredClone(base)
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue
    const current = merged[key]
    merged[key] = isRecord(current) && isRecord(value) ? deepMerge(current, value) : structuredClone(value)
  }
  return merged
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
