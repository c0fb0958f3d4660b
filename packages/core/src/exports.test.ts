import { readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The exports map names the modules other packages may import by path. The runtime plugin and the
// comment server are bundled into small scripts, so those modules must stay pure: no file system,
// no processes, only the libraries below (hashing included) and other pure core modules.
const root = dirname(fileURLToPath(new URL("../package.json", import.meta.url)))
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string> }
const libraries = new Set(["zod", "fast-xml-parser", "diff", "node:crypto"])

function importsOf(file: string): string[] {
  const source = readFileSync(file, "utf8")
  // Type-only imports are erased by the bundler, so they do not count.
  return [...source.matchAll(/^(?:import|export)\s(?!type\s)[^"]*?from\s+"([^"]+)"/gm)].map((match) => match[1] ?? "")
}

function closure(entry: string): { files: Set<string>; bare: Map<string, string> } {
  const files = new Set<string>()
  const bare = new Map<string, string>()
  const pending = [entry]
  while (pending.length > 0) {
    const file = pending.pop() as string
    if (files.has(file)) continue
    files.add(file)
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith(".")) pending.push(join(dirname(file), `${specifier}.ts`))
      else bare.set(specifier, relative(root, file))
    }
  }
  return { files, bare }
}

describe("core's exports map", () => {
  const subpaths = Object.entries(manifest.exports).filter(([key]) => key !== ".")

  it("lists each module by name, never a wildcard", () => {
    expect(subpaths.length).toBeGreaterThan(0)
    for (const [key, target] of subpaths) {
      expect(key).not.toContain("*")
      expect(target).toBe(`./src/${key.slice(2)}.ts`)
    }
  })

  it.each(subpaths)("%s imports only pure modules", (_key, target) => {
    const { bare } = closure(join(root, target))
    const impure = [...bare].filter(([specifier]) => !libraries.has(specifier)).map(([s, from]) => `${s} (in ${from})`)
    expect(impure).toEqual([])
  })
})
