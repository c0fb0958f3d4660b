import { describe, expect, test } from "vitest"
import { ConfigInvalidError } from "../model/errors"
import { applyModelEnv, configJsonSchema, defaults, maxCostEnvName, parseConfig, parseConfigText } from "./config"

describe("parseConfig", () => {
  test("fills every default from the design when the file is empty", () => {
    const { config, warnings } = parseConfig({})
    expect(warnings).toEqual([])
    expect(config.models).toEqual(defaults.models)
    expect(config.tiers).toEqual({ trivial: { lines: 10, files: 20 }, lite: { lines: 100, files: 20 }, fullFiles: 50 })
    expect(config.failOn).toBe("significant_concerns")
    expect(config.breakGlass).toEqual({ phrase: "break glass", minAccess: "write" })
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

describe("applyModelEnv", () => {
  const caught = (run: () => unknown): ConfigInvalidError => {
    try {
      run()
    } catch (error) {
      if (error instanceof ConfigInvalidError) return error
      throw error
    }
    throw new Error("expected a ConfigInvalidError")
  }

  test("OPENCODE_REVIEWER_MAX_COST_USD sets the spend cap over the config file's, trimmed", () => {
    const { config } = parseConfig({ maxCostUsd: 5 })
    expect(maxCostEnvName).toBe("OPENCODE_REVIEWER_MAX_COST_USD")
    expect(applyModelEnv(config, { [maxCostEnvName]: " 2.5 " }).maxCostUsd).toBe(2.5)
    expect(applyModelEnv(parseConfig({}).config, { [maxCostEnvName]: "3" }).maxCostUsd).toBe(3)
    expect(applyModelEnv(config, { [maxCostEnvName]: ".75" }).maxCostUsd).toBe(0.75)
    expect(applyModelEnv(config, { [maxCostEnvName]: "10." }).maxCostUsd).toBe(10)
  })

  test("an empty or missing OPENCODE_REVIEWER_MAX_COST_USD leaves the config file's cap, or none", () => {
    const { config } = parseConfig({ maxCostUsd: 5 })
    expect(applyModelEnv(config, {}).maxCostUsd).toBe(5)
    expect(applyModelEnv(config, { [maxCostEnvName]: "" }).maxCostUsd).toBe(5)
    expect(applyModelEnv(config, { [maxCostEnvName]: "  " }).maxCostUsd).toBe(5)
    expect(applyModelEnv(parseConfig({}).config, { [maxCostEnvName]: "" }).maxCostUsd).toBeNull()
  })

  test.each(["0", "0.00", "-1", "abc", "$3", "2,50", "1e3", "0x10", "Infinity", "NaN", "3 USD", "1.2.3"])(
    "refuses OPENCODE_REVIEWER_MAX_COST_USD=%j, naming the variable and the value",
    (value) => {
      const error = caught(() => applyModelEnv(parseConfig({}).config, { [maxCostEnvName]: value }))
      expect(error.message).toBe(
        `$OPENCODE_REVIEWER_MAX_COST_USD is invalid:\n  expected a positive number of US dollars such as 2.5, got ${JSON.stringify(value)}`,
      )
      expect(error.data.file).toBe("$OPENCODE_REVIEWER_MAX_COST_USD")
    },
  )

  test("the spend cap and the model chains apply together, and neither touches the other", () => {
    const { config } = parseConfig({ maxCostUsd: 5, models: { light: ["a/light"] } })
    const applied = applyModelEnv(config, {
      [maxCostEnvName]: "1.25",
      OPENCODE_REVIEWER_MODELS_TOP: "x/top, y/top",
    })
    expect(applied.maxCostUsd).toBe(1.25)
    expect(applied.models).toEqual({ ...config.models, top: ["x/top", "y/top"] })
    expect(applyModelEnv(config, { OPENCODE_REVIEWER_MODELS_TOP: "x/top" }).maxCostUsd).toBe(5)
    expect(config.maxCostUsd).toBe(5)
    // A bad model chain still fails with the cap valid, and a bad cap with the chains valid.
    expect(
      caught(() => applyModelEnv(config, { [maxCostEnvName]: "2", OPENCODE_REVIEWER_MODELS_TOP: "top" })).message,
    ).toContain("$OPENCODE_REVIEWER_MODELS_TOP")
    expect(
      caught(() => applyModelEnv(config, { [maxCostEnvName]: "-2", OPENCODE_REVIEWER_MODELS_TOP: "x/top" })).message,
    ).toContain("$OPENCODE_REVIEWER_MAX_COST_USD")
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

test("breakGlass takes the phrase alone, as before, or an object with the least access whose request counts", () => {
  expect(parseConfig({ breakGlass: "sos" }).config.breakGlass).toEqual({ phrase: "sos", minAccess: "write" })
  expect(parseConfig({ breakGlass: { minAccess: "maintain" } }).config.breakGlass).toEqual({
    phrase: "break glass",
    minAccess: "maintain",
  })
  expect(() => parseConfig({ breakGlass: { minAccess: "read" } })).toThrow(/breakGlass/)
})

describe("the committed schema file", () => {
  test("matches the zod schema (run `bun run schema` after changing the config)", async () => {
    const { schemaFile, schemaText } = await import("./schema-file")
    expect(await Bun.file(schemaFile).text()).toBe(schemaText())
  })
})
