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
// Each opencode process costs seconds of CPU to start, so one `agent list` serves every test (it
// prints each agent's mode and permission rules as OpenCode resolved them), and `debug agent` (the
// tools it resolves) runs once per distinct model and rules: OpenCode picks an agent's tools from its
// model (apply_patch for GPT models instead of edit and write, web search by provider) and then
// disables what its rules deny, so agents that share both resolve to the same tools.

interface DebugAgent {
  name: string
  mode: string
  permission: unknown[]
  tools: Record<string, boolean>
  model: { providerID: string; modelID: string }
}

/** `opencode agent list`: a `name (mode)` line per agent, then its permission rules as indented JSON. */
function parseAgentList(stdout: string): Map<string, { mode: string; permission: unknown[] }> {
  const agents = new Map<string, { mode: string; permission: unknown[] }>()
  let current: { name: string; mode: string; json: string[] } | null = null
  const flush = () => {
    if (current) agents.set(current.name, { mode: current.mode, permission: JSON.parse(current.json.join("\n")) })
  }
  for (const line of stdout.split("\n")) {
    const header = /^(\S+) \((\w+)\)$/.exec(line)
    if (header) {
      flush()
      current = { name: header[1]!, mode: header[2]!, json: [] }
    } else if (current) current.json.push(line)
  }
  flush()
  return agents
}

describe("assembled config under the real opencode binary", () => {
  let repo: TempRepo
  let sandbox: OpencodeSandbox
  let config: string
  let agents: string[]
  let coordinator: DebugAgent
  let listed: { stdout: string; agents: ReturnType<typeof parseAgentList> }

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
    // It is the coordinator's own `debug agent`, which a test reads.
    coordinator = await debugAgent("review_coordinator")
    const list = await runOpencode(sandbox, ["agent", "list"], {
      cwd: repo.dir,
      env: { OPENCODE_CONFIG_CONTENT: config },
    })
    expect(list.code, list.stderr).toBe(0)
    listed = { stdout: list.stdout, agents: parseAgentList(list.stdout) }
  }, 90_000)

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
    return JSON.parse(result.stdout) as DebugAgent
  }

  test("gives every reviewer only read tools", async () => {
    const reviewers = agents.filter((agent) => agent !== "review_coordinator")
    // Every specialist, release included (which ones a tier plans: core/src/plan/agents.test.ts).
    expect(reviewers).toHaveLength(7)
    const models = (JSON.parse(config) as { agent: Record<string, { model: string }> }).agent
    // Reviewers grouped by what their tools are resolved from: their model and their rules as OpenCode shows them.
    const groups = new Map<string, string[]>()
    for (const name of reviewers) {
      const entry = listed.agents.get(name)
      expect(entry, `${name} in agent list`).toBeDefined()
      expect(entry!.mode, name).toBe("subagent")
      const key = JSON.stringify([models[name]!.model, entry!.permission])
      groups.set(key, [...(groups.get(key) ?? []), name])
    }
    const resolved = await Promise.all([...groups.values()].map((names) => debugAgent(names[0]!)))
    for (const [index, names] of [...groups.values()].entries()) {
      const agent = resolved[index]!
      const name = names.join(", ")
      expect(agent.mode, name).toBe("subagent")
      expect(agent.permission, name).toEqual(listed.agents.get(names[0]!)!.permission)
      const enabled = Object.entries(agent.tools)
        .filter(([, on]) => on)
        .map(([tool]) => tool)
        .sort()
      expect(enabled, name).toEqual(["glob", "grep", "read"])
      for (const tool of ["bash", "edit", "write", "task", "webfetch", "todowrite", "skill"])
        expect(agent.tools[tool], `${name}: ${tool}`).toBe(false)
    }
    console.info(`reviewer tools resolved by ${groups.size} debug agent runs for ${reviewers.length} reviewers`)
  }, 120_000)

  test("makes the coordinator the primary agent, with read tools and nothing that writes or runs code", () => {
    expect(coordinator.mode).toBe("primary")
    expect(coordinator.model).toEqual({ providerID: "anthropic", modelID: "claude-opus-4-7" })
    for (const tool of ["read", "glob", "grep"]) expect(coordinator.tools[tool], tool).toBe(true)
    for (const tool of ["bash", "edit", "write", "task", "webfetch"]) expect(coordinator.tools[tool], tool).toBe(false)
  })

  test("leaves no built-in agent to fall back to", () => {
    for (const builtIn of ["build", "plan", "general", "explore"])
      expect(listed.stdout).not.toMatch(new RegExp(`^${builtIn}\\b`, "m"))
    expect(listed.stdout).toMatch(/^review_coordinator\b/m)
  })
})
