import * as z from "zod"
import { ModelId } from "./model-id"

/** Tools a reviewer may use: reading the repository and the work dir, nothing else. */
export const readOnlyTools = ["read", "glob", "grep", "list"] as const

/** OpenCode's own agents; all disabled so nothing can fall back to an agent with bash or edit. */
export const builtInAgents = ["build", "plan", "general", "explore"] as const

const Action = z.enum(["allow", "deny", "ask"])

/** An agent's permission map: tool → action, or tool → pattern → action (last match wins). */
export const Permission = z.record(z.string(), z.union([Action, z.record(z.string(), Action)]))
export type Permission = z.infer<typeof Permission>

/** One agent block of opencode.json, as the assembler writes it. */
export const AgentBlock = z.strictObject({
  disable: z.boolean().optional(),
  mode: z.enum(["primary", "subagent", "all"]).optional(),
  description: z.string().optional(),
  prompt: z.string().optional(),
  model: ModelId.optional(),
  steps: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  options: z.record(z.string(), z.unknown()).optional(),
  permission: Permission.optional(),
})
export type AgentBlock = z.infer<typeof AgentBlock>

/** The subset of OpenCode 1.18.33's config the assembler produces, checked before it is written. */
export const OpencodeConfig = z
  .strictObject({
    $schema: z.string(),
    default_agent: z.string(),
    model: ModelId,
    small_model: ModelId,
    share: z.enum(["disabled", "manual", "auto"]),
    autoupdate: z.boolean(),
    snapshot: z.boolean(),
    lsp: z.literal(false),
    formatter: z.literal(false),
    provider: z.record(z.string(), z.record(z.string(), z.unknown())),
    agent: z.record(z.string(), AgentBlock),
    plugin: z.array(z.string()).optional(),
    mcp: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
    tool_output: z
      .object({ max_bytes: z.number().int().positive(), max_lines: z.number().int().positive() })
      .optional(),
  })
  .superRefine((config, issues) => {
    const coordinator = config.agent[config.default_agent]
    if (!coordinator || coordinator.disable || coordinator.mode !== "primary") {
      issues.addIssue({
        code: "custom",
        path: ["default_agent"],
        message: `"${config.default_agent}" must be an enabled primary agent`,
      })
    }
    for (const name of builtInAgents) {
      if (config.agent[name]?.disable !== true) {
        issues.addIssue({
          code: "custom",
          path: ["agent", name],
          message: "OpenCode's built-in agents must be disabled",
        })
      }
    }
    for (const [name, agent] of Object.entries(config.agent)) {
      if (agent.disable || name === config.default_agent) continue
      const problem = readOnlyProblem(agent.permission)
      if (problem) issues.addIssue({ code: "custom", path: ["agent", name, "permission"], message: problem })
    }
  })
export type OpencodeConfig = z.infer<typeof OpencodeConfig>

/** The config with `model` as the default agent's model, and as OpenCode's default and small model. */
export function withDefaultAgentModel(config: OpencodeConfig, model: string): OpencodeConfig {
  const primary = config.agent[config.default_agent]
  return {
    ...config,
    model,
    small_model: model,
    agent: { ...config.agent, [config.default_agent]: { ...primary, model } },
  }
}

/**
 * Why a permission map is not read-only, or null when it is: it must deny everything first and then
 * allow nothing but the read tools (and reading the work dir from outside the repository).
 */
export function readOnlyProblem(permission: Permission | undefined): string | null {
  if (!permission) return "reviewers need an explicit permission map"
  const keys = Object.keys(permission)
  if (keys[0] !== "*" || permission["*"] !== "deny") return 'reviewers must start from "*": "deny"'
  const allowed = keys.filter((key) => key !== "*" && grants(permission[key]))
  const extra = allowed.filter(
    (key) => key !== "external_directory" && !(readOnlyTools as readonly string[]).includes(key),
  )
  if (extra.length > 0) return `reviewers may not use ${extra.join(", ")}`
  return null
}

function grants(rule: Permission[string] | undefined): boolean {
  if (rule === undefined) return false
  if (typeof rule === "string") return rule !== "deny"
  return Object.values(rule).some((action) => action !== "deny")
}
