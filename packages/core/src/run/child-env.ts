import { providerOf } from "../model/model-id"
import { providerKeyVariables } from "./provider-keys"

/**
 * The OpenCode child gets what it needs to run and to reach its model providers, nothing else: CI
 * job tokens, GitLab tokens, cloud credentials and unrelated secrets never reach a process that
 * executes model-chosen tool calls.
 */

// Process basics, locale, proxies and CA bundles: harmless and needed to reach providers at all.
const basics = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "TZ",
  "LANG",
  "LANGUAGE",
  "TMPDIR",
  "TMP",
  "TEMP",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
]

// The environment variables OpenCode's built-in providers read on their own when the config has no
// explicit key: passed only when a planned model uses that provider. The API keys are
// providerKeyVariables (also checked before a run); these are the rest each provider reads.
const providerSettings: Record<string, string[]> = {
  anthropic: ["ANTHROPIC_BASE_URL"],
  openai: ["OPENAI_BASE_URL", "OPENAI_ORG_ID"],
  "amazon-bedrock": [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_PROFILE",
    "AWS_BEARER_TOKEN_BEDROCK",
  ],
  azure: ["AZURE_API_KEY", "AZURE_RESOURCE_NAME"],
  "google-vertex": ["GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "GOOGLE_VERTEX_LOCATION"],
}

function providerVariables(provider: string): string[] {
  return [...(providerKeyVariables[provider] ?? []), ...(providerSettings[provider] ?? [])]
}

/** What decides which variables pass. */
export interface ChildEnvInput {
  /** The parent's environment (the CLI passes its own). */
  parent: Record<string, string | undefined>
  /** The assembled opencode.json: `{env:NAME}` references and provider ids are read from it. */
  config: unknown
  /** Every model the agents may use ("provider/model"), failback chains included. */
  models: readonly string[]
  /** Variables plugins set for the child, and our own OPENCODE_* settings: always passed. */
  extra: Record<string, string>
}

/** Builds the child's environment from an allow-list; returns it with the names that were dropped. */
export function childEnv(input: ChildEnvInput): { env: Record<string, string>; dropped: string[] } {
  const allowed = new Set(basics)
  for (const name of Object.keys(input.parent)) if (name.startsWith("LC_")) allowed.add(name)
  for (const name of referencedVariables(input.config)) allowed.add(name)
  const providers = new Set(input.models.flatMap((model) => providerOf(model) ?? []))
  for (const provider of providers) for (const name of providerVariables(provider)) allowed.add(name)

  const env: Record<string, string> = {}
  const dropped: string[] = []
  for (const [name, value] of Object.entries(input.parent)) {
    if (value === undefined) continue
    if (allowed.has(name)) env[name] = value
    else dropped.push(name)
  }
  return { env: { ...env, ...input.extra }, dropped: dropped.sort() }
}

/** Every NAME in an `{env:NAME}` reference anywhere in the config's strings. */
export function referencedVariables(config: unknown): string[] {
  const names = new Set<string>()
  for (const match of JSON.stringify(config ?? null).matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)) names.add(match[1]!)
  return [...names].sort()
}
