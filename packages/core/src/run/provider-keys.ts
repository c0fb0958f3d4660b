import { ReviewError } from "../model/errors"
import { providerOf } from "../model/model-id"

/**
 * The environment variables OpenCode's built-in providers take their API key from when the config
 * gives none. Providers that authenticate otherwise (cloud credentials, profiles) are not listed:
 * they cannot be checked from here, and are left to fail with their own message.
 */
export const providerKeyVariables: Readonly<Record<string, readonly string[]>> = {
  anthropic: ["ANTHROPIC_API_KEY"],
  openai: ["OPENAI_API_KEY"],
  moonshotai: ["MOONSHOT_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  groq: ["GROQ_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  xai: ["XAI_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  togetherai: ["TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"],
}

/** A provider a planned agent needs whose key is certainly not there, and what would supply it. */
export interface MissingKey {
  provider: string
  /** The agents whose primary model is on it. */
  agents: string[]
  /** Set one of these (empty when the config names a variable: then `reference` says which). */
  variables: string[]
  /** The config's `{env:NAME}` reference that is unset, when that is the cause. */
  reference: string | null
}

/** What `missingProviderKeys` looks at; nothing here is read from the process. */
export interface KeyCheckInput {
  /** The assembled opencode.json (its `provider` blocks, gateway routing included). */
  config: { provider?: Record<string, { options?: Record<string, unknown> } | undefined> }
  /** Each agent's model chain, primary first. */
  agents: readonly { name: string; models: readonly string[] }[]
  env: Record<string, string | undefined>
  /** Providers with stored credentials (OpenCode's auth.json lent by /fullreview). */
  authenticated?: readonly string[]
}

/**
 * The providers of the agents' primary models that have no key to use: the config's `apiKey`
 * names an unset `{env:NAME}`, or there is no `apiKey` and none of the provider's usual variables
 * is set. Checked before OpenCode starts, so a missing key costs a second, not a failed review.
 * Failback models are not checked: their absence only shortens a chain.
 */
export function missingProviderKeys(input: KeyCheckInput): MissingKey[] {
  const missing = new Map<string, MissingKey>()
  const set = (name: string) => (input.env[name] ?? "") !== ""
  for (const agent of input.agents) {
    const primary = agent.models[0]
    const provider = primary ? providerOf(primary) : null
    if (!provider) continue
    if (input.authenticated?.includes(provider)) continue
    const apiKey = input.config.provider?.[provider]?.options?.apiKey
    let problem: Omit<MissingKey, "agents"> | null = null
    if (typeof apiKey === "string") {
      const unset = [...apiKey.matchAll(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)]
        .map((match) => match[1]!)
        .find((name) => !set(name))
      if (unset) problem = { provider, variables: [unset], reference: `{env:${unset}}` }
    } else {
      const variables = providerKeyVariables[provider]
      if (variables && !variables.some(set)) problem = { provider, variables: [...variables], reference: null }
    }
    if (!problem) continue
    const entry = missing.get(provider) ?? { ...problem, agents: [] }
    entry.agents.push(agent.name)
    missing.set(provider, entry)
  }
  return [...missing.values()]
}

/** The review cannot start: a provider a planned agent needs has no API key. */
export class ProviderKeyMissingError extends ReviewError<{ missing: MissingKey[]; hint: string }> {
  constructor(missing: MissingKey[]) {
    const what = missing.map((entry) =>
      entry.reference
        ? `provider ${entry.provider} (for ${entry.agents.join(", ")}): the config's apiKey is ${entry.reference}, and ${entry.variables[0]} is not set`
        : `provider ${entry.provider} (for ${entry.agents.join(", ")}): no API key, ${entry.variables.join(" or ")} is not set`,
    )
    const hint = missing
      .map(
        (entry) =>
          `set ${entry.variables.join(" or ")}${entry.reference ? "" : ` (or provider.${entry.provider}.options.apiKey in opencode-reviewer.json)`}`,
      )
      .join("; ")
    super(
      "ProviderKeyMissingError",
      `an authentication problem stops the review before it starts: ${what.join("; ")}`,
      {
        missing,
        hint: `${hint}; in CI, store the key as a masked variable of the project or group`,
      },
    )
  }
}
