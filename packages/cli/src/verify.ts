import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import {
  applyVerdict,
  checkedEvidence,
  childEnv,
  defaults,
  findingsToVerify,
  missingProviderKeys,
  type Review,
  readVerdicts,
  type UsageItem,
  verifierPrompt,
  workDirVariable,
} from "@opencode-reviewer/core"
import { findOpencodeBinary, opencodeHomeEnv, prepareOpencodeHome } from "@opencode-reviewer/opencode/binary"
import { startPromptServer } from "@opencode-reviewer/opencode/prompt-server"
import type { Io } from "./io"
import type { Prepared } from "./prepare"

/** The review after verification (each checked finding carries its `verification`), its cost and notes. */
export interface Verified {
  review: Review
  usage: UsageItem[]
  notes: string[]
}

/**
 * Verified blockers (config `verify`, judge/verify.ts): the findings at or above the level go to
 * one verifier session, a different top-tier model than the coordinator's when the config has
 * one, with the reviewers' read-only tools in the checkout and the work dir (the patches). A
 * finding it confirms with evidence from its own code that checks out stays; one it disputes with
 * a reason is lowered one severity, with a note. Anything else lowers nothing: when the verifier
 * cannot run (no key, OpenCode fails), is cut off, answers something other than its verdicts or
 * says nothing about a finding, the finding stands at its severity, marked unverified with why.
 */
export async function verifyFindings(prepared: Prepared, review: Review, io: Io): Promise<Verified> {
  const { plan, config } = prepared
  const picked = findingsToVerify(review.findings, config.verify)
  if (picked.length === 0) return { review, usage: [], notes: [] }
  const indexes = picked.slice(0, defaults.verifyMax)
  const notes: string[] = []
  const findings = [...review.findings]
  // Findings the verifier never judged stand as they are, and say why.
  const standUnverified = (which: readonly number[], reason: string, model = "none") => {
    for (const index of which) findings[index] = applyVerdict(findings[index]!, null, [], model, reason).finding
  }
  if (picked.length > indexes.length) {
    standUnverified(picked.slice(indexes.length), `at most ${defaults.verifyMax} findings are verified per review`)
    notes.push(`${picked.length - indexes.length} findings were not verified: at most ${defaults.verifyMax} are`)
  }
  const unchanged = (reason: string, model?: string): Verified => {
    standUnverified(indexes, reason, model)
    notes.push(`the verifier could not run (${reason}); its findings stand unverified`)
    return { review: { ...review, findings }, usage: [], notes }
  }

  const top = config.models.top
  const coordinatorModel = plan.agents.find((agent) => agent.role === "coordinator")?.models[0]
  const model = top.find((candidate) => candidate !== coordinatorModel) ?? top[0] ?? coordinatorModel
  const reviewer = plan.agents.find((agent) => agent.role === "reviewer")
  const permission = reviewer ? plan.assembly.config.agent?.[reviewer.name]?.permission : undefined
  if (!model || !permission) return unchanged("no model or reviewer permissions planned")

  const opencodeConfig = {
    provider: plan.assembly.config.provider ?? {},
    ...(plan.assembly.config.plugin ? { plugin: plan.assembly.config.plugin } : {}),
  }
  const missing = missingProviderKeys({
    config: opencodeConfig,
    agents: [{ name: "verifier", models: [model] }],
    env: io.env,
    authenticated: [],
  })
  if (missing.length > 0) return unchanged(`no key for ${model}`, model)

  io.stderr(`review: verifying ${indexes.length} finding${indexes.length === 1 ? "" : "s"} on ${model}\n`)
  const home = await prepareOpencodeHome(join(prepared.outputDir, "opencode-home-verifier"))
  const { env } = childEnv({
    parent: io.env,
    config: opencodeConfig,
    models: [model],
    // The runtime plugin redacts credentials from every tool result, the verifier's reads included.
    extra: { ...plan.assembly.env, ...opencodeHomeEnv(home), [workDirVariable]: plan.workDir },
  })
  const patches = new Map(plan.files.flatMap((entry) => (entry.patchFile ? [[entry.file.path, entry.patchFile]] : [])))
  const prompt = verifierPrompt(
    indexes.map((index) => {
      const finding = review.findings[index]!
      const patch = patches.get(finding.file)
      return { finding, patchFile: patch ? join(plan.workDir, patch) : null }
    }),
    prepared.repoDir,
  )
  let answer: Awaited<ReturnType<Awaited<ReturnType<typeof startPromptServer>>["prompt"]>>
  try {
    const server = await startPromptServer({
      binary: findOpencodeBinary(io.env, import.meta.url),
      cwd: prepared.repoDir,
      env,
      config: opencodeConfig,
      permission: permission as Record<string, unknown>,
    })
    try {
      answer = await server.prompt({
        model,
        ...prompt,
        signal: AbortSignal.timeout(config.limits.coordinatorMinutes * 60_000),
      })
    } finally {
      await server.close()
    }
  } catch (error) {
    return unchanged(error instanceof Error ? (error.message.split("\n")[0] ?? error.name) : String(error), model)
  }

  const { verdicts, unusable } = readVerdicts(answer, indexes.length)
  if (unusable) notes.push(`verifier: ${unusable}; its findings stand unverified, at their severity`)
  for (const [position, index] of indexes.entries()) {
    const finding = findings[index]!
    const verdict = verdicts[position] ?? null
    const evidence = checkedEvidence(verdict?.evidence ?? [], finding, (path) => readCode(prepared, path))
    const outcome = applyVerdict(finding, verdict, evidence.accepted, model, unusable)
    findings[index] = outcome.finding
    const where = `"${finding.title}" (${finding.file}${finding.line ? `:${finding.line}` : ""})`
    for (const ignored of evidence.ignored) notes.push(`verifier: evidence for ${where} ignored: ${ignored}`)
    const { status, reason, originalSeverity } = outcome.verification
    if (status === "not_confirmed")
      notes.push(
        `verifier: ${where} was disputed (${reason}): ${originalSeverity} lowered to ${outcome.finding.severity}`,
      )
    else if (status === "unverified" && !unusable)
      notes.push(`verifier: ${where} is unverified (${reason}); it stands as ${originalSeverity}`)
  }
  return {
    review: { ...review, findings },
    usage: [{ agent: "verifier", model, tokens: answer.tokens, costUsd: answer.costUsd }],
    notes,
  }
}

// The code the evidence quotes: the checkout's file, else the file at the head as the change has it.
function readCode(prepared: Prepared, path: string): string | null {
  const inRepo = resolve(prepared.repoDir, path)
  if (!inRepo.startsWith(resolve(prepared.repoDir))) return null
  try {
    return readFileSync(inRepo, "utf8")
  } catch {
    return newSideOf(prepared, path)
  }
}

// Without a checkout (a bare patch, the eval's cases), the new side of the file as the patch shows
// it: its added and context lines at their line numbers, blank elsewhere.
function newSideOf(prepared: Prepared, path: string): string | null {
  const file = prepared.plan.files.find((entry) => entry.file.path === path)?.file
  if (!file) return null
  const lines: string[] = []
  for (const hunk of file.hunks)
    for (const line of hunk.lines)
      if (line.kind !== "remove" && line.newLine !== null) lines[line.newLine - 1] = line.text
  return Array.from(lines, (line) => line ?? "").join("\n")
}
