import type { PlanView, ReviewPlugin } from "@opencode-reviewer/core"
import { sameFamily } from "./chains"
import { type GatewaySettings, gatewayProviders, type ProviderTimeouts } from "./providers"

/** What the CLI passes to the "gateway" plugin. */
export interface GatewayPluginOptions {
  /** The user's provider blocks (config `provider`); core seeds them as plugin "core", this replaces them merged. */
  providers?: Readonly<Record<string, Record<string, unknown>>>
  /**
   * Every planned model ("provider/model", whole failback chains included), read when configure
   * runs: the plan view carries agent names only, so the CLI provides the models.
   */
  models: (plan: PlanView) => readonly string[]
  /** Each agent's planned chain, only used to warn about chains that mix families. */
  chains?: (plan: PlanView) => Readonly<Record<string, readonly string[]>>
  /** Config `gateway`; null or absent: providers are reached directly. */
  gateway?: GatewaySettings | null
  timeouts?: ProviderTimeouts
}

/**
 * The "gateway" plugin: in configure it adds one provider block per provider a planned model uses
 * (timeouts, the user's block merged in, gateway routing and header rewriting when configured).
 * A bad gateway setting fails configure, naming this plugin: a review must not silently bypass it.
 */
export function gatewayPlugin(options: GatewayPluginOptions): ReviewPlugin {
  return {
    name: "gateway",
    async configure(context) {
      for (const [agent, chain] of Object.entries(options.chains?.(context.plan) ?? {})) {
        const check = sameFamily(chain)
        if (check.warning) context.log.warn({ agent, families: check.families }, check.warning)
      }
      const blocks = gatewayProviders({
        userProviders: options.providers ?? {},
        models: options.models(context.plan),
        gateway: options.gateway ?? null,
        ...(options.timeouts ? { timeouts: options.timeouts } : {}),
      })
      for (const [id, block] of Object.entries(blocks)) context.addProvider(id, block)
      context.log.info(
        { providers: Object.keys(blocks), gateway: options.gateway ? "on" : "off" },
        "provider blocks added",
      )
    },
  }
}
