import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Core is laid out by stage, in the order a review flows (AGENTS.md, "Layout"). A module may
// import its own stage and earlier ones, never a later one: the folder list is the data flow.
const stages = [
  "model",
  "config",
  "plan",
  "plugin",
  "prompt",
  "protocol",
  "assemble",
  "run",
  "judge",
  "report",
  "review",
] as const
const src = dirname(fileURLToPath(import.meta.url))

function modules(): string[] {
  return stages.flatMap((stage) =>
    readdirSync(join(src, stage))
      .filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"))
      .map((name) => `${stage}/${name}`),
  )
}

describe("core's layout", () => {
  it("has a folder for each stage and no module outside them but the index", () => {
    const entries = readdirSync(src, { withFileTypes: true })
    expect(
      entries
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort(),
    ).toEqual([...stages].sort())
    const loose = entries.filter((entry) => entry.isFile() && !entry.name.endsWith(".test.ts")).map((e) => e.name)
    expect(loose).toEqual(["index.ts"])
  })

  it("imports only from the same or an earlier stage", () => {
    const backwards: string[] = []
    for (const file of modules()) {
      const stage = stages.indexOf(file.split("/")[0] as (typeof stages)[number])
      const source = readFileSync(join(src, file), "utf8")
      for (const [, specifier] of source.matchAll(/from\s+"(\.[^"]+)"/g)) {
        const target = relative(src, join(src, dirname(file), specifier ?? "")).split("/")[0] ?? ""
        const targetStage = stages.indexOf(target as (typeof stages)[number])
        if (targetStage > stage) backwards.push(`${file} imports ${specifier} (${target} comes later)`)
      }
    }
    expect(backwards).toEqual([])
  })
})
