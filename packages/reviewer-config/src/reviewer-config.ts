import type { ConfigureContext, OpencodeConfig, ReviewPlugin } from "@opencode-reviewer/core"
import { applyReviewerConfig } from "./apply"
import { type FetchOptions, fetchReviewerConfig } from "./fetch"

/** What the CLI passes: the document URL, and fetch knobs for tests. */
export interface ReviewerConfigPluginOptions {
  /** The control plane's document URL (config `remoteConfigUrl`). */
  url: string
  fetch?: FetchOptions["fetch"]
  /** Request budget, body included (default 3000 ms). */
  timeoutMs?: number
}

/**
 * The "reviewer-config" plugin: in postConfigure it fetches the remote document and re-routes
 * agents through `context.setModels`. Never throws: a bad or unreachable document is a warning.
 */
export function reviewerConfigPlugin(options: ReviewerConfigPluginOptions): ReviewPlugin {
  return {
    name: "reviewer-config",
    async postConfigure(context, config) {
      try {
        await reroute(context, config, options)
      } catch (cause) {
        context.log.warn({ err: cause }, "remote reviewer config not applied")
      }
    },
  }
}

async function reroute(
  context: ConfigureContext,
  config: Readonly<OpencodeConfig>,
  options: ReviewerConfigPluginOptions,
): Promise<void> {
  const fetched = await fetchReviewerConfig(options.url, {
    signal: context.signal,
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  })
  if (!fetched.ok) {
    context.log.warn({ warning: fetched.warning }, "remote reviewer config ignored")
    return
  }
  for (const warning of fetched.warnings) context.log.warn({ warning }, "remote reviewer config")

  // The assembled opencode.json holds only each agent's primary: the plan view has the whole chains.
  const planned = Object.fromEntries(context.plan.agents.map((agent) => [agent.name, agent.models]))
  const chains = plannedChains(config, planned)
  const applied = applyReviewerConfig(fetched.document, chains)
  for (const warning of applied.warnings) context.log.warn({ warning }, "remote reviewer config")
  for (const [agent, chain] of Object.entries(applied.chains)) {
    if (chain.join("\n") !== chains[agent]!.join("\n")) context.setModels(agent, chain)
  }
  context.log.info(
    { changes: applied.changes },
    applied.changes.length > 0 ? "remote reviewer config applied" : "remote reviewer config changed nothing",
  )
}

// Every enabled agent of the assembled config, with the chain it was planned with when that chain
// still starts with the assembled primary (a configure-time setModels makes it stale).
function plannedChains(
  config: Readonly<OpencodeConfig>,
  given: Readonly<Record<string, readonly string[]>>,
): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(config.agent).flatMap(([name, block]) => {
      if (block.disable === true || block.model === undefined) return []
      const chain = given[name]
      return [[name, chain && chain[0] === block.model ? [...chain] : [block.model]]]
    }),
  )
}
