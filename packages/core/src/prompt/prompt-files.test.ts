import { describe, expect, test } from "vitest"
import { reviewers } from "../plan/agents"
import { buildPrompts } from "./prompt"
import { loadPrompts } from "./prompt-files"

describe("the prompt files", () => {
  test("exist for the coordinator, the shared rules and every reviewer", async () => {
    const prompts = await loadPrompts()
    expect(Object.keys(prompts.reviewers).sort()).toEqual(reviewers.map((spec) => spec.name).sort())
    for (const [name, text] of Object.entries(prompts.reviewers)) {
      expect(text.length, name).toBeGreaterThan(500)
      expect(text, name).toMatch(/do not flag|don't flag|not flag|skip/i)
    }
    expect(prompts.shared).toContain("<findings>")
    // The merge request context travels in the reviewer's first message (packages/runtime instructions.ts),
    // and the tools named are the ones a reviewer really has (read, glob, grep: no list tool in 1.18.33).
    expect(prompts.shared).toContain("Your first message gives the repository checkout")
    expect(prompts.shared).toContain("Your tools are `read`, `glob` and `grep`:")
  })

  test("the coordinator prompt names only tags its input really has", async () => {
    const { coordinator } = await loadPrompts()
    const built = buildPrompts({
      repoDir: "/r",
      today: "2026-12-05",
      workDir: "/w",
      contextFile: "/w/shared-mr-context.txt",
      tier: "full",
      reasons: ["r"],
      mergeRequest: {
        title: "t",
        description: "d",
        author: "a",
        sourceBranch: "s",
        targetBranch: "m",
        baseSha: "b",
        headSha: "h",
        url: null,
      },
      comments: [{ author: "a", createdAt: null, body: "c" }],
      files: [
        {
          path: "a.ts",
          oldPath: "a.ts",
          status: "modified",
          binary: false,
          added: 1,
          removed: 0,
          securitySensitive: false,
          patchFile: "diff/a.ts.patch",
        },
      ],
      filtered: [{ path: "bun.lock", reason: "lockfile" }],
      reviewers: [{ name: "security", reason: "full tier" }],
      previousReview: { summary: "s", threads: [{ id: "1", file: "a.ts", line: 1, resolved: false, notes: [] }] },
      customInstructions: "be brief",
    }).coordinator
    const output = new Set(["review", "summary", "findings", "finding", "answer", "title", "body"])
    const named = [...coordinator.matchAll(/`<([a-z_]+)>`/g)]
      .map((match) => match[1]!)
      .filter((tag) => !output.has(tag))
    expect(named.length).toBeGreaterThan(5)
    for (const tag of named) expect(built, tag).toContain(`<${tag}`)
  })
})
