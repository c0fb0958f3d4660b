import { readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The exports map names the modules other packages may import by path. The runtime plugin and the
// comment server are bundled into small scripts, so those modules must stay pure: no file system,
// no processes, only the libraries below (hashing included), other pure core modules and the pure
// modules of the OpenCode adapter (walked the same way).
const root = dirname(fileURLToPath(new URL("../package.json", import.meta.url)))
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string> }
const libraries = new Set(["zod", "fast-xml-parser", "diff", "node:crypto"])
const adapterRoot = join(root, "..", "opencode")
const adapterManifest = JSON.parse(readFileSync(join(adapterRoot, "package.json"), "utf8")) as {
  name: string
  exports: Record<string, string>
}
const pureAdapterModules = new Set(["config", "errors", "events", "model-id", "session"])

// The file of an adapter module core may import (`@opencode-reviewer/opencode/<pure module>`), else null.
function pureAdapterFile(specifier: string): string | null {
  const prefix = `${adapterManifest.name}/`
  if (!specifier.startsWith(prefix) || !pureAdapterModules.has(specifier.slice(prefix.length))) return null
  const target = adapterManifest.exports[`./${specifier.slice(prefix.length)}`]
  return target ? join(adapterRoot, target) : null
}

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
      const adapterFile = pureAdapterFile(specifier)
      if (specifier.startsWith(".")) pending.push(join(dirname(file), `${specifier}.ts`))
      else if (adapterFile) pending.push(adapterFile)
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

  it("walks into the adapter's pure modules, which exist", () => {
    for (const name of pureAdapterModules) expect(pureAdapterFile(`${adapterManifest.name}/${name}`)).not.toBeNull()
    const { files } = closure(join(root, "src/run/provider-errors.ts"))
    expect([...files].map((file) => relative(root, file))).toContain("../opencode/src/errors.ts")
  })

  it.each(subpaths)("%s imports only pure modules", (_key, target) => {
    const { bare } = closure(join(root, target))
    const impure = [...bare].filter(([specifier]) => !libraries.has(specifier)).map(([s, from]) => `${s} (in ${from})`)
    expect(impure).toEqual([])
  })
})
