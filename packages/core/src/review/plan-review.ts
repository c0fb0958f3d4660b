import { chmod, lstat, mkdir, readdir, rm, writeFile } from "node:fs/promises"
import { basename, join, relative, resolve } from "node:path"
import { type Assembly, assembleConfig } from "../assemble/assemble"
import { contextWarning } from "../assemble/context-window"
import type { Config, Limits } from "../config/config"
import type { CodeFinding } from "../model/finding"
import type { Logger } from "../model/logger"
import { coordinatorName, reviewers as reviewerSpecs, selectAgents } from "../plan/agents"
import { assignPatchFiles, type DiffFile, parseDiff, patchLength, writePatchFiles } from "../plan/diff"
import { compileGlobs } from "../plan/glob"
import { createNoiseFilter, generatedInDiff, headFromDiff, isGenerated, type NoiseReason } from "../plan/noise"
import { assessRisk, type Tier } from "../plan/risk"
import { readSignals } from "../plan/signals"
import { capSpend } from "../plan/spend"
import { runLifecycle } from "../plugin/lifecycle"
import type { PlanView, ReviewPlugin } from "../plugin/plugin"
import { detectDiffInstructions } from "../prompt/injection"
import { buildPrompts, type Clip, clipLongLines, fileListName, type InjectionAttempt } from "../prompt/prompt"
import type { PromptLibrary } from "../prompt/prompt-files"
import { workFiles } from "../protocol/names"
import { type PlanFile, planFileText } from "../protocol/plan-file"
import type { Change } from "./change"

/** Everything planning needs; nothing here is read from the environment. */
export interface PlanOptions {
  change: Change
  config: Config
  plugins: readonly ReviewPlugin[]
  prompts: PromptLibrary
  repoDir: string
  workDir: string
  log: Logger
  signal?: AbortSignal
  /**
   * Called once the plan is known and the work dir exists, before its files are written, so the
   * plan can be shown while they are; planReview returns only when every file is complete.
   */
  onPlanned?: (plan: ReviewPlan) => void | Promise<void>
  /** The clock for today's date in the coordinator's input (default: the system clock). */
  now?: () => Date
}

/** A diff file with the planner's verdicts. */
export interface PlannedFile {
  file: DiffFile
  noise: NoiseReason | null
  securitySensitive: boolean
  /** Relative to the work dir; null for noise and binary files (nothing to read). */
  patchFile: string | null
}

/** An agent of the plan with its final model chain. */
export interface PlanAgent {
  name: string
  role: "coordinator" | "reviewer"
  models: string[]
  timeoutMinutes: number | null
  reason: string
}

/** The result of planning: tier, agents, the assembled config and the files written to the work dir. */
export interface ReviewPlan {
  tier: Tier
  reasons: string[]
  totals: { files: number; added: number; removed: number }
  files: PlannedFile[]
  agents: PlanAgent[]
  workDir: string
  configFile: string
  promptFile: string
  contextFile: string
  planFile: string
  assembly: Assembly
  /** Suspected prompt-injection attempts: in the MR's text (from the prompts) and in added diff lines. */
  injection: InjectionAttempt[]
  /**
   * What the agents see only in part: a description over `limits.descriptionBytes`, a file list
   * longer than the prompts carry (all in `fileListFile`), lines longer than the reviewers' read tool shows.
   */
  clipped: Clip[]
  /** The work dir file listing every changed and filtered file, or null when the prompts list them all. */
  fileListFile: string | null
  /** Things the user should know that did not stop planning (parse problems, plugin failures). */
  warnings: string[]
  /** Findings plugins established by code (not by a model); merged into review.json by the CLI. */
  findings: CodeFinding[]
  /** Reviewers the tier called for that the spend cap left out, with why: the review cannot be complete without them. */
  skipped: { name: string; reason: string }[]
  /** Timeouts and concurrency for the later stages (from config). */
  limits: Limits
}

/**
 * Plans a review: parses and filters the diff, assigns the tier and agents, runs the plugin
 * lifecycle, and writes patches, shared context, coordinator prompt and opencode.json to the work dir.
 */
export async function planReview(options: PlanOptions): Promise<ReviewPlan> {
  const { change, config, log } = options
  const workDir = resolve(options.workDir)
  const started = performance.now()
  const phase = (name: string) =>
    log.debug({ phase: name, ms: Math.round(performance.now() - started) }, "plan phase done")
  const parsed = parseDiff(change.diff)
  phase("parse")
  const warnings = parsed.problems.map((problem) => `diff: ${problem}`)

  const planned = await classifyFiles(parsed.files, change, config)
  const assessed = assessRisk(
    planned.map(({ file, noise, securitySensitive }) => ({
      path: file.path,
      added: file.added,
      removed: file.removed,
      noise,
      securitySensitive,
    })),
    config.tiers,
  )
  // `/review full` from a person allowed to ask: every reviewer the full tier schedules (the spend cap still applies).
  const assessment =
    change.request?.kind === "full" && assessed.tier !== "full"
      ? {
          ...assessed,
          tier: "full" as const,
          reasons: [`${change.request.by} asked for the full review`, ...assessed.reasons],
        }
      : assessed
  phase("classify")
  const signals = readSignals(planned, { security: assessment.tier === "lite" })
  // What reviewers will read, in tokens: the patches of reviewed files (the shared context is small).
  const changeTokens = Math.ceil(
    planned.reduce((sum, entry) => sum + (entry.noise === null ? patchLength(entry.file) : 0), 0) / 4,
  )
  const spend = capSpend(assessment.tier, (tier) => selectAgents(tier, signals, config), changeTokens, config)
  const selected = spend.agents
  const skipped =
    spend.tier === assessment.tier
      ? []
      : selectAgents(assessment.tier, signals, config).flatMap((agent) =>
          agent.role === "reviewer" && !selected.some((kept) => kept.name === agent.name)
            ? [{ name: agent.name, reason: `skipped by the spend cap (maxCostUsd ${config.maxCostUsd} USD)` }]
            : [],
        )
  if (spend.reason) {
    assessment.reasons.push(spend.reason)
    warnings.push(spend.reason)
  }

  const view: PlanView = Object.freeze({
    repoDir: options.repoDir,
    workDir,
    tier: assessment.tier,
    files: Object.freeze(
      planned.map(({ file, noise }) => Object.freeze({ path: file.path, status: file.status, noise })),
    ),
    agents: Object.freeze(
      selected.map(({ name, role, models }) => Object.freeze({ name, role, models: Object.freeze([...models]) })),
    ),
    diff: Object.freeze(planned.map(({ file }) => Object.freeze(file))),
  })

  const lifecycle = await runLifecycle({
    plugins: options.plugins,
    plan: view,
    log,
    ...(options.signal ? { signal: options.signal } : {}),
    seed(store) {
      for (const [id, block] of Object.entries(config.provider))
        store.providers.set(id, { plugin: "core", block: structuredClone(block) })
      for (const agent of selected) {
        const description =
          agent.role === "coordinator"
            ? "Review coordinator: runs the specialists, judges their findings, submits one review"
            : (reviewerSpecs.find((spec) => spec.name === agent.name)?.description ?? agent.name)
        const prompt =
          agent.role === "coordinator" ? options.prompts.coordinator : options.prompts.reviewers[agent.name]!
        store.agents.set(agent.name, { description, prompt, models: agent.models, plugin: "core", role: agent.role })
      }
    },
    assemble: (store) => assembleConfig(store, { workDir, sharedReviewerPrompt: options.prompts.shared }),
  })
  warnings.push(...lifecycle.warnings, ...lifecycle.refused)
  phase("lifecycle")

  const agents: PlanAgent[] = Object.entries(lifecycle.models).map(([name, models]) => {
    const known = selected.find((agent) => agent.name === name)
    return {
      name,
      role: name === coordinatorName ? "coordinator" : "reviewer",
      models,
      timeoutMinutes: known?.timeoutMinutes ?? (name === coordinatorName ? null : 5),
      reason: known?.reason ?? "added by a plugin",
    }
  })

  const reviewed = planned.filter((entry) => entry.noise === null)
  const prompts = buildPrompts({
    repoDir: options.repoDir,
    today: (options.now?.() ?? new Date()).toISOString().slice(0, 10),
    workDir,
    contextFile: join(workDir, "shared-mr-context.txt"),
    tier: assessment.tier,
    reasons: assessment.reasons,
    mergeRequest: change.mergeRequest,
    comments: change.comments,
    files: reviewed.map(({ file, securitySensitive, patchFile }) => ({
      ...fileFacts(file),
      securitySensitive,
      patchFile,
    })),
    filtered: planned.flatMap(({ file, noise }) => (noise === null ? [] : [{ path: file.path, reason: noise }])),
    reviewers: agents.filter((agent) => agent.role === "reviewer").map(({ name, reason }) => ({ name, reason })),
    previousReview: change.previousReview,
    customInstructions: change.customInstructions,
    limits: { descriptionBytes: config.limits.descriptionBytes },
  })
  // Said in plan.json and review.json's notes (not as warnings: nothing failed); the patches stay byte-exact.
  const clipped = [...prompts.clipped, ...clipLongLines(reviewed.map(({ file }) => file))]
  phase("prompts")
  const coordinator = agents.find((agent) => agent.role === "coordinator")
  const tooBig = coordinator
    ? contextWarning(
        lifecycle.config,
        coordinator.models[0]!,
        lifecycle.config.agent[coordinator.name]?.prompt ?? "",
        prompts.coordinator,
      )
    : null
  if (tooBig) warnings.push(tooBig)
  // The diff's added lines of every reviewed file: plain-language instructions only (code that
  // handles our XML legitimately contains boundary tags, and the diff never enters a prompt).
  const injection = [...prompts.injection, ...detectDiffInstructions(reviewed.map(({ file }) => file))]
  if (injection.length > 0) {
    log.warn(
      { injection: injection.map(({ field, kind, excerpt }) => ({ field, kind, excerpt })) },
      "suspected prompt injection in the merge request",
    )
  }

  const files = {
    configFile: join(workDir, "opencode.json"),
    promptFile: join(workDir, "coordinator-prompt.xml"),
    contextFile: join(workDir, "shared-mr-context.txt"),
    planFile: join(workDir, workFiles.plan),
  }
  await prepareWorkDir(workDir, options.repoDir)
  phase("prepare work dir")
  const plan: ReviewPlan = {
    tier: assessment.tier,
    reasons: assessment.reasons,
    totals: assessment.totals,
    files: planned,
    agents,
    workDir,
    ...files,
    assembly: { config: lifecycle.config, env: lifecycle.env, models: lifecycle.models, refused: lifecycle.refused },
    injection,
    clipped,
    fileListFile: prompts.fileList === null ? null : join(workDir, fileListName),
    warnings,
    findings: lifecycle.findings,
    skipped,
    limits: config.limits,
  }
  await options.onPlanned?.(plan)
  await writePatches(plan)
  phase("write patches")
  await writeFile(files.promptFile, prompts.coordinator)
  await writeFile(files.contextFile, prompts.sharedContext)
  // An earlier plan's full file list must not linger either.
  if (plan.fileListFile === null) await rm(join(workDir, fileListName), { force: true })
  else await writeFile(plan.fileListFile, prompts.fileList!)
  // opencode.json may carry provider options; keep it private to the user running the review.
  await writeFile(files.configFile, JSON.stringify(lifecycle.config, null, 2) + "\n", { mode: 0o600 })
  await chmod(files.configFile, 0o600)
  await writeFile(files.planFile, planFileText(planRecord(plan)))
  phase("write files")
  return plan
}

// What the prompts and `plan --json` say of a file, in this key order.
function fileFacts(file: DiffFile) {
  const { path, oldPath, status, binary, added, removed } = file
  return { path, oldPath, status, binary, added, removed }
}

/** The `plan --json` document, exactly as docs/contracts.md#plan---json specifies it. */
export function planJson(plan: ReviewPlan) {
  return {
    tier: plan.tier,
    reasons: plan.reasons,
    totals: plan.totals,
    files: plan.files.map(({ file, noise, securitySensitive, patchFile }) => ({
      ...fileFacts(file),
      noise,
      securitySensitive,
      patchFile,
    })),
    agents: plan.agents.map(({ name, role, models }) => ({ name, role, model: models[0]! })),
    workDir: plan.workDir,
    configFile: plan.configFile,
    promptFile: plan.promptFile,
    contextFile: plan.contextFile,
  }
}

// plan.json in the work dir: what later stages (the runtime plugin inside OpenCode) read. Not the
// CLI's output contract, so it may carry more than planJson; its schema is protocol/plan-file.ts.
function planRecord(plan: ReviewPlan): PlanFile {
  return {
    ...planJson(plan),
    agents: plan.agents,
    limits: plan.limits,
    injection: plan.injection,
    clipped: plan.clipped,
    fileListFile: plan.fileListFile,
    warnings: plan.warnings,
    findings: plan.findings,
    skipped: plan.skipped,
  }
}

async function classifyFiles(files: DiffFile[], change: Change, config: Config): Promise<PlannedFile[]> {
  const noise = createNoiseFilter(config.noise)
  const sensitive = compileGlobs(config.securityPaths, { caseInsensitive: true })
  const byName = files.map((file) => noise.classify(file, null))
  // A file's first lines matter only when its name says nothing: are they generated code, as the
  // diff shows them (null: it does not, and they are read)?
  const generated = files.map((file, index) =>
    byName[index] !== null ? undefined : file.binary ? false : generatedInDiff(file),
  )
  const unknown = files.flatMap((file, index) => (generated[index] === null ? [file.path] : []))
  const read = unknown.length > 0 ? await change.readHeads(unknown) : new Map<string, string>()
  const patchNames = assignPatchFiles(files.map((file) => file.path))
  // Classified by name as nothing, a file is noise by its head only when the head is generated code
  // (and the filter then still keeps what its keep rules keep).
  const byHead = (file: DiffFile, index: number) => {
    if (generated[index] === true) return noise.classify(file, headFromDiff(file))
    const head = generated[index] === null ? read.get(file.path) : undefined
    return head !== undefined && isGenerated(head) ? noise.classify(file, head) : null
  }
  return files.map((file, index) => {
    const reason = byName[index] ?? byHead(file, index)
    const securitySensitive =
      sensitive.match(file.path) !== null || (file.oldPath !== file.path && sensitive.match(file.oldPath) !== null)
    const patchFile = reason === null && !file.binary ? (patchNames.get(file.path) ?? null) : null
    return { file, noise: reason, securitySensitive, patchFile }
  })
}

async function prepareWorkDir(workDir: string, repoDir: string): Promise<void> {
  await mkdir(workDir, { recursive: true })
  const diffDir = join(workDir, "diff")
  const existing = await lstat(diffDir).catch(() => null)
  if (existing !== null && !existing.isDirectory()) await rm(diffDir, { recursive: true, force: true })
  await mkdir(diffDir, { recursive: true })
  // Finished reviewers of an earlier plan (or files a checkout planted there) are never this plan's.
  await rm(join(workDir, workFiles.reviewerResults), { recursive: true, force: true })
  const inside = !relative(resolve(repoDir), workDir).startsWith("..")
  if (inside) await writeFile(join(workDir, ".gitignore"), "*\n")
}

// Patches from an earlier plan must not linger beside this one's. The files this plan writes again
// are rewritten in place: deleting thousands of files and creating them anew costs a disk far more.
async function writePatches(plan: ReviewPlan): Promise<void> {
  const patches = plan.files.flatMap(({ file, patchFile }) => (patchFile === null ? [] : [{ file, patchFile }]))
  const diffDir = join(plan.workDir, "diff")
  const kept = new Set(patches.map(({ patchFile }) => basename(patchFile)))
  const stale = (await readdir(diffDir, { withFileTypes: true })).filter(
    (entry) => !(entry.isFile() && kept.has(entry.name)),
  )
  await Promise.all(stale.map((entry) => rm(join(diffDir, entry.name), { recursive: true, force: true })))
  await writePatchFiles(plan.workDir, patches)
}
