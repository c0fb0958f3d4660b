import { defaults } from "@opencode-reviewer/core"
import { describe, expect, test } from "vitest"
import { defaultChains, familyOf, sameFamily } from "./chains"
import { anonymousUserId, gatewayProviders, metadataHeader } from "./providers"

const gateway = { baseURL: "https://gw.example.com/v1/acct/gw/", apiKeyEnv: "GATEWAY_KEY", userId: "alice.smith" }

describe("gatewayProviders", () => {
  test("adds a minimal timeout block for every used provider, never a key", () => {
    const blocks = gatewayProviders({
      userProviders: {},
      models: ["anthropic/claude-opus-4-7", "openai/gpt-5", "anthropic/claude-opus-4-6"],
    })
    expect(blocks).toEqual({
      anthropic: { options: { headerTimeout: 120000, chunkTimeout: 120000 } },
      openai: { options: { headerTimeout: 120000, chunkTimeout: 120000 } },
    })
  })

  test("custom timeouts, including a whole-request timeout", () => {
    const blocks = gatewayProviders({
      userProviders: {},
      models: ["openai/gpt-5"],
      timeouts: { headerMs: 30000, chunkMs: false, requestMs: 600000 },
    })
    expect(blocks.openai).toEqual({ options: { headerTimeout: 30000, chunkTimeout: false, timeout: 600000 } })
  })

  test("user values win, false included, and the user block is deep-merged", () => {
    const ollama = {
      npm: "@ai-sdk/openai-compatible",
      name: "Local Ollama",
      options: { baseURL: "http://127.0.0.1:11434/v1", headerTimeout: false, headers: { "x-trace": "1" } },
      models: { "qwen2.5-coder:7b": { limit: { context: 32768, output: 4096 } } },
    }
    const blocks = gatewayProviders({
      userProviders: { ollama, unused: { options: {} } },
      models: ["ollama/qwen2.5-coder:7b"],
    })
    expect(blocks).toEqual({
      ollama: {
        ...ollama,
        options: { ...ollama.options, headerTimeout: false, chunkTimeout: 120000 },
      },
    })
    expect(ollama.options).not.toHaveProperty("chunkTimeout")
  })

  test("no key value is ever written, with or without a gateway", () => {
    process.env.GATEWAY_KEY = "sk-gateway-secret"
    process.env.ANTHROPIC_API_KEY = "sk-ant-secret"
    try {
      for (const gw of [undefined, gateway]) {
        const text = JSON.stringify(
          gatewayProviders({ userProviders: {}, models: ["anthropic/claude-opus-4-7", "openai/gpt-5"], gateway: gw }),
        )
        expect(text).not.toContain("sk-")
      }
    } finally {
      delete process.env.GATEWAY_KEY
      delete process.env.ANTHROPIC_API_KEY
    }
  })

  test("a gateway routes every provider, strips credentials and adds auth and metadata headers", () => {
    const userProviders = {
      openai: {
        options: {
          apiKey: "{env:OPENAI_API_KEY}",
          headers: {
            Authorization: "Bearer x",
            HOST: "api.openai.com",
            "X-Api-Key": "k",
            "PRIVATE-TOKEN": "glpat",
            "x-keep": "yes",
          },
        },
      },
      corp: {
        npm: "@ai-sdk/openai-compatible",
        options: {
          baseURL: "https://llm.corp/v1",
          headers: { authorization: "Bearer y", "Proxy-Authorization": "p", Cookie: "c" },
        },
        models: { m1: { headers: { "x-api-key": "z", "x-model": "keep" } } },
      },
    }
    const blocks = gatewayProviders({
      userProviders,
      models: ["openai/gpt-5", "corp/m1", "anthropic/claude-sonnet-4-6"],
      gateway,
    })
    const metadata = JSON.stringify({ client: "opencode-reviewer", user: anonymousUserId("alice.smith") })
    expect(blocks.openai).toEqual({
      options: {
        headerTimeout: 120000,
        chunkTimeout: 120000,
        apiKey: "{env:GATEWAY_KEY}",
        baseURL: "https://gw.example.com/v1/acct/gw/openai",
        headers: { "x-keep": "yes", authorization: "Bearer {env:GATEWAY_KEY}", [metadataHeader]: metadata },
      },
    })
    expect(blocks.corp).toMatchObject({
      npm: "@ai-sdk/openai-compatible",
      models: { m1: { headers: { "x-model": "keep" } } },
    })
    expect((blocks.corp as { options: { baseURL: string } }).options.baseURL).toBe(
      "https://gw.example.com/v1/acct/gw/corp",
    )
    expect(blocks.anthropic).toMatchObject({
      options: { baseURL: "https://gw.example.com/v1/acct/gw/anthropic", apiKey: "{env:GATEWAY_KEY}" },
    })
    for (const block of Object.values(blocks)) {
      const names = JSON.stringify(block).toLowerCase()
      for (const stripped of [
        '"host"',
        '"x-api-key"',
        '"private-token"',
        '"proxy-authorization"',
        '"cookie"',
        "bearer x",
        "bearer y",
      ]) {
        expect(names).not.toContain(stripped)
      }
    }
    expect(JSON.stringify(blocks)).not.toContain("alice")
  })

  test("a custom gateway header, an anonymous metadata id without a user id", () => {
    const blocks = gatewayProviders({
      userProviders: {},
      models: ["openai/gpt-5"],
      gateway: { baseURL: "https://gw.example.com", apiKeyEnv: "GW", header: "cf-aig-authorization" },
    })
    expect((blocks.openai as { options: { headers: object } }).options.headers).toEqual({
      "cf-aig-authorization": "Bearer {env:GW}",
      [metadataHeader]: '{"client":"opencode-reviewer","user":"anonymous"}',
    })
  })

  test("the anonymous id is a stable hash", () => {
    expect(anonymousUserId("alice")).toMatch(/^[0-9a-f]{32}$/)
    expect(anonymousUserId("alice")).toBe(anonymousUserId("alice"))
    expect(anonymousUserId("alice")).not.toBe(anonymousUserId("bob"))
  })

  test("refuses a key where an env var name belongs", () => {
    expect(() =>
      gatewayProviders({
        userProviders: {},
        models: ["openai/gpt-5"],
        gateway: { baseURL: "https://gw.example.com", apiKeyEnv: "sk-123" },
      }),
    ).toThrow()
  })
})

describe("chains", () => {
  test("defaultChains are core's defaults", () => {
    expect(defaultChains).toBe(defaults.models)
    for (const chain of Object.values(defaultChains)) expect(sameFamily(chain).ok).toBe(true)
  })

  test("families", () => {
    expect(familyOf("anthropic/claude-opus-4-7")).toBe("claude-opus")
    expect(familyOf("gw/claude-opus-4-6")).toBe("claude-opus")
    expect(familyOf("anthropic/claude-3-5-haiku-20241022")).toBe("claude-haiku")
    expect(familyOf("moonshotai/kimi-k2.5")).toBe("kimi-k")
    expect(familyOf("ollama/qwen2.5-coder:7b")).toBe("qwen-coder")
  })

  test("flags a chain that mixes families", () => {
    const check = sameFamily(["anthropic/claude-opus-4-7", "anthropic/claude-sonnet-4-6"])
    expect(check.ok).toBe(false)
    expect(check.families).toEqual(["claude-opus", "claude-sonnet"])
    expect(check.warning).toContain("mixes families")
    expect(sameFamily([]).ok).toBe(true)
  })
})
