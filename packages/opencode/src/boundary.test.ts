import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The adapter's rules: the exports map names every module, nothing of ours is imported (core
// imports the adapter), only plugin.ts imports OpenCode's plugin package, and the pure modules
// import nothing but zod and each other.
const root = dirname(fileURLToPath(new URL("../package.json", import.meta.url)))
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string> }
const modules = readdirSync(join(root, "src"))
  .filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"))
  .map((name) => name.slice(0, -3))
const pure = ["config", "errors", "events", "model-id", "session"]

function importsOf(module: string, { types }: { types: boolean }): string[] {
  const source = readFileSync(join(root, "src", `${module}.ts`), "utf8")
  const pattern = types
    ? /^(?:import|export)\s[^"]*?from\s+"([^"]+)"/gm
    : /^(?:import|export)\s(?!type\s)[^"]*?from\s+"([^"]+)"/gm
  return [...source.matchAll(pattern)].map((match) => match[1] ?? "")
}

describe("the opencode adapter", () => {
  it("lists every module in its exports map", () => {
    const listed = Object.entries(manifest.exports).filter(([key]) => key !== ".")
    for (const [key, target] of listed) expect(target).toBe(`./src/${key.slice(2)}.ts`)
    expect(listed.map(([key]) => key.slice(2)).sort()).toEqual(modules.filter((name) => name !== "index").sort())
  })

  it.each(modules)("%s imports nothing of ours", (module) => {
    expect(
      importsOf(module, { types: true }).filter((specifier) => specifier.startsWith("@opencode-reviewer/")),
    ).toEqual([])
  })

  it("imports OpenCode's plugin package in plugin.ts only", () => {
    const importers = modules.filter((module) =>
      importsOf(module, { types: true }).some((specifier) => specifier.startsWith("@opencode-ai/")),
    )
    expect(importers).toEqual(["plugin"])
  })

  it.each(pure)("%s is pure: zod and other pure modules only", (module) => {
    const allowed = new Set(["zod", ...pure.map((name) => `./${name}`)])
    expect(importsOf(module, { types: false }).filter((specifier) => !allowed.has(specifier))).toEqual([])
  })
})
