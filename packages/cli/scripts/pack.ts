// Builds the publishable npm package: one self-contained Bun bundle per entry point (the CLI, the
// MCP comment server, the OpenCode runtime plugin, the /fullreview plugin), the prompts and the demo
// change beside them, the eval corpora, and a package.json whose only dependency is opencode-ai (it brings the
// opencode binary). Writes dist/package/ and dist/opencode-reviewer-<version>.tgz.
//
//   bun run pack            build and pack
//   bun run pack --no-tgz   build dist/package/ only
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const cliDir = join(root, "packages/cli")
const out = join(root, "dist/package")
// Code and assets live in lib/: OpenCode loads a package's `main` in place of any plugin file given
// by path in the same directory as that package.json, so the runtime plugin must not sit beside it.
const lib = join(out, "lib")
const manifest = JSON.parse(await readFile(join(cliDir, "package.json"), "utf8")) as {
  name: string
  version: string
  description: string
  dependencies: Record<string, string>
}

const entries: { source: string; name: string; shebang?: boolean }[] = [
  { source: join(cliDir, "bin/opencode-reviewer.ts"), name: "cli.js", shebang: true },
  { source: join(cliDir, "src/comment-server.ts"), name: "comment-server.js" },
  { source: join(root, "packages/runtime/src/plugin.ts"), name: "runtime-plugin.js" },
  { source: join(root, "packages/local/src/fullreview-plugin.ts"), name: "fullreview-plugin.js" },
]

await rm(out, { recursive: true, force: true })
await mkdir(lib, { recursive: true })
for (const entry of entries) {
  const result = await Bun.build({
    entrypoints: [entry.source],
    target: "bun",
    format: "esm",
    // opencode-ai is resolved at run time to find the platform binary; it is never bundled.
    external: ["opencode-ai"],
    minify: { whitespace: false, syntax: true, identifiers: false },
    sourcemap: "none",
  })
  if (!result.success) {
    for (const log of result.logs) console.error(log)
    throw new Error(`bundling ${entry.source} failed`)
  }
  const [output, ...extra] = result.outputs
  if (!output || extra.length > 0)
    throw new Error(`${entry.source} produced ${result.outputs.length} files; expected one`)
  const code = (await output.text()).replace(/^#!.*\n/, "")
  await writeFile(join(lib, entry.name), entry.shebang ? `#!/usr/bin/env bun\n${code}` : code, {
    mode: entry.shebang ? 0o755 : 0o644,
  })
}
await cp(join(root, "prompts"), join(lib, "prompts"), { recursive: true })
await cp(join(cliDir, "demo"), join(lib, "demo"), { recursive: true })
// The eval corpora (the demo's and the Martian benchmark's, with its licence): the bundled eval code
// finds them at ../corpora beside lib/ (packages/eval/src/load.ts, bundledCorpusDirectory).
await cp(join(root, "packages/eval/corpora"), join(out, "corpora"), { recursive: true })
await cp(join(root, "LICENSE"), join(out, "LICENSE"))
await cp(join(cliDir, "README.md"), join(out, "README.md"))

const published = {
  name: manifest.name,
  version: manifest.version,
  description: manifest.description,
  license: "MIT",
  type: "module",
  keywords: ["code-review", "opencode", "gitlab", "github", "merge-request", "pull-request", "ai"],
  bin: { "opencode-reviewer": "./lib/cli.js" },
  // `"plugin": ["opencode-reviewer"]` in opencode.json loads `main`: the /fullreview plugin.
  main: "./lib/fullreview-plugin.js",
  exports: { ".": "./lib/fullreview-plugin.js", "./package.json": "./package.json" },
  files: ["lib/", "corpora/", "LICENSE", "README.md"],
  engines: { bun: ">=1.3.0" },
  dependencies: { "opencode-ai": manifest.dependencies["opencode-ai"] },
}
await writeFile(join(out, "package.json"), JSON.stringify(published, null, 2) + "\n")

if (!process.argv.includes("--no-tgz")) {
  const packed = Bun.spawnSync(["npm", "pack", "--json", "--pack-destination", join(root, "dist")], {
    cwd: out,
    stderr: "pipe",
  })
  if (packed.exitCode !== 0) throw new Error(`npm pack failed: ${packed.stderr.toString()}`)
  const [info] = JSON.parse(packed.stdout.toString()) as { filename: string; size: number; unpackedSize: number }[]
  console.log(
    `dist/${info!.filename} (${(info!.size / 1e6).toFixed(2)} MB packed, ${(info!.unpackedSize / 1e6).toFixed(2)} MB unpacked)`,
  )
} else {
  console.log(`dist/package/ built`)
}
