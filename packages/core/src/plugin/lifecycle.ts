import type { OpencodeConfig } from "@opencode-reviewer/opencode/config"
import { describe, PluginConfigureError } from "../model/errors"
import type { CodeFinding } from "../model/finding"
import type { Logger } from "../model/logger"
import { type Contributions, createConfigureContext, emptyContributions, mergeContributions } from "./contributions"
import type { PlanView, ReviewPlugin } from "./plugin"

/** What the lifecycle needs from its caller. */
export interface LifecycleOptions<Assembled extends { config: OpencodeConfig }> {
  plugins: readonly ReviewPlugin[]
  plan: PlanView
  log: Logger
  signal?: AbortSignal
  /** Core's own contributions (the coordinator, the planned reviewers), recorded before any plugin. */
  seed(store: Contributions): void
  /** Merges contributions into the final config; called once after configure, again if postConfigure contributed. */
  assemble(store: Contributions): Assembled
}

/** The assembled result, the findings plugins established by code, and what went wrong without stopping the review. */
export type LifecycleResult<Assembled> = Assembled & { warnings: string[]; findings: CodeFinding[] }

/**
 * Runs bootstrap (all plugins at once; failures logged), configure (one after another; the first
 * failure stops the run as PluginConfigureError), assembly, then postConfigure (all at once, each
 * with a frozen copy of the config; failures logged and their contributions dropped).
 */
export async function runLifecycle<Assembled extends { config: OpencodeConfig }>(
  options: LifecycleOptions<Assembled>,
): Promise<LifecycleResult<Assembled>> {
  const signal = options.signal ?? new AbortController().signal
  const warnings: string[] = []
  const store = emptyContributions()
  options.seed(store)
  const knownAgents = () => store.agents.keys()

  const bootstraps = await Promise.allSettled(
    options.plugins.map((plugin) =>
      plugin.bootstrap?.({ log: options.log.child({ plugin: plugin.name }), plan: options.plan, signal }),
    ),
  )
  bootstraps.forEach((outcome, index) => {
    if (outcome.status === "fulfilled") return
    const plugin = options.plugins[index]!.name
    warnings.push(`plugin "${plugin}" failed in bootstrap: ${describe(outcome.reason)}`)
    options.log.warn({ plugin, err: outcome.reason }, "plugin bootstrap failed; continuing without it")
  })

  for (const plugin of options.plugins) {
    if (!plugin.configure) continue
    signal.throwIfAborted()
    const context = createConfigureContext(store, plugin.name, {
      log: options.log.child({ plugin: plugin.name }),
      plan: options.plan,
      signal,
      knownAgents,
    })
    try {
      await plugin.configure(context)
    } catch (cause) {
      throw new PluginConfigureError(plugin.name, "configure", cause)
    }
  }

  const first = options.assemble(store)
  const late = options.plugins.filter((plugin) => plugin.postConfigure)
  if (late.length === 0) return { ...first, warnings, findings: store.findings }

  const frozen = deepFreeze(structuredClone(first.config))
  const staged = await Promise.allSettled(
    late.map(async (plugin) => {
      const own = emptyContributions()
      const context = createConfigureContext(own, plugin.name, {
        log: options.log.child({ plugin: plugin.name }),
        plan: options.plan,
        signal,
        knownAgents,
      })
      await plugin.postConfigure!(context, frozen)
      return own
    }),
  )
  const accepted = staged.flatMap((outcome, index) => {
    if (outcome.status === "fulfilled") return [outcome.value]
    const plugin = late[index]!.name
    warnings.push(`plugin "${plugin}" failed in postConfigure: ${describe(outcome.reason)}`)
    options.log.warn({ plugin, err: outcome.reason }, "plugin postConfigure failed; its changes are dropped")
    return []
  })
  if (accepted.every(isEmpty)) return { ...first, warnings, findings: store.findings }
  for (const own of accepted) mergeContributions(store, own)
  // Findings are not part of the config: a postConfigure that only added findings needs no re-assembly.
  if (accepted.every((own) => isEmpty({ ...own, findings: [] })))
    return { ...first, warnings, findings: store.findings }
  return { ...options.assemble(store), warnings, findings: store.findings }
}

function isEmpty(store: Contributions): boolean {
  return (
    store.agents.size === 0 &&
    store.providers.size === 0 &&
    store.env.size === 0 &&
    store.prompts.length === 0 &&
    store.permissions.length === 0 &&
    store.models.size === 0 &&
    store.opencodePlugins.length === 0 &&
    store.mcp.size === 0 &&
    store.findings.length === 0
  )
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value
  for (const child of Object.values(value)) deepFreeze(child)
  return Object.freeze(value)
}
