import type { OpencodeConfig } from "@opencode-reviewer/opencode/config"
import type { Finding } from "../model/finding"
import type { Logger } from "../model/logger"
import type { DiffFile } from "../plan/diff"
import type { Tier } from "../plan/risk"

/** What a plugin may know about the change and the plan while it runs (read-only). */
export interface PlanView {
  readonly repoDir: string
  readonly workDir: string
  readonly tier: Tier
  readonly files: readonly { readonly path: string; readonly status: string; readonly noise: string | null }[]
  /** The planned agents with the model chains core chose (primary first), before any plugin changed them. */
  readonly agents: readonly {
    readonly name: string
    readonly role: "coordinator" | "reviewer"
    readonly models: readonly string[]
  }[]
  /** Every file of the parsed diff, noise included, in diff order: for plugins that read the change itself. */
  readonly diff: readonly Readonly<DiffFile>[]
}

/** Context of `bootstrap`: fetch what configure will need. No contributions are possible yet. */
export interface BootstrapContext {
  readonly log: Logger
  readonly plan: PlanView
  readonly signal: AbortSignal
}

/** An agent a plugin adds: always a read-only reviewer unless core itself registers it. */
export interface AgentContribution {
  description: string
  prompt: string
  models: string[]
  /** Extra fields passed to OpenCode's agent block (temperature, steps, options). */
  options?: Record<string, unknown>
}

/** A titled block of text appended to one agent's prompt, or to every agent's with "*". */
export interface PromptSection {
  title: string
  body: string
  /** Lower sorts first; sections with equal order keep registration order. Default 100. */
  order?: number
}

/** An OpenCode permission value: an action, or patterns to actions (last match wins). */
export type PermissionRule = "allow" | "deny" | "ask" | Record<string, "allow" | "deny" | "ask">

/**
 * An MCP server for OpenCode's `mcp` block: a local command or a remote URL. Its tools are denied to
 * every reviewer (their permissions deny all but reading); the coordinator gets only the tools core allows.
 */
export type McpServer =
  | {
      type: "local"
      command: string[]
      environment?: Record<string, string>
      enabled?: boolean
      /** Milliseconds OpenCode waits for the server's tool list. */
      timeout?: number
    }
  | { type: "remote"; url: string; headers?: Record<string, string>; enabled?: boolean; timeout?: number }

/** Targets that address several agents at once. */
export type AgentTarget = string | "*" | "reviewers"

/** The only way a plugin changes the review: every call is recorded and merged by the assembler. */
export interface ConfigureContext {
  readonly log: Logger
  readonly plan: PlanView
  readonly signal: AbortSignal
  /** Adds a specialist agent (always read-only); throws if the name is taken. */
  registerAgent(name: string, agent: AgentContribution): void
  /** Adds or replaces an OpenCode provider block (passed through to opencode.json). */
  addProvider(id: string, provider: Record<string, unknown>): void
  /** Adds an MCP server to OpenCode's config; throws if the name is taken or not valid. */
  addMcpServer(name: string, server: McpServer): void
  /** Loads an OpenCode plugin (a `file:` URL or an npm package name) into the OpenCode process. */
  addOpencodePlugin(spec: string): void
  /** Sets an environment variable for the OpenCode child process. */
  setEnv(name: string, value: string): void
  /** Appends a prompt section to one agent, to every reviewer ("reviewers"), or to all agents ("*"). */
  injectPrompt(target: AgentTarget, section: PromptSection): void
  /** Sets an agent permission; reviewers stay read-only whatever a plugin asks for. */
  setPermission(target: AgentTarget, permission: string, rule: PermissionRule): void
  /** Replaces an agent's model chain (primary first). */
  setModels(agent: string, models: string[]): void
  /**
   * Records a finding established by code, not by a model (a deterministic check). It goes into
   * review.json beside the coordinator's findings, wins over a coordinator finding on the same file,
   * line and category, and counts in the decision. Throws if it does not fit the finding schema.
   */
  addFinding(finding: Finding): void
}

/** A unit of optional behaviour. All hooks are optional; the name appears in every error it causes. */
export interface ReviewPlugin {
  readonly name: string
  /** Runs concurrently with every other plugin's bootstrap; a failure is logged and the review goes on. */
  bootstrap?(context: BootstrapContext): Promise<void>
  /** Runs after the previous plugin's configure; a failure stops the review, naming this plugin. */
  configure?(context: ConfigureContext): Promise<void>
  /**
   * Runs after assembly with a frozen copy of the assembled config; contributions it makes through
   * the context are merged into the final config. A failure is logged and the review goes on.
   */
  postConfigure?(context: ConfigureContext, config: Readonly<OpencodeConfig>): Promise<void>
}
