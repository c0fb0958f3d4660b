import { describe, expect, it } from "vitest"
import { type CacheKeyInput, cacheKey, canonicalJson, hashCase, hashText } from "./cache-key"
import type { CorpusCase } from "./corpus"

const input: CacheKeyInput = {
  caseId: "grafana-79265",
  caseHash: "a".repeat(64),
  modelChains: { security: ["anthropic/claude-opus-4-5", "openai/gpt-5.2"], coordinator: ["openai/gpt-5.2"] },
  promptHash: "b".repeat(64),
  judgeModel: "anthropic/claude-opus-4-5",
}

const testCase: CorpusCase = {
  id: "acme-1",
  repository: "acme/api",
  diff: { kind: "file", path: "diffs/acme-1.diff" },
  golden: [{ text: "SQL injection", severity: "critical" }],
}

describe("cacheKey", () => {
  it("is 64 hex digits and the same for the same inputs", () => {
    expect(cacheKey(input)).toMatch(/^[0-9a-f]{64}$/)
    expect(cacheKey({ ...input, modelChains: { ...input.modelChains } })).toBe(cacheKey(input))
  })

  it("does not depend on the order agents are listed in", () => {
    const reordered = { coordinator: ["openai/gpt-5.2"], security: ["anthropic/claude-opus-4-5", "openai/gpt-5.2"] }
    expect(cacheKey({ ...input, modelChains: reordered })).toBe(cacheKey(input))
  })

  it("changes with every input, including the order of a model chain", () => {
    const keys = new Set([
      cacheKey(input),
      cacheKey({ ...input, caseId: "grafana-79266" }),
      cacheKey({ ...input, caseHash: "c".repeat(64) }),
      cacheKey({ ...input, promptHash: "c".repeat(64) }),
      cacheKey({ ...input, judgeModel: "openai/gpt-5.2" }),
      cacheKey({
        ...input,
        modelChains: { ...input.modelChains, security: ["openai/gpt-5.2", "anthropic/claude-opus-4-5"] },
      }),
      cacheKey({ ...input, modelChains: { coordinator: ["openai/gpt-5.2"] } }),
    ])
    expect(keys.size).toBe(7)
  })

  it("keeps field boundaries: moving text between fields changes the key", () => {
    expect(cacheKey({ ...input, caseId: "ab", caseHash: "c" })).not.toBe(
      cacheKey({ ...input, caseId: "a", caseHash: "bc" }),
    )
  })
})

describe("hashCase", () => {
  it("ignores key order and undefined members, and changes with the content or the diff", () => {
    const shuffled = {
      golden: testCase.golden,
      diff: testCase.diff,
      repository: "acme/api",
      id: "acme-1",
      title: undefined,
    }
    expect(hashCase(shuffled)).toBe(hashCase(testCase))
    expect(hashCase({ ...testCase, golden: [{ text: "SQL injection!", severity: "critical" }] })).not.toBe(
      hashCase(testCase),
    )
    expect(hashCase(testCase, "diff --git a/x b/x")).not.toBe(hashCase(testCase))
    expect(hashCase(testCase, "diff --git a/x b/x")).toBe(hashCase(testCase, "diff --git a/x b/x"))
  })
})

describe("canonicalJson", () => {
  it("sorts keys at every level and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}')
    expect(hashText("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})
