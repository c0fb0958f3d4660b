import {
  type Change,
  coordinatorName,
  describe,
  type Finding,
  isAgentsFile,
  type Logger,
  type PlanView,
  parseDiff,
  type ReviewPlugin,
} from "@opencode-reviewer/core"
import {
  codeFindingsForCoordinator,
  codeFindingsForReviewer,
  mechanicsSection,
  repositorySection,
  templateSection,
} from "./sections"
import { fetchTemplate, type TemplateFetchOptions } from "./template"

/** The reviewer this plugin briefs (core plans it; the plugin only adds to its prompt). */
export const reviewerName = "agents-md"

/** What the CLI hands the plugin. */
export interface AgentsMdPluginOptions {
  /** The change under review: its diff, and its files at the head when the provider can read them. */
  change: Pick<Change, "diff" | "readHeadFile">
  /** A file from the target branch (the VCS provider's readTrustedFile); never the merge request's version. */
  readTrustedFile(path: string): Promise<string | null>
  /** Config `agentsMdTemplateUrl`. */
  templateUrl?: string | null
  /** Template fetch limits and the fetch to use (tests). */
  template?: Omit<TemplateFetchOptions, "signal">
}

interface Gathered {
  findings: Finding[]
  root: string | null
  template: string | null
}

/**
 * AGENTS.md support: deterministic checks on the AGENTS.md / CLAUDE.md files the change adds or
 * edits (recorded as code findings), the project-mechanics facts for the agents-md reviewer, and the
 * repository's AGENTS.md (target branch) plus the organisation's template for every agent. Bootstrap
 * gathers everything at once; a template that cannot be fetched fails bootstrap, which the lifecycle
 * turns into a warning while the rest of what was gathered is still used.
 */
export function agentsMdPlugin(options: AgentsMdPluginOptions): ReviewPlugin {
  let gathered: Gathered = { findings: [], root: null, template: null }
  return {
    name: "agents-md",
    async bootstrap({ log, plan, signal }) {
      const [findings, root, template] = await Promise.allSettled([
        checkChangedFiles(plan, options.change, log),
        options.readTrustedFile("AGENTS.md"),
        options.templateUrl
          ? fetchTemplate(options.templateUrl, { ...options.template, signal })
          : Promise.resolve(null),
      ])
      if (findings.status === "rejected")
        log.warn({ err: findings.reason }, "AGENTS.md checks failed; no code findings")
      if (root.status === "rejected")
        log.warn({ err: root.reason }, "cannot read AGENTS.md from the target branch; not injected")
      gathered = {
        findings: findings.status === "fulfilled" ? findings.value : [],
        root: root.status === "fulfilled" && root.value !== null && root.value.trim() !== "" ? root.value : null,
        template: template.status === "fulfilled" ? template.value : null,
      }
      log.debug(
        { findings: gathered.findings.length, root: gathered.root !== null, template: gathered.template !== null },
        "AGENTS.md inputs gathered",
      )
      if (template.status === "rejected") {
        // The reason is in the message already; as a `cause` too, the log would print it twice.
        throw new Error(`AGENTS.md template ${shownUrl(options.templateUrl!)} not used: ${describe(template.reason)}`)
      }
    },
    async configure(context) {
      const { findings, root, template } = gathered
      for (const finding of findings) context.addFinding(finding)
      if (root !== null) context.injectPrompt("*", repositorySection(root))
      if (template !== null) context.injectPrompt("*", templateSection(template))
      const planned = new Set(context.plan.agents.map((agent) => agent.name))
      if (planned.has(reviewerName)) {
        context.injectPrompt(
          reviewerName,
          mechanicsSection(context.plan, root === null ? null : { lines: lineCount(root) }),
        )
        if (findings.length > 0) context.injectPrompt(reviewerName, codeFindingsForReviewer(findings))
      }
      if (findings.length > 0 && planned.has(coordinatorName))
        context.injectPrompt(coordinatorName, codeFindingsForCoordinator(findings))
    },
  }
}

/**
 * Runs the checks on every AGENTS.md / CLAUDE.md the change adds or modifies, on its whole text at
 * the head. Without the head text (a bare patch), an added file is rebuilt from its diff, which then
 * holds all of it; a modified file is skipped, since its unchanged lines are unknown.
 */
export async function checkChangedFiles(
  plan: Pick<PlanView, "files">,
  change: AgentsMdPluginOptions["change"],
  log: Logger,
): Promise<Finding[]> {
  const targets = plan.files.filter((file) => isAgentsFile(file.path) && file.status !== "deleted")
  if (targets.length === 0) return []
  // Loaded only for a change that edits an AGENTS.md: planning every other change never needs them.
  const { checkAgentsMd } = await import("./checks")
  const findings: Finding[] = []
  let parsed: ReturnType<typeof parseDiff> | null = null
  for (const target of targets) {
    let text = change.readHeadFile ? await change.readHeadFile(target.path) : null
    if (text === null && target.status === "added") {
      parsed ??= parseDiff(change.diff)
      text = addedText(parsed.files.find((file) => file.path === target.path))
    }
    if (text === null) {
      log.debug({ path: target.path, status: target.status }, "AGENTS.md content at the head is unknown; not checked")
      continue
    }
    findings.push(...checkAgentsMd(target.path, text))
  }
  return findings
}

function addedText(file: ReturnType<typeof parseDiff>["files"][number] | undefined): string | null {
  if (!file || file.binary || file.status !== "added") return null
  const lines = file.hunks.flatMap((hunk) => hunk.lines.filter((line) => line.kind === "add").map((line) => line.text))
  return lines.length === 0 ? null : `${lines.join("\n")}\n`
}

function lineCount(text: string): number {
  return text.replace(/\n$/, "").split("\n").length
}

// A template URL may carry a token (query string, user info): warnings show only where it points.
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "(invalid URL)"
  }
}
