import { CodeFinding, Finding, normalizeCategory } from "../model/finding"
import type { Logger } from "../model/logger"
import { modelIdPattern } from "../model/model-id"
import type {
  AgentContribution,
  AgentTarget,
  ConfigureContext,
  McpServer,
  PermissionRule,
  PlanView,
  PromptSection,
} from "./plugin"

/** An agent as recorded: who added it and whether it is the coordinator. */
export interface RecordedAgent extends AgentContribution {
  plugin: string
  role: "coordinator" | "reviewer"
}

/** Everything plugins (and core itself, as plugin "core") asked for, in call order. */
export interface Contributions {
  agents: Map<string, RecordedAgent>
  providers: Map<string, { plugin: string; block: Record<string, unknown> }>
  env: Map<string, { plugin: string; value: string }>
  prompts: { plugin: string; target: AgentTarget; section: PromptSection }[]
  permissions: { plugin: string; target: AgentTarget; permission: string; rule: PermissionRule }[]
  models: Map<string, { plugin: string; models: string[] }>
  opencodePlugins: string[]
  mcp: Map<string, McpServer>
  /** Findings established by code, in call order. */
  findings: CodeFinding[]
}

/** An empty contribution record. */
export function emptyContributions(): Contributions {
  return {
    agents: new Map(),
    providers: new Map(),
    env: new Map(),
    prompts: [],
    permissions: [],
    models: new Map(),
    opencodePlugins: [],
    mcp: new Map(),
    findings: [],
  }
}

/** Copies `from` into `into`; later calls override earlier ones the same way direct calls would. */
export function mergeContributions(into: Contributions, from: Contributions): void {
  for (const [name, agent] of from.agents) into.agents.set(name, agent)
  for (const [id, provider] of from.providers) into.providers.set(id, provider)
  for (const [name, value] of from.env) into.env.set(name, value)
  into.prompts.push(...from.prompts)
  into.permissions.push(...from.permissions)
  for (const [agent, models] of from.models) into.models.set(agent, models)
  into.opencodePlugins.push(...from.opencodePlugins)
  for (const [name, server] of from.mcp) into.mcp.set(name, server)
  into.findings.push(...from.findings)
}

const agentName = /^[a-z][a-z0-9_-]{0,63}$/
const envName = /^[A-Za-z_][A-Za-z0-9_]*$/
// OpenCode names an MCP tool `<server>_<tool>`; permissions match on that prefix.
const mcpName = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/
const modelId = modelIdPattern

/**
 * A ConfigureContext that records one plugin's calls into `store`. Calls are validated here so a
 * plugin's mistake fails inside its own hook, with its name on the error.
 */
export function createConfigureContext(
  store: Contributions,
  plugin: string,
  base: { log: Logger; plan: PlanView; signal: AbortSignal; knownAgents: () => Iterable<string> },
): ConfigureContext {
  const known = () => new Set([...base.knownAgents(), ...store.agents.keys()])
  const checkTarget = (target: AgentTarget) => {
    if (target === "*" || target === "reviewers" || known().has(target)) return
    throw new Error(`unknown agent "${target}"`)
  }
  return {
    log: base.log,
    plan: base.plan,
    signal: base.signal,
    registerAgent(name, agent) {
      if (!agentName.test(name)) throw new Error(`agent name "${name}" must be lowercase letters, digits, "-" or "_"`)
      if (known().has(name)) throw new Error(`agent "${name}" is already registered`)
      checkModels(agent.models)
      store.agents.set(name, { ...agent, models: [...agent.models], plugin, role: "reviewer" })
    },
    addProvider(id, provider) {
      if (!/^[A-Za-z0-9._-]+$/.test(id)) throw new Error(`provider id "${id}" is not valid`)
      store.providers.set(id, { plugin, block: structuredClone(provider) })
    },
    addMcpServer(name, server) {
      if (!mcpName.test(name)) throw new Error(`MCP server name "${name}" must be letters, digits, "-" or "_"`)
      if (store.mcp.has(name)) throw new Error(`MCP server "${name}" is already added`)
      if (server.type === "local" ? server.command.length === 0 : !/^https?:\/\//.test(server.url))
        throw new Error(`MCP server "${name}" needs a command or an http(s) URL`)
      store.mcp.set(name, structuredClone(server))
    },
    addOpencodePlugin(spec) {
      if (!/^(?:file:\/\/\/|@?[a-z0-9][\w.-]*(?:\/[\w.-]+)?(?:@[\w.^~-]+)?$)/.test(spec))
        throw new Error(`OpenCode plugin "${spec}" must be a file:/// URL or an npm package name`)
      if (!store.opencodePlugins.includes(spec)) store.opencodePlugins.push(spec)
    },
    setEnv(name, value) {
      if (!envName.test(name)) throw new Error(`environment variable name "${name}" is not valid`)
      store.env.set(name, { plugin, value })
    },
    injectPrompt(target, section) {
      checkTarget(target)
      if (section.title.trim() === "" || section.body.trim() === "")
        throw new Error("prompt sections need a title and a body")
      store.prompts.push({ plugin, target, section: { ...section } })
    },
    setPermission(target, permission, rule) {
      checkTarget(target)
      store.permissions.push({ plugin, target, permission, rule: typeof rule === "string" ? rule : { ...rule } })
    },
    setModels(agent, models) {
      checkTarget(agent)
      checkModels(models)
      store.models.set(agent, { plugin, models: [...models] })
    },
    addFinding(finding) {
      const parsed = Finding.safeParse(finding)
      if (!parsed.success) {
        throw new Error(
          `finding is not valid: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`).join("; ")}`,
        )
      }
      store.findings.push(
        CodeFinding.parse({ plugin, finding: { ...parsed.data, category: normalizeCategory(parsed.data.category) } }),
      )
    },
  }
}

function checkModels(models: readonly string[]): void {
  if (models.length === 0) throw new Error("an agent needs at least one model")
  const bad = models.find((model) => !modelId.test(model))
  if (bad !== undefined) throw new Error(`model "${bad}" must be <provider>/<model>`)
}
