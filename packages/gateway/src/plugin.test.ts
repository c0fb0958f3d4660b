import {
  assembleConfig,
  type Contributions,
  type Logger,
  OpencodeConfig,
  type PlanView,
  runLifecycle,
  silentLogger,
} from "@opencode-reviewer/core"
import { describe, expect, test } from "vitest"
import { gatewayPlugin } from "./plugin"

const userProviders = {
  ollama: {
    npm: "@ai-sdk/openai-compatible",
    options: { baseURL: "http://127.0.0.1:11434/v1", headers: { Authorization: "Bearer local" } },
    models: { "qwen2.5-coder": {} },
  },
  spare: { options: { baseURL: "http://spare/v1" } },
}
const chains = {
  review_coordinator: ["anthropic/claude-opus-4-7", "anthropic/claude-opus-4-6"],
  security: ["ollama/qwen2.5-coder", "openai/gpt-5"],
}

// The plan view carries the planned chains: the plugin reads every model from it.
const plan: PlanView = {
  repoDir: "/repo",
  workDir: "/work",
  tier: "full",
  files: [],
  diff: [],
  agents: [
    { name: "review_coordinator", role: "coordinator", models: chains.review_coordinator },
    { name: "security", role: "reviewer", models: chains.security },
  ],
}

// What core does: the coordinator and a reviewer, and the user's providers seeded as plugin "core".
function seed(store: Contributions) {
  store.agents.set("review_coordinator", {
    description: "c",
    prompt: "C",
    models: chains.review_coordinator,
    plugin: "core",
    role: "coordinator",
  })
  store.agents.set("security", {
    description: "s",
    prompt: "S",
    models: chains.security,
    plugin: "core",
    role: "reviewer",
  })
  for (const [id, block] of Object.entries(userProviders)) store.providers.set(id, { plugin: "core", block })
}

function run(gateway: { baseURL: string; apiKeyEnv: string; userId: string } | null, log: Logger = silentLogger) {
  return runLifecycle({
    plugins: [
      gatewayPlugin({
        providers: userProviders,
        gateway,
      }),
    ],
    plan,
    log,
    seed,
    assemble: (store) => assembleConfig(store, { workDir: "/work", sharedReviewerPrompt: "SHARED" }),
  })
}

describe("gatewayPlugin", () => {
  test("the assembled opencode.json carries the blocks and validates", async () => {
    const warnings: string[] = []
    const log: Logger = {
      ...silentLogger,
      warn: (_data, message) => void warnings.push(String(message)),
      child: () => log,
    }
    const { config } = await run(null, log)
    expect(OpencodeConfig.safeParse(config).success).toBe(true)
    expect(config.provider.anthropic).toEqual({ options: { headerTimeout: 120000, chunkTimeout: 120000 } })
    expect(config.provider.openai).toEqual({ options: { headerTimeout: 120000, chunkTimeout: 120000 } })
    expect(config.provider.ollama).toEqual({
      ...userProviders.ollama,
      options: { ...userProviders.ollama.options, headerTimeout: 120000, chunkTimeout: 120000 },
    })
    // A declared but unused provider stays as core seeded it.
    expect(config.provider.spare).toEqual(userProviders.spare)
    expect(warnings).toEqual([expect.stringContaining("mixes families")])
  })

  test("with a gateway every used provider goes through it", async () => {
    const { config } = await run({ baseURL: "https://gw.example.com/ai", apiKeyEnv: "GATEWAY_KEY", userId: "alice" })
    expect(OpencodeConfig.safeParse(config).success).toBe(true)
    for (const id of ["anthropic", "openai", "ollama"]) {
      expect(config.provider[id]).toMatchObject({
        options: { baseURL: `https://gw.example.com/ai/${id}`, apiKey: "{env:GATEWAY_KEY}" },
      })
    }
    const text = JSON.stringify(config.provider)
    expect(text).not.toContain("Bearer local")
    expect(text).not.toContain("alice")
    expect(config.provider.ollama).toMatchObject({ npm: "@ai-sdk/openai-compatible" })
  })
})
