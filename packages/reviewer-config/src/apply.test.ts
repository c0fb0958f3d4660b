import { describe, expect, test } from "vitest"
import { applyReviewerConfig, withFailback } from "./apply"
import { parseReviewerConfig, type ReviewerConfigDocument } from "./document"

const planned = {
  review_coordinator: ["anthropic/claude-opus-4-7", "anthropic/claude-opus-4-6"],
  security: ["anthropic/claude-sonnet-4-6", "openai/gpt-5.3-codex"],
  documentation: ["moonshotai/kimi-k2.5"],
}

function document(value: unknown): ReviewerConfigDocument {
  const parsed = parseReviewerConfig(value)
  if (!parsed.ok) throw new Error(parsed.problems.join("; "))
  return parsed.document
}

describe("applyReviewerConfig", () => {
  test("an empty document changes nothing", () => {
    expect(applyReviewerConfig(document({}), planned)).toEqual({ chains: planned, changes: [], warnings: [] })
  })

  test("an assignment replaces the agent's chain; a single model means no failback", () => {
    const applied = applyReviewerConfig(
      document({
        reviewers: {
          security: { model: "openai/gpt-5.4" },
          documentation: { model: ["openai/gpt-5.4-mini", "openai/gpt-5.3-mini"] },
        },
      }),
      planned,
    )
    expect(applied.chains.security).toEqual(["openai/gpt-5.4"])
    expect(applied.chains.documentation).toEqual(["openai/gpt-5.4-mini", "openai/gpt-5.3-mini"])
    expect(applied.changes).toEqual([
      "security: anthropic/claude-sonnet-4-6, openai/gpt-5.3-codex -> openai/gpt-5.4",
      "documentation: moonshotai/kimi-k2.5 -> openai/gpt-5.4-mini, openai/gpt-5.3-mini",
    ])
  })

  test("assignments for agents this job did not plan are ignored", () => {
    const applied = applyReviewerConfig(document({ reviewers: { performance: { model: "openai/gpt-5.4" } } }), planned)
    expect(applied).toEqual({ chains: planned, changes: [], warnings: [] })
  })

  test("a failback override replaces what follows its model, in every chain", () => {
    const applied = applyReviewerConfig(
      document({
        failback: {
          "anthropic/claude-opus-4-7": ["anthropic/claude-opus-4-5"],
          "moonshotai/kimi-k2.5": ["moonshotai/kimi-k2"],
        },
      }),
      planned,
    )
    expect(applied.chains.review_coordinator).toEqual(["anthropic/claude-opus-4-7", "anthropic/claude-opus-4-5"])
    expect(applied.chains.documentation).toEqual(["moonshotai/kimi-k2.5", "moonshotai/kimi-k2"])
    expect(applied.chains.security).toEqual(planned.security)
  })

  test("failback overrides chain into each other and stop at a cycle", () => {
    expect(withFailback(["a/1", "a/9"], { "a/1": ["a/2"], "a/2": ["a/3", "a/1"], "a/3": [] })).toEqual([
      "a/1",
      "a/2",
      "a/3",
    ])
    expect(withFailback(["a/1", "a/2", "a/2"], {})).toEqual(["a/1", "a/2"])
  })

  test("the kill switch drops a disabled provider's models before the primary is chosen; others stay", () => {
    const applied = applyReviewerConfig(
      document({
        providers: { anthropic: { enabled: false }, openai: { enabled: true }, nowhere: { enabled: false } },
      }),
      planned,
    )
    expect(applied.chains.security).toEqual(["openai/gpt-5.3-codex"])
    expect(applied.chains.documentation).toEqual(["moonshotai/kimi-k2.5"])
  })

  test("a chain the switches would empty is kept as planned, with a loud warning", () => {
    const applied = applyReviewerConfig(document({ providers: { anthropic: { enabled: false } } }), planned)
    expect(applied.chains.review_coordinator).toEqual(planned.review_coordinator)
    expect(applied.warnings).toEqual([
      "review_coordinator: every model of its chain (anthropic/claude-opus-4-7, anthropic/claude-opus-4-6) is on a disabled provider (anthropic); keeping anthropic/claude-opus-4-7, anthropic/claude-opus-4-6 because an agent cannot run without a model — expect it to fail",
    ])
  })

  test("an assignment entirely on disabled providers falls back to the agent's own usable models", () => {
    const applied = applyReviewerConfig(
      document({
        reviewers: { security: { model: "anthropic/claude-opus-4-7" } },
        providers: { anthropic: { enabled: false } },
      }),
      planned,
    )
    expect(applied.chains.security).toEqual(["openai/gpt-5.3-codex"])
    expect(applied.warnings).toContain(
      "security: every model of its remote assignment (anthropic/claude-opus-4-7) is on a disabled provider (anthropic); keeping its own chain openai/gpt-5.3-codex",
    )
  })

  test("enabled switches cannot add or remove planned agents and say so", () => {
    const applied = applyReviewerConfig(
      document({
        reviewers: { security: { enabled: false }, performance: { enabled: true }, documentation: { enabled: true } },
      }),
      planned,
    )
    expect(applied.chains).toEqual(planned)
    expect(applied.warnings).toEqual([
      expect.stringMatching(/^reviewers\.security\.enabled=false is not applied/),
      expect.stringMatching(/^reviewers\.performance\.enabled=true is not applied/),
    ])
  })
})

describe("parseReviewerConfig", () => {
  test("tolerates unknown keys with a warning naming their path", () => {
    const parsed = parseReviewerConfig({
      version: 1,
      owner: "platform",
      reviewers: { security: { model: "openai/gpt-5.4", temperature: 0 } },
    })
    expect(parsed).toMatchObject({
      ok: true,
      warnings: ['unknown key "owner" is ignored', 'unknown key "reviewers.security.temperature" is ignored'],
    })
  })

  test("rejects wrong values naming the key path", () => {
    const parsed = parseReviewerConfig({
      providers: { anthropic: { enabled: "no" } },
      failback: { "openai/gpt-5.4": ["gpt-5.3"] },
    })
    expect(parsed.ok).toBe(false)
    if (parsed.ok) return
    expect(parsed.problems).toEqual([
      expect.stringMatching(/^providers\.anthropic\.enabled: /),
      expect.stringMatching(/^failback\.openai\/gpt-5\.4\.0: must be <provider>\/<model>/),
    ])
  })

  test("rejects a document of an unknown version and anything that is not an object", () => {
    expect(parseReviewerConfig({ version: 2 }).ok).toBe(false)
    expect(parseReviewerConfig([]).ok).toBe(false)
    expect(parseReviewerConfig(null).ok).toBe(false)
  })
})
