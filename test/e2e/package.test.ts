import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ReviewRecord } from "@opencode-reviewer/core"
import {
  createOpencodeSandbox,
  gitEnv,
  type OpencodeSandbox,
  runOpencode,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { cleanUp, createScenario, githubScenario, sqlFinding } from "./harness"
import { type LocalRegistry, startLocalRegistry } from "./npm-registry"

// The published package, proven the way a pipeline uses it: `bun run pack` builds the tarball, a
// local registry serves it as the published version, and `bunx opencode-reviewer@<version>` runs
// from an empty directory with a fresh bunx install dir: help, errors, a whole review against the
// scripted model with the package's own opencode binary, prompts and runtime plugin, and the
// packaged /fullreview plugin inside a real opencode. Dependencies come from the real registry
// (or Bun's cache); no install script runs, as under npm 11.

const root = fileURLToPath(new URL("../../", import.meta.url))
const manifest = JSON.parse(await readFile(join(root, "packages/cli/package.json"), "utf8")) as {
  version: string
  dependencies: Record<string, string>
}

let fresh: string
let installed: string
let registry: LocalRegistry
let sandbox: OpencodeSandbox

// Asynchronous on purpose: the registry and the scripted model server live in this process.
async function bunx(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const child = Bun.spawn(["bunx", `opencode-reviewer@${manifest.version}`, ...args], {
    cwd: options.cwd ?? join(fresh, "work"),
    env: { ...gitEnv(fresh), TMPDIR: join(fresh, "tmp"), BUN_CONFIG_REGISTRY: registry.url, ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  return { code, stdout, stderr }
}

beforeAll(async () => {
  const packed = Bun.spawnSync(["bun", "run", "pack"], { cwd: root, stdout: "pipe", stderr: "pipe" })
  if (packed.exitCode !== 0) throw new Error(`bun run pack failed: ${packed.stderr.toString()}`)
  fresh = await mkdtemp(join(tmpdir(), "ocr-fresh-"))
  await mkdir(join(fresh, "work"))
  await mkdir(join(fresh, "tmp"))
  registry = await startLocalRegistry({
    tarball: join(root, `dist/opencode-reviewer-${manifest.version}.tgz`),
    manifest: JSON.parse(await readFile(join(root, "dist/package/package.json"), "utf8")),
  })
  const first = await bunx(["--version"])
  if (first.code !== 0) throw new Error(`bunx opencode-reviewer@${manifest.version} failed: ${first.stderr}`)
  installed = join(
    fresh,
    "tmp",
    `bunx-${process.getuid?.() ?? 0}-opencode-reviewer@${manifest.version}`,
    "node_modules",
  )
  sandbox = await createOpencodeSandbox()
}, 180_000)

afterAll(async () => {
  await cleanUp()
  await sandbox?.remove()
  await registry?.close()
  if (fresh) await rm(fresh, { recursive: true, force: true })
})

describe("the npm package", () => {
  test("holds the bundles, prompts and demo, and depends on nothing but opencode-ai", async () => {
    expect(registry.requests).toContain(`/opencode-reviewer/-/opencode-reviewer-${manifest.version}.tgz`)
    const pkg = join(installed, "opencode-reviewer")
    const published = JSON.parse(await readFile(join(pkg, "package.json"), "utf8")) as Record<string, unknown>
    expect(published.dependencies).toEqual({ "opencode-ai": manifest.dependencies["opencode-ai"] })
    expect(published.version).toBe(manifest.version)
    expect(published.main).toBe("./lib/fullreview-plugin.js")
    expect((await readdir(pkg)).sort()).toEqual(["LICENSE", "README.md", "corpora", "lib", "package.json"])
    expect((await readdir(join(pkg, "corpora"))).sort()).toEqual(["demo", "martian"])
    // Every file of the demo corpus (eval --demo below reviews two of its cases).
    const demo = join(root, "packages/eval/corpora/demo")
    expect((await readdir(join(pkg, "corpora/demo"), { recursive: true })).sort()).toEqual(
      (await readdir(demo, { recursive: true })).sort(),
    )
    expect((await readdir(join(pkg, "lib"))).sort()).toEqual([
      "cli.js",
      "comment-server.js",
      "demo",
      "fullreview-plugin.js",
      "prompts",
      "runtime-plugin.js",
    ])
    expect((await readdir(join(pkg, "lib/prompts"))).sort()).toEqual((await readdir(join(root, "prompts"))).sort())
    // The wrapper's own bin is still the stub: the package must not depend on its postinstall.
    const stub = await readFile(join(installed, "opencode-ai/bin/opencode"), "utf8").catch(() => "")
    expect(stub.length).toBeLessThan(10_000)
  })

  test("answers --version and --help, and explains a wrong flag and a missing repository", async () => {
    expect((await bunx(["--version"])).stdout.trim()).toBe(manifest.version)
    const help = await bunx(["review", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("Usage: opencode-reviewer review [options]")
    const unknown = await bunx(["review", "--no-such-flag"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^error: .*--no-such-flag/m)
    const missing = await bunx(["plan", "--repo", join(fresh, "nowhere")])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain(`repository directory not found: ${join(fresh, "nowhere")}`)
    expect(missing.stderr).toContain("hint: ")
  })

  // One review for what two reviews proved (each opencode process costs seconds of CPU to start):
  // the installed package's runtime plugin, comment server and prompts running a whole review, and
  // its GitHub provider picked from the Actions environment. The local provider from the installed
  // package runs in the /fullreview test below (`review --working-tree` inside OpenCode).
  test("reviews a change end to end from the installed package: in a GitHub Actions pull request run it picks GitHub by itself and posts there", async () => {
    const { scenario, fake, env } = await githubScenario()
    const outputDir = join(fresh, "out-github")
    const run = await bunx(
      ["review", "--repo", scenario.repo.dir, "--config", scenario.configFile, "--output-dir", outputDir],
      { env },
    )
    expect(run.code, run.stderr).toBe(2)
    expect(run.stderr).toContain("GitHub: requested changes")
    const bot = (comment: { user: { login: string } }) => comment.user.login === "github-actions[bot]"
    expect(fake.state.issueComments.filter(bot)).toHaveLength(1)
    expect(fake.state.reviewComments.filter(bot)).toEqual([
      expect.objectContaining({ path: sqlFinding.file, line: sqlFinding.line }),
    ])
    const record = JSON.parse(await readFile(join(outputDir, "review.json"), "utf8")) as ReviewRecord
    expect(record.decision).toBe("significant_concerns")
    expect(record.findings).toEqual([
      expect.objectContaining({ file: sqlFinding.file, line: sqlFinding.line, title: sqlFinding.title }),
    ])
    // Every planned reviewer ran through the packaged runtime plugin (none "did not run").
    expect(record.coverage.failedReviewers).toEqual([])
    const config = JSON.parse(await readFile(join(outputDir, "work/opencode.json"), "utf8")) as {
      plugin: string[]
      mcp: { review: { command: string[] } }
    }
    expect(config.plugin).toEqual([pathToFileURL(join(installed, "opencode-reviewer/lib/runtime-plugin.js")).href])
    expect(config.mcp.review.command[1]).toBe(join(installed, "opencode-reviewer/lib/comment-server.js"))
    // The coordinator's prompt is the packaged prompts' text.
    const coordinatorPrompt = await readFile(join(root, "prompts/coordinator.md"), "utf8")
    const system = scenario.server.requests.find((request) => request.model === "coordinator")?.system ?? ""
    expect(system).toContain(
      coordinatorPrompt
        .split("\n")
        .find((line) => line.trim().length > 40)!
        .trim(),
    )
  }, 120_000)

  // Two of the demo's three cases (a review each): one the replay reviewer misses, one it finds. The
  // whole demo's numbers from the workspace are eval.test.ts's; every demo file is in the package
  // (the first test).
  test("eval --demo measures the replay reviewer from the installed package, offline and without keys", async () => {
    const run = await bunx(["eval", "--demo", "--limit", "2", "--output-dir", join(fresh, "eval")])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain("2 of 2 cases scored")
    expect(run.stdout).toMatch(/\| \*\*overall\*\* \| 100\.0 \| 50\.0 \| 66\.7 \| 1 \| 0 \| 1 \|/)
  }, 120_000)

  test("runs /fullreview with the one documented setup step: the package as an npm plugin spec", async () => {
    const scenario = await createScenario()
    scenario.server.rule(
      (request) => request.model === "session",
      (request) =>
        request.isTitle
          ? text("Full review")
          : request.toolResults.length === 0
            ? toolCall("fullreview", {})
            : text("Shown."),
    )
    const config = {
      plugin: [`opencode-reviewer@${manifest.version}`],
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: scenario.server.url, apiKey: "k" },
          models: { session: {} },
        },
      },
      model: "fake/session",
      small_model: "fake/session",
    }
    const env = {
      ...gitEnv(scenario.repo.dir),
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_REVIEWER_CONFIG: scenario.configFile,
      // OpenCode installs npm plugins with its built-in npm: from our registry, through npm's own cache.
      npm_config_registry: registry.url,
      npm_config_offline: "false",
      npm_config_cache: join(homedir(), ".npm"),
    }
    const run = await runOpencode(sandbox, ["run", "--format", "json", "--command", "fullreview"], {
      cwd: scenario.repo.dir,
      env,
      timeoutMs: 240_000,
    })
    expect(run.code, run.stderr).toBe(0)
    const tool = run.stdout
      .split("\n")
      .filter(Boolean)
      .map(
        (line) =>
          JSON.parse(line) as {
            part?: { tool?: string; state?: { status: string; output?: string; metadata?: Record<string, unknown> } }
          },
      )
      .find((line) => line.part?.tool === "fullreview")?.part
    expect(tool?.state?.status, `${JSON.stringify(tool)}\n${run.stderr.slice(-2000)}`).toBe("completed")
    expect(tool?.state?.output).toContain(sqlFinding.title)
    expect(tool?.state?.metadata).toMatchObject({ decision: "significant_concerns", exitCode: 2 })
    // The plugin OpenCode ran is the published one, installed from the registry.
    const cached = join(
      sandbox.root,
      "cache/opencode/packages",
      `opencode-reviewer@${manifest.version}`,
      "node_modules/opencode-reviewer/package.json",
    )
    expect(JSON.parse(await readFile(cached, "utf8")).version).toBe(manifest.version)
  }, 300_000)
})
