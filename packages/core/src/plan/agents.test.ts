import { describe, expect, test } from "vitest"
import { parseConfig } from "../config/config"
import { selectAgents } from "./agents"
import type { ChangeSignals } from "./signals"

const none: ChangeSignals = { release: [], agentsMd: [], security: [] }
const names = (agents: { name: string }[]) => agents.map((agent) => agent.name)
const config = parseConfig({}).config

describe("selectAgents", () => {
  test("trivial runs the coordinator on the standard family and one generalist", () => {
    const agents = selectAgents("trivial", none, config)
    expect(names(agents)).toEqual(["review_coordinator", "code-quality"])
    expect(agents[0]!.models).toEqual(config.models.standard)
  })

  test("lite runs four agents", () => {
    expect(names(selectAgents("lite", none, config))).toEqual([
      "review_coordinator",
      "code-quality",
      "compliance",
      "documentation",
    ])
  })

  test("lite adds security when the change is security-relevant", () => {
    const agents = selectAgents("lite", { ...none, security: ["src/a.ts (password)"] }, config)
    expect(names(agents)).toContain("security")
    expect(agents.find((agent) => agent.name === "security")!.reason).toContain("src/a.ts (password)")
  })

  test("full runs seven agents on the top family, release only with release files", () => {
    const full = selectAgents("full", none, config)
    expect(full).toHaveLength(7)
    expect(full[0]!.models).toEqual(config.models.top)
    expect(names(full)).not.toContain("release")
    expect(names(selectAgents("full", { ...none, release: ["CHANGELOG.md"] }, config))).toContain("release")
  })

  test("agents-md joins any tier when the project set-up changes", () => {
    expect(names(selectAgents("trivial", { ...none, agentsMd: ["package.json"] }, config))).toEqual([
      "review_coordinator",
      "code-quality",
      "agents-md",
    ])
  })

  test("gives each reviewer its family's chain and timeout, code quality 10 minutes", () => {
    const agents = selectAgents("full", none, config)
    const byName = Object.fromEntries(agents.map((agent) => [agent.name, agent]))
    expect(byName["code-quality"]!.timeoutMinutes).toBe(10)
    expect(byName.security!.timeoutMinutes).toBe(5)
    expect(byName.documentation!.models).toEqual(config.models.light)
    expect(byName.performance!.models).toEqual(config.models.standard)
  })

  test("config can switch reviewers off or on and override their model", () => {
    const custom = parseConfig({
      reviewers: {
        performance: { enabled: false },
        release: { enabled: true },
        security: { model: "openai/gpt-5.4", timeoutMinutes: 8 },
      },
    }).config
    const agents = selectAgents("full", none, custom)
    expect(names(agents)).not.toContain("performance")
    expect(names(agents)).toContain("release")
    expect(agents.find((agent) => agent.name === "security")).toMatchObject({
      models: ["openai/gpt-5.4"],
      timeoutMinutes: 8,
    })
  })
})
