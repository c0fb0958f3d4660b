import type { ReviewPlugin } from "@opencode-reviewer/core"
import { sameFamily } from "./chains"
import { type GatewaySettings, gatewayProviders, type ProviderTimeouts } from "./providers"

/** What the CLI passes to the "gateway" plugin. */
export interface GatewayPluginOptions {
  /** The user's provider blocks (config `provider`); core seeds them as plugin "core", this replaces them merged. */
  providers?: Readonly<Record<string, Record<string, unknown>>>
  /** Config `gateway`; null or absent: providers are reached directly. */
  gateway?: GatewaySettings | null
  timeouts?: ProviderTimeouts
}

/**
 * The "gateway" plugin: in configure it adds one provider block per provider a planned model uses
 * (every model of every planned chain, read from the plan view)
 * with timeouts, the user's block merged in, gateway routing and header rewriting when configured).
 * A bad gateway setting fails configure, naming this plugin: a review must not silently bypass it.
 */
export function gatewayPlugin(options: GatewayPluginOptions): ReviewPlugin {
  return {
    name: "gateway",
    async configure(context) {
      for (const agent of context.plan.agents) {
        const check = sameFamily(agent.models)
        if (check.warning) context.log.warn({ agent: agent.name, families: check.families }, check.warning)
      }
      const blocks = gatewayProviders({
        userProviders: options.providers ?? {},
        models: context.plan.agents.flatMap((agent) => agent.models),
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
