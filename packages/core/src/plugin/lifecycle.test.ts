import { type OpencodeConfig, readOnlyProblem } from "@opencode-reviewer/opencode/config"
import { describe, expect, test } from "vitest"
import { assembleConfig } from "../assemble/assemble"
import { PluginConfigureError } from "../model/errors"
import { type Logger, silentLogger } from "../model/logger"
import type { Contributions } from "./contributions"
import { runLifecycle } from "./lifecycle"
import type { PlanView, ReviewPlugin } from "./plugin"

const plan: PlanView = { repoDir: "/repo", workDir: "/work", tier: "full", files: [], agents: [], diff: [] }

function seed(store: Contributions) {
  store.agents.set("review_coordinator", {
    description: "c",
    prompt: "COORDINATOR",
    models: ["fake/top"],
    plugin: "core",
    role: "coordinator",
  })
  store.agents.set("security", {
    description: "s",
    prompt: "SECURITY",
    models: ["fake/std", "fake/std-old"],
    plugin: "core",
    role: "reviewer",
  })
}

function run(plugins: ReviewPlugin[], log: Logger = silentLogger) {
  return runLifecycle({
    plugins,
    plan,
    log,
    seed,
    assemble: (store) => assembleConfig(store, { workDir: "/work", sharedReviewerPrompt: "SHARED RULES" }),
  })
}

// Resolves once `count` callers have arrived: proves they were running at the same time.
function barrier(count: number) {
  let arrived = 0
  let release!: () => void
  const all = new Promise<void>((resolve) => (release = resolve))
  return async () => {
    arrived += 1
    if (arrived === count) release()
    await all
  }
}

describe("runLifecycle", () => {
  test("runs every bootstrap at the same time", async () => {
    const meet = barrier(3)
    const started: string[] = []
    const plugins = ["a", "b", "c"].map((name) => ({
      name,
      async bootstrap() {
        started.push(name)
        await meet()
      },
    }))
    await run(plugins)
    expect(started.sort()).toEqual(["a", "b", "c"])
  })

  test("logs a failed bootstrap and goes on", async () => {
    const warned: object[] = []
    const log: Logger = { ...silentLogger, warn: (data) => void warned.push(data), child: () => log }
    let configured = false
    const result = await run(
      [
        { name: "template", bootstrap: async () => Promise.reject(new Error("fetch failed")) },
        { name: "later", configure: async () => void (configured = true) },
      ],
      log,
    )
    expect(configured).toBe(true)
    expect(result.warnings).toEqual(['plugin "template" failed in bootstrap: fetch failed'])
    expect(warned).toEqual([expect.objectContaining({ plugin: "template" })])
  })

  test("runs configure one plugin after another, in order", async () => {
    const events: string[] = []
    const plugin = (name: string, ms: number): ReviewPlugin => ({
      name,
      async configure() {
        events.push(`${name}:start`)
        await Bun.sleep(ms)
        events.push(`${name}:end`)
      },
    })
    await run([plugin("first", 20), plugin("second", 0), plugin("third", 5)])
    expect(events).toEqual(["first:start", "first:end", "second:start", "second:end", "third:start", "third:end"])
  })

  test("stops at the first failing configure with the plugin's name", async () => {
    let reached = false
    const error = await run([
      { name: "gitlab", configure: async () => Promise.reject(new Error("401 Unauthorized")) },
      { name: "after", configure: async () => void (reached = true) },
    ]).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(PluginConfigureError)
    expect((error as PluginConfigureError).data.plugin).toBe("gitlab")
    expect((error as Error).message).toBe('plugin "gitlab" failed in configure: 401 Unauthorized')
    expect(reached).toBe(false)
  })

  test("a plugin's invalid call fails inside its own configure", async () => {
    const error = await run([{ name: "bad", configure: async (context) => context.setModels("ghost", ["a/b"]) }]).catch(
      (caught: unknown) => caught,
    )
    expect((error as Error).message).toBe('plugin "bad" failed in configure: unknown agent "ghost"')
  })

  test("merges agents, providers, env, prompts and models into opencode.json", async () => {
    const result = await run([
      {
        name: "standards",
        async configure(context) {
          context.registerAgent("licence", { description: "Licence checks", prompt: "LICENCE", models: ["fake/light"] })
          context.addProvider("fake", {
            npm: "@ai-sdk/openai-compatible",
            options: { baseURL: "http://127.0.0.1:1/v1" },
          })
          context.setEnv("FAKE_KEY", "secret-value")
          context.injectPrompt("reviewers", { title: "Standards", body: "RFC-1: no globals", order: 10 })
          context.injectPrompt("*", { title: "Repository conventions", body: "AGENTS.md text", order: 5 })
          context.setModels("security", ["fake/other"])
        },
      },
    ])
    const { config } = result
    expect(config.default_agent).toBe("review_coordinator")
    expect(config.model).toBe("fake/top")
    expect(config.provider.fake).toMatchObject({ npm: "@ai-sdk/openai-compatible" })
    expect(result.env).toEqual({ FAKE_KEY: "secret-value" })
    expect(result.models.security).toEqual(["fake/other"])
    expect(config.agent.security!.model).toBe("fake/other")
    expect(config.agent.licence).toMatchObject({ mode: "subagent", model: "fake/light" })
    expect(config.agent.security!.prompt).toBe(
      "SHARED RULES\n\nSECURITY\n\n## Repository conventions\n\nAGENTS.md text\n\n## Standards\n\nRFC-1: no globals\n",
    )
    expect(config.agent.review_coordinator!.prompt).toBe("COORDINATOR\n\n## Repository conventions\n\nAGENTS.md text\n")
    for (const name of ["build", "plan", "general", "explore"]) expect(config.agent[name]).toEqual({ disable: true })
  })

  test("adds MCP servers and OpenCode plugins, validated, and no reviewer may call the server's tools", async () => {
    const result = await run([
      {
        name: "machinery",
        async configure(context) {
          context.addOpencodePlugin("file:///opt/runtime-plugin.js")
          context.addOpencodePlugin("file:///opt/runtime-plugin.js")
          context.addMcpServer("notes", { type: "local", command: ["bun", "/opt/server.js"], timeout: 30_000 })
        },
      },
    ])
    expect(result.config.plugin).toEqual(["file:///opt/runtime-plugin.js"])
    expect(result.config.mcp).toEqual({ notes: { type: "local", command: ["bun", "/opt/server.js"], timeout: 30_000 } })
    const permission = result.config.agent.security!.permission!
    expect(permission["*"]).toBe("deny")
    expect(permission.notes_submit).toBeUndefined()
    expect(readOnlyProblem(permission)).toBeNull()

    const refusals: [string, (context: Parameters<NonNullable<ReviewPlugin["configure"]>>[0]) => void][] = [
      [
        "twice",
        (context) => {
          context.addMcpServer("notes", { type: "local", command: ["a"] })
          context.addMcpServer("notes", { type: "local", command: ["b"] })
        },
      ],
      ["no command", (context) => context.addMcpServer("empty", { type: "local", command: [] })],
      ["a bad name", (context) => context.addMcpServer("no spaces", { type: "remote", url: "https://mcp.example" })],
      ["a bad URL", (context) => context.addMcpServer("web", { type: "remote", url: "ftp://mcp.example" })],
      ["a relative plugin path", (context) => context.addOpencodePlugin("./plugin.js")],
    ]
    for (const [what, call] of refusals) {
      const error = await run([{ name: "bad", configure: async (context) => call(context) }]).catch(
        (caught: unknown) => caught,
      )
      expect(error, what).toBeInstanceOf(PluginConfigureError)
    }
  })

  test("keeps reviewers read-only whatever a plugin asks for", async () => {
    const result = await run([
      {
        name: "greedy",
        async configure(context) {
          context.setPermission("reviewers", "bash", "allow")
          context.setPermission("security", "edit", { "*": "allow" })
          context.setPermission("security", "spawn_reviewers", "allow")
          context.setPermission("security", "read", "allow")
          context.setPermission("*", "webfetch", "allow")
          context.setPermission("security", "grep", "deny")
        },
      },
    ])
    const permission = result.config.agent.security!.permission!
    expect(readOnlyProblem(permission)).toBeNull()
    expect(permission.bash).toBeUndefined()
    expect(permission.edit).toBeUndefined()
    expect(permission.spawn_reviewers).toBeUndefined()
    expect(permission.grep).toBe("deny")
    expect(permission.read).toEqual({
      "*": "allow",
      "*.env": "deny",
      "*.env.*": "deny",
      "*.env.example": "allow",
      ".git/*": "deny",
      "*/.git/*": "deny",
    })
    expect(result.config.agent.review_coordinator!.permission!.webfetch).toBeUndefined()
    expect(result.refused).toHaveLength(5)
  })

  test("gives postConfigure a frozen copy: a plugin cannot reach the final config", async () => {
    let seen: Readonly<OpencodeConfig> | undefined
    const result = await run([
      {
        name: "sneaky",
        async postConfigure(_context, config) {
          seen = config
          ;(config.agent as Record<string, unknown>).security = { mode: "primary" }
        },
      },
    ])
    expect(seen?.default_agent).toBe("review_coordinator")
    expect(result.config.agent.security!.mode).toBe("subagent")
    expect(result.warnings[0]).toMatch(/^plugin "sneaky" failed in postConfigure: /)
  })

  test("applies postConfigure contributions through the context and drops a failed plugin's", async () => {
    const result = await run([
      { name: "remote", postConfigure: async (context) => context.setModels("security", ["fake/remote"]) },
      {
        name: "broken",
        async postConfigure(context) {
          context.setModels("review_coordinator", ["fake/should-not-apply"])
          throw new Error("half done")
        },
      },
    ])
    expect(result.config.agent.security!.model).toBe("fake/remote")
    expect(result.config.model).toBe("fake/top")
    expect(result.warnings).toEqual(['plugin "broken" failed in postConfigure: half done'])
  })

  test("offers no way to the config object from configure", async () => {
    let keys: string[] = []
    await run([{ name: "look", configure: async (context) => void (keys = Object.keys(context)) }])
    expect(keys.sort()).toEqual([
      "addFinding",
      "addMcpServer",
      "addOpencodePlugin",
      "addProvider",
      "injectPrompt",
      "log",
      "plan",
      "registerAgent",
      "setEnv",
      "setModels",
      "setPermission",
      "signal",
    ])
  })
})
