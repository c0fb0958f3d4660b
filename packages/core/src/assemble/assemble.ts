import {
  type AgentBlock,
  builtInAgents,
  OpencodeConfig,
  type Permission,
  readOnlyTools,
} from "@opencode-reviewer/opencode/config"
import { ConfigAssemblyError } from "../model/errors"
import type { Contributions, RecordedAgent } from "../plugin/contributions"
import type { PermissionRule, PromptSection } from "../plugin/plugin"
import { submitReviewTool, tools } from "../protocol/names"

/** What the assembler needs besides the contributions. */
export interface AssemblyOptions {
  /** Directory the agents read patches and the shared context from; allowed even outside the repo. */
  workDir: string
  /** Mandatory rules placed before every reviewer's own prompt (REVIEWER_SHARED.md). */
  sharedReviewerPrompt: string
}

/** The assembled opencode.json plus what the child process needs next to it. */
export interface Assembly {
  config: OpencodeConfig
  /** Environment variables plugins set for the OpenCode child. */
  env: Record<string, string>
  /** Every agent's model chain, primary first (the failback order). */
  models: Record<string, string[]>
  /** Contributions the assembler refused (a reviewer granted a write tool, say). */
  refused: string[]
}

// Tools no agent of ours may ever use: the review reads code, it never changes or runs it.
const neverAllowed = [
  "edit",
  "write",
  "patch",
  "multiedit",
  "bash",
  "task",
  "webfetch",
  "websearch",
  "codesearch",
  "todowrite",
  "question",
]
// .env files, and git's own files: a runner's .git/config may hold the CI job token in the origin URL.
const envDenies: Record<string, "deny" | "allow"> = {
  "*.env": "deny",
  "*.env.*": "deny",
  "*.env.example": "allow",
  ".git/*": "deny",
  "*/.git/*": "deny",
}

/**
 * Merges contributions into a validated opencode.json: the coordinator as the default (and only
 * primary) agent, OpenCode's built-in agents disabled, every other agent read-only.
 */
export function assembleConfig(store: Contributions, options: AssemblyOptions): Assembly {
  const refused: string[] = []
  const agents = [...store.agents.entries()]
  const coordinator = agents.find(([, agent]) => agent.role === "coordinator")
  if (!coordinator) throw new ConfigAssemblyError(["no coordinator agent was registered"])
  const [coordinatorName] = coordinator
  const models = Object.fromEntries(
    agents.map(([name, agent]) => [name, store.models.get(name)?.models ?? agent.models]),
  )
  const primary = (name: string) => models[name]![0]!

  const agentBlocks: Record<string, AgentBlock> = Object.fromEntries(
    builtInAgents.map((name) => [name, { disable: true }]),
  )
  for (const [name, agent] of agents) {
    const permission = buildPermission(name, agent, store, options.workDir, refused)
    agentBlocks[name] = {
      ...agent.options,
      mode: agent.role === "coordinator" ? "primary" : "subagent",
      description: agent.description,
      prompt: composePrompt(name, agent, store, options.sharedReviewerPrompt),
      model: primary(name),
      permission,
    }
  }

  const candidate = {
    $schema: "https://opencode.ai/config.json",
    default_agent: coordinatorName,
    model: primary(coordinatorName),
    small_model: primary(coordinatorName),
    share: "disabled",
    autoupdate: false,
    // The snapshot is a git copy of the worktree per run: time and disk a read-only review never needs.
    snapshot: false,
    lsp: false,
    formatter: false,
    provider: Object.fromEntries([...store.providers].map(([id, { block }]) => [id, block])),
    agent: agentBlocks,
    ...(store.opencodePlugins.length > 0 ? { plugin: [...store.opencodePlugins] } : {}),
    ...(store.mcp.size > 0 ? { mcp: Object.fromEntries(store.mcp) } : {}),
  }
  const checked = OpencodeConfig.safeParse(candidate)
  if (!checked.success) {
    throw new ConfigAssemblyError(checked.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`))
  }
  const env = Object.fromEntries([...store.env].map(([name, { value }]) => [name, value]))
  return { config: checked.data, env, models, refused }
}

function composePrompt(name: string, agent: RecordedAgent, store: Contributions, shared: string): string {
  const sections = store.prompts
    .map((entry, index) => ({ ...entry, index }))
    .filter(({ target }) => target === name || target === "*" || (target === "reviewers" && agent.role === "reviewer"))
    .sort((a, b) => (a.section.order ?? 100) - (b.section.order ?? 100) || a.index - b.index)
    .map(({ section }) => renderSection(section))
  // Shared rules first: every reviewer's system prompt then starts with the same bytes, which keeps
  // the provider's prompt cache warm across the specialists.
  const head = agent.role === "reviewer" ? [shared.trim(), agent.prompt.trim()] : [agent.prompt.trim()]
  return [...head, ...sections].join("\n\n") + "\n"
}

function renderSection(section: PromptSection): string {
  return `## ${section.title.trim()}\n\n${section.body.trim()}`
}

function buildPermission(
  name: string,
  agent: RecordedAgent,
  store: Contributions,
  workDir: string,
  refused: string[],
): Permission {
  const base: Permission =
    agent.role === "coordinator"
      ? { "*": "deny", ...readTools(), [tools.spawnReviewers]: "allow", [submitReviewTool]: "allow" }
      : { "*": "deny", ...readTools() }
  base.external_directory = { "*": "deny", [workDir]: "allow", [`${workDir}/*`]: "allow" }

  const rules = store.permissions.filter(
    ({ target }) => target === name || target === "*" || (target === "reviewers" && agent.role === "reviewer"),
  )
  for (const { plugin, permission, rule } of rules) {
    const why = refusal(agent, permission, rule)
    if (why) {
      refused.push(`plugin "${plugin}" asked to set ${permission} on ${name}: refused, ${why}`)
      continue
    }
    base[permission] = mergeRule(base[permission], rule)
  }
  // Whatever a plugin did to `read`, .env files stay unreadable (docs/opencode.md#permissions: "read": "allow" re-opens them).
  base.read = mergeRule(base.read, envDenies)
  return base
}

function refusal(agent: RecordedAgent, permission: string, rule: PermissionRule): string | null {
  if (permission === "*") return "the default must stay deny"
  const grants = typeof rule === "string" ? rule !== "deny" : Object.values(rule).some((action) => action !== "deny")
  if (!grants) return null
  if (neverAllowed.includes(permission)) return `${permission} is never allowed in a review`
  if (
    agent.role === "reviewer" &&
    !(readOnlyTools as readonly string[]).includes(permission) &&
    permission !== "external_directory"
  ) {
    return "reviewers are read-only"
  }
  return null
}

function readTools(): Permission {
  return Object.fromEntries(
    readOnlyTools.map((tool) => [tool, tool === "read" ? { "*": "allow", ...envDenies } : "allow"]),
  )
}

function mergeRule(current: Permission[string] | undefined, next: PermissionRule): Permission[string] {
  if (typeof next === "string") return next
  const patterns: Record<string, "allow" | "deny" | "ask"> =
    typeof current === "object" ? { ...current } : current ? { "*": current } : {}
  // Re-inserting moves a pattern to the end, where OpenCode's last-match-wins rule gives it priority.
  for (const [pattern, action] of Object.entries(next)) {
    delete patterns[pattern]
    patterns[pattern] = action
  }
  return patterns
}
