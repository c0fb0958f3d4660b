import { readFile } from "node:fs/promises"
import {
  createOpencodeSandbox,
  createTempRepo,
  gitEnv,
  type OpencodeSandbox,
  runOpencode,
  type TempRepo,
} from "@opencode-reviewer/testkit"
import { main } from "opencode-reviewer"
import { afterAll, beforeAll, describe, expect, test } from "vitest"

// The assembled opencode.json, loaded by the real opencode binary: what each agent can actually do.
describe("assembled config under the real opencode binary", () => {
  let repo: TempRepo
  let sandbox: OpencodeSandbox
  let config: string
  let agents: string[]

  beforeAll(async () => {
    repo = await createTempRepo()
    await repo.write({ "src/app.ts": "export const a = 1\n" })
    repo.commit("init")
    repo.git("checkout", "-q", "-b", "feature")
    // A security-sensitive path and a release file: the full tier with every specialist.
    await repo.write({ "src/auth/token.ts": "export const ttl = 1\n", "CHANGELOG.md": "## 1.1.0\n" })
    repo.commit("auth change")
    let stdout = ""
    const code = await main({
      argv: ["plan", "--json"],
      env: gitEnv(repo.dir),
      cwd: repo.dir,
      stdout: (text) => void (stdout += text),
      stderr: () => {},
      stdin: async () => new Uint8Array(),
      execPath: process.execPath,
    })
    expect(code).toBe(0)
    const plan = JSON.parse(stdout) as { configFile: string; agents: { name: string }[] }
    agents = plan.agents.map((agent) => agent.name)
    config = await readFile(plan.configFile, "utf8")
    sandbox = await createOpencodeSandbox()
    // The first opencode run creates its SQLite schema; concurrent first runs race on the migration.
    const warm = await runOpencode(sandbox, ["debug", "agent", "review_coordinator"], {
      cwd: repo.dir,
      env: { OPENCODE_CONFIG_CONTENT: config },
    })
    expect(warm.code, warm.stderr).toBe(0)
  }, 60_000)

  afterAll(async () => {
    await repo.remove()
    await sandbox.remove()
  })

  const debugAgent = async (name: string) => {
    const result = await runOpencode(sandbox, ["debug", "agent", name], {
      cwd: repo.dir,
      env: { OPENCODE_CONFIG_CONTENT: config },
    })
    expect(result.code, result.stderr).toBe(0)
    return JSON.parse(result.stdout) as {
      name: string
      mode: string
      tools: Record<string, boolean>
      model: { providerID: string; modelID: string }
    }
  }

  test("gives every reviewer only read tools", async () => {
    const reviewers = agents.filter((agent) => agent !== "review_coordinator")
    // Every specialist, release included (which ones a tier plans: core/src/plan/agents.test.ts).
    expect(reviewers).toHaveLength(7)
    const resolved = await Promise.all(reviewers.map(debugAgent))
    for (const [index, agent] of resolved.entries()) {
      const name = reviewers[index]!
      expect(agent.mode, name).toBe("subagent")
      const enabled = Object.entries(agent.tools)
        .filter(([, on]) => on)
        .map(([tool]) => tool)
        .sort()
      expect(enabled, name).toEqual(["glob", "grep", "read"])
      for (const tool of ["bash", "edit", "write", "task", "webfetch", "todowrite", "skill"])
        expect(agent.tools[tool], `${name}: ${tool}`).toBe(false)
    }
  }, 120_000)

  test("makes the coordinator the primary agent, with read tools and nothing that writes or runs code", async () => {
    const agent = await debugAgent("review_coordinator")
    expect(agent.mode).toBe("primary")
    expect(agent.model).toEqual({ providerID: "anthropic", modelID: "claude-opus-4-7" })
    for (const tool of ["read", "glob", "grep"]) expect(agent.tools[tool], tool).toBe(true)
    for (const tool of ["bash", "edit", "write", "task", "webfetch"]) expect(agent.tools[tool], tool).toBe(false)
  })

  test("leaves no built-in agent to fall back to", async () => {
    const result = await runOpencode(sandbox, ["agent", "list"], {
      cwd: repo.dir,
      env: { OPENCODE_CONFIG_CONTENT: config },
    })
    expect(result.code, result.stderr).toBe(0)
    for (const builtIn of ["build", "plan", "general", "explore"])
      expect(result.stdout).not.toMatch(new RegExp(`^${builtIn}\\b`, "m"))
    expect(result.stdout).toMatch(/^review_coordinator\b/m)
  })
})
