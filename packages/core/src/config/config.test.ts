import { describe, expect, test } from "vitest"
import { ConfigInvalidError } from "../model/errors"
import { configJsonSchema, defaults, parseConfig, parseConfigText } from "./config"

describe("parseConfig", () => {
  test("fills every default from the design when the file is empty", () => {
    const { config, warnings } = parseConfig({})
    expect(warnings).toEqual([])
    expect(config.models).toEqual(defaults.models)
    expect(config.tiers).toEqual({ trivial: { lines: 10, files: 20 }, lite: { lines: 100, files: 20 }, fullFiles: 50 })
    expect(config.failOn).toBe("significant_concerns")
    expect(config.breakGlass).toBe("break glass")
    expect(config.securityPaths).toContain("**/auth/**")
  })

  test("merges partial tier limits with the defaults", () => {
    const { config } = parseConfig({ tiers: { lite: { lines: 300 } } })
    expect(config.tiers.lite).toEqual({ lines: 300, files: 20 })
    expect(config.tiers.trivial).toEqual({ lines: 10, files: 20 })
  })

  test("turns a single reviewer model into a one-model chain", () => {
    const { config } = parseConfig({ reviewers: { performance: { model: "openai/gpt-5.3-codex", enabled: false } } })
    expect(config.reviewers.performance).toEqual({
      enabled: false,
      model: ["openai/gpt-5.3-codex"],
      timeoutMinutes: null,
    })
    expect(config.reviewers.security.model).toBeNull()
  })

  test("warns about unknown keys at any depth and keeps the rest", () => {
    const { config, warnings } = parseConfig({
      colour: "blue",
      tiers: { fullFiles: 70, huge: 1 },
      reviewers: { typo: {} },
    })
    expect(warnings).toEqual([
      'unknown key "colour" is ignored',
      'unknown key "tiers.huge" is ignored',
      'unknown key "reviewers.typo" is ignored',
    ])
    expect(config.tiers.fullFiles).toBe(70)
  })

  test("passes provider blocks through without warning about their keys", () => {
    const provider = {
      local: { npm: "@ai-sdk/openai-compatible", options: { baseURL: "http://127.0.0.1:11434/v1" }, models: { m: {} } },
    }
    const { config, warnings } = parseConfig({ provider })
    expect(warnings).toEqual([])
    expect(config.provider).toEqual(provider)
  })

  test("fails on wrong values with the key path of each", () => {
    const bad = {
      tiers: { lite: { lines: -1 } },
      models: { top: ["no-slash"] },
      failOn: "meh",
      reviewers: { security: { timeoutMinutes: "5" } },
    }
    const error = (() => {
      try {
        parseConfig(bad, "opencode-reviewer.json")
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(ConfigInvalidError)
    const issues = (error as ConfigInvalidError).data.issues.join("\n")
    expect(issues).toContain("tiers.lite.lines")
    expect(issues).toContain("models.top.0")
    expect(issues).toContain("failOn")
    expect(issues).toContain("reviewers.security.timeoutMinutes")
    expect((error as Error).message).toContain("opencode-reviewer.json is invalid")
  })

  test("reports broken JSON with the file name", () => {
    expect(() => parseConfigText("{ nope", "cfg.json")).toThrow(/cfg.json is invalid:\n\s+not valid JSON/)
  })
})

describe("configJsonSchema", () => {
  test("describes every top-level key for editors", () => {
    const schema = configJsonSchema() as { properties: Record<string, { description?: string }> }
    const keys = Object.keys(schema.properties)
    expect(keys).toEqual(
      expect.arrayContaining([
        "provider",
        "models",
        "reviewers",
        "tiers",
        "securityPaths",
        "noise",
        "failOn",
        "breakGlass",
      ]),
    )
    for (const key of keys) expect(schema.properties[key]!.description, key).toBeTruthy()
  })
})

describe("the committed schema file", () => {
  test("matches the zod schema (run `bun run schema` after changing the config)", async () => {
    const { schemaFile, schemaText } = await import("./schema-file")
    expect(await Bun.file(schemaFile).text()).toBe(schemaText())
  })
})
