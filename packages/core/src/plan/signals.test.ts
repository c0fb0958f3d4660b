import { describe, expect, test } from "vitest"
import { type DiffFile, parseDiff } from "./diff"
import { isAgentsFile, mechanicsKindOf, readSignals } from "./signals"

// Which files make the agents-md reviewer run (readSignals): AGENTS.md files and project mechanics.

function added(path: string, lines: string[]): DiffFile {
  const text = `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`
  return parseDiff(text).files[0]!
}
function edited(path: string, removed: string[], addedLines: string[]): DiffFile {
  const body = [...removed.map((line) => `-${line}`), ...addedLines.map((line) => `+${line}`)].join("\n")
  return parseDiff(
    `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -1,${removed.length} +1,${addedLines.length} @@\n${body}\n`,
  ).files[0]!
}

describe("path classification", () => {
  test("ordinary code and docs are not mechanics; AGENTS.md files are recognised at any depth", () => {
    expect([mechanicsKindOf("src/app.ts"), mechanicsKindOf("README.md")]).toEqual([null, null])
    expect(mechanicsKindOf("src/package.json.ts")).toBeNull()
    expect(["AGENTS.md", "web/agents.md", "CLAUDE.md", "a/b/Claude.md"].every(isAgentsFile)).toBe(true)
    expect(isAgentsFile("docs/AGENTS.md.template")).toBe(false)
  })
})

describe("readSignals.agentsMd", () => {
  test("still names every AGENTS.md and mechanics file, noise included, and nothing else", () => {
    const files = [
      added("bun.lock", ["{}"]),
      edited("AGENTS.md", ["a"], ["b"]),
      edited("Dockerfile", ["a"], ["b"]),
      edited("src/app.ts", ["a"], ["b"]),
    ]
    const signals = readSignals(files.map((file) => ({ file, noise: file.path === "bun.lock" ? "lockfile" : null })))
    expect(signals.agentsMd).toEqual(["bun.lock", "AGENTS.md", "Dockerfile"])
  })
})
