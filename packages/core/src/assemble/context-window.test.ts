import type { OpencodeConfig } from "@opencode-reviewer/opencode/config"
import { describe, expect, test } from "vitest"
import { contextWarning, contextWindow } from "./context-window"

const config = (provider: Record<string, Record<string, unknown>> = {}) =>
  ({ provider, agent: {} }) as unknown as OpencodeConfig

describe("contextWarning", () => {
  test("takes the window from the provider block before the known table", () => {
    expect(contextWindow(config({ fake: { models: { m: { limit: { context: 1000 } } } } }), "fake/m")).toBe(1000)
    expect(contextWindow(config(), "anthropic/claude-opus-4-7")).toBe(200_000)
    expect(contextWindow(config(), "nobody/knows")).toBeNull()
  })

  test("warns only past half the window, with the numbers", () => {
    const small = config({ fake: { models: { m: { limit: { context: 1000 } } } } })
    expect(contextWarning(small, "fake/m", "x".repeat(800), "y".repeat(1200))).toBeNull()
    expect(contextWarning(small, "fake/m", "x".repeat(800), "y".repeat(1300))).toBe(
      "the coordinator's prompt is about 525 tokens, 53 % of fake/m's 1,000-token context window (warning above 50 %): narrow the change or use a model with a larger window",
    )
    expect(contextWarning(config(), "nobody/knows", "x", "y".repeat(10_000_000))).toBeNull()
  })

  test("a prompt past the whole window says the review will fail, not just that it is large", () => {
    const small = config({ fake: { models: { m: { limit: { context: 1000 } } } } })
    expect(contextWarning(small, "fake/m", "x".repeat(800), "y".repeat(3200))).toBe(
      "the coordinator's prompt is about 1,000 tokens, 100 % of fake/m's 1,000-token context window (warning above 50 %): narrow the change or use a model with a larger window",
    )
    expect(contextWarning(small, "fake/m", "x".repeat(800), "y".repeat(4400))).toBe(
      "the coordinator's prompt is about 1,300 tokens, 130 % of fake/m's 1,000-token context window: it does not fit, so the review will fail; narrow the change (fewer comments, a shorter description) or use a model with a larger window",
    )
  })
})
