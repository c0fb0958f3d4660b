import { describe, expect, test } from "vitest"
import { missingProviderKeys, ProviderKeyMissingError } from "./provider-keys"

const agents = [
  { name: "review_coordinator", models: ["anthropic/claude-opus-4-7", "openai/gpt-5.4"] },
  { name: "security", models: ["anthropic/claude-sonnet-4-6"] },
  { name: "documentation", models: ["moonshotai/kimi-k2.5"] },
]

describe("missingProviderKeys", () => {
  test("a built-in provider with none of its key variables set is missing, with every agent that needs it", () => {
    const missing = missingProviderKeys({ config: {}, agents, env: { MOONSHOT_API_KEY: "k" } })
    expect(missing).toEqual([
      {
        provider: "anthropic",
        agents: ["review_coordinator", "security"],
        variables: ["ANTHROPIC_API_KEY"],
        reference: null,
      },
    ])
  })

  test("an empty variable counts as unset; failback models are not checked", () => {
    expect(
      missingProviderKeys({ config: {}, agents, env: { ANTHROPIC_API_KEY: "a", MOONSHOT_API_KEY: "" } }).map(
        (entry) => entry.provider,
      ),
    ).toEqual(["moonshotai"])
  })

  test("the config's {env:NAME} reference decides, gateway routing included", () => {
    const config = {
      provider: {
        anthropic: { options: { apiKey: "{env:GATEWAY_KEY}" } },
        moonshotai: { options: { apiKey: "literal" } },
      },
    }
    expect(missingProviderKeys({ config, agents, env: { ANTHROPIC_API_KEY: "not used" } })).toEqual([
      {
        provider: "anthropic",
        agents: ["review_coordinator", "security"],
        variables: ["GATEWAY_KEY"],
        reference: "{env:GATEWAY_KEY}",
      },
    ])
    expect(missingProviderKeys({ config, agents, env: { GATEWAY_KEY: "g" } })).toEqual([])
  })

  test("unknown providers without a key, and providers with stored credentials, are left alone", () => {
    const custom = [
      { name: "security", models: ["my-proxy/model"] },
      { name: "review_coordinator", models: ["anthropic/x"] },
    ]
    expect(missingProviderKeys({ config: {}, agents: custom, env: {}, authenticated: ["anthropic"] })).toEqual([])
  })

  test("the error names the provider, says it is an authentication problem, and what to set", () => {
    const error = new ProviderKeyMissingError(
      missingProviderKeys({ config: {}, agents, env: { MOONSHOT_API_KEY: "k" } }),
    )
    expect(error.message).toBe(
      "an authentication problem stops the review before it starts: provider anthropic (for review_coordinator, security): no API key, ANTHROPIC_API_KEY is not set",
    )
    expect(error.data.hint).toMatch(
      /^set ANTHROPIC_API_KEY \(or provider\.anthropic\.options\.apiKey in opencode-reviewer\.json\)/,
    )
  })
})
