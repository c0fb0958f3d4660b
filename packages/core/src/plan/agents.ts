import type { Config, ModelTier, ReviewerName } from "../config/config"
import type { Tier } from "./risk"
import type { ChangeSignals } from "./signals"

/** The coordinator's agent name; also OpenCode's `default_agent`. */
export const coordinatorName = "review_coordinator"

/** What the system knows about one specialist reviewer. */
export interface ReviewerSpec {
  name: ReviewerName
  description: string
  modelTier: ModelTier
  /** Tiers on which it runs unconditionally. */
  tiers: readonly Tier[]
  timeoutMinutes: number
}

/** The seven specialists, in the order their findings are presented (docs/design-numbers.md). */
export const reviewers: readonly ReviewerSpec[] = [
  {
    name: "security",
    description: "Security reviewer: exploitable flaws in the change",
    modelTier: "standard",
    tiers: ["full"],
    timeoutMinutes: 5,
  },
  {
    name: "code-quality",
    description: "Generalist reviewer: correctness, error handling, maintainability",
    modelTier: "standard",
    tiers: ["trivial", "lite", "full"],
    timeoutMinutes: 10,
  },
  {
    name: "performance",
    description: "Performance reviewer: measurable regressions on hot paths",
    modelTier: "standard",
    tiers: ["full"],
    timeoutMinutes: 5,
  },
  {
    name: "compliance",
    description: "Engineering-standards reviewer: the organisation's documented rules",
    modelTier: "standard",
    tiers: ["lite", "full"],
    timeoutMinutes: 5,
  },
  {
    name: "documentation",
    description: "Documentation reviewer: docs that the change makes wrong or missing",
    modelTier: "light",
    tiers: ["lite", "full"],
    timeoutMinutes: 5,
  },
  {
    name: "release",
    description: "Release reviewer: versions, changelogs and release configuration",
    modelTier: "light",
    tiers: [],
    timeoutMinutes: 5,
  },
  {
    name: "agents-md",
    description: "AGENTS.md reviewer: keeps the agent instructions true to the project",
    modelTier: "light",
    tiers: ["full"],
    timeoutMinutes: 5,
  },
]

/** One agent of the plan: its name, role, model chain (primary first) and why it runs. */
export interface PlannedAgent {
  name: string
  role: "coordinator" | "reviewer"
  models: string[]
  timeoutMinutes: number | null
  reason: string
}

/**
 * Picks the agent set for a tier: trivial = coordinator (standard family) + the generalist;
 * lite = + documentation and compliance (+ security when the change is security-relevant);
 * full = everyone but release; release only when release files changed; agents-md on full or
 * whenever the change touches AGENTS.md, the build, CI or the package manager. `enabled: false`
 * always wins; `enabled: true` adds a reviewer on any tier.
 */
export function selectAgents(tier: Tier, signals: ChangeSignals, config: Config): PlannedAgent[] {
  const coordinatorFamily: ModelTier = tier === "trivial" ? "standard" : "top"
  const coordinator: PlannedAgent = {
    name: coordinatorName,
    role: "coordinator",
    models: config.models[coordinatorFamily],
    timeoutMinutes: null,
    reason: `coordinator on the ${coordinatorFamily} family (${tier} tier)`,
  }
  const chosen = reviewers.flatMap((spec) => {
    const settings = config.reviewers[spec.name]
    const reason =
      settings.enabled === false ? null : settings.enabled === true ? "enabled in config" : why(spec, tier, signals)
    if (reason === null) return []
    return [
      {
        name: spec.name,
        role: "reviewer" as const,
        models: settings.model ?? config.models[spec.modelTier],
        timeoutMinutes: settings.timeoutMinutes ?? spec.timeoutMinutes,
        reason,
      },
    ]
  })
  return [coordinator, ...chosen]
}

function why(spec: ReviewerSpec, tier: Tier, signals: ChangeSignals): string | null {
  if (spec.name === "release")
    return signals.release.length > 0 ? `release files changed: ${list(signals.release)}` : null
  if (spec.tiers.includes(tier)) return `${tier} tier`
  if (spec.name === "security" && tier === "lite" && signals.security.length > 0) {
    return `security-relevant change: ${list(signals.security)}`
  }
  if (spec.name === "agents-md" && signals.agentsMd.length > 0)
    return `project set-up changed: ${list(signals.agentsMd)}`
  return null
}

function list(items: readonly string[]): string {
  const shown = items.slice(0, 3).join(", ")
  return items.length > 3 ? `${shown} and ${items.length - 3} more` : shown
}
