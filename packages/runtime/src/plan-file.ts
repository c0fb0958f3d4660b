import { createHash } from "node:crypto"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { defaults } from "@opencode-reviewer/core/config/config"
import { workDirVariable, workFiles } from "@opencode-reviewer/core/protocol/names"
import { PlanFile, PlanFileAgent, PlanFileLimits } from "@opencode-reviewer/core/protocol/plan-file"
import type * as z from "zod"

/** One agent of plan.json as the runtime reads it (the protocol's schema). */
export const RuntimeAgent = PlanFileAgent
export type RuntimeAgent = PlanFileAgent

/** The limits of plan.json (the protocol's schema: every key is written by the CLI). */
export const RuntimeLimits = PlanFileLimits
export type RuntimeLimits = PlanFileLimits

/** The part of the work dir's plan.json the runtime plugin needs, picked from the protocol's schema. */
export const RuntimePlan = PlanFile.pick({ agents: true, limits: true, contextFile: true, workDir: true })
export type RuntimePlan = z.infer<typeof RuntimePlan>

/** plan.json content validated, or why not. */
export type PlanParse =
  | { ok: true; plan: RuntimePlan; file: string }
  | { ok: false; error: string; file: string | null }

/**
 * plan.json read and validated, or why not; `digest` (SHA-256 of its bytes) tells this plan from
 * any other (results.ts keys finished reviewers by it).
 */
export type PlanRead = (Extract<PlanParse, { ok: true }> & { digest: string }) | Extract<PlanParse, { ok: false }>

/** Default per-reviewer timeout when plan.json has none. */
export const defaultTimeoutMinutes = defaults.timeoutMinutes

/** Reads `<workDir>/plan.json`. Never throws: the tool reports a bad plan as its output. */
export async function readPlanFile(workDir: string | null | undefined): Promise<PlanRead> {
  if (!workDir) {
    return {
      ok: false,
      file: null,
      error: `${workDirVariable} is not set: run the review through opencode-reviewer, which writes ${workFiles.plan} and sets it`,
    }
  }
  const file = join(workDir, workFiles.plan)
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch (cause) {
    return { ok: false, file, error: `cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}` }
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return { ok: false, file, error: `${file} is not valid JSON: ${(cause as Error).message}` }
  }
  const parsed = parsePlan(json, file)
  return parsed.ok ? { ...parsed, digest: createHash("sha256").update(text).digest("hex") } : parsed
}

/** Validates parsed plan.json content. */
export function parsePlan(value: unknown, file: string): PlanParse {
  const parsed = RuntimePlan.safeParse(value)
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`,
    )
    return { ok: false, file, error: `${file} is invalid: ${issues.slice(0, 5).join("; ")}` }
  }
  return { ok: true, file, plan: parsed.data }
}

/** The limits in milliseconds, as the scheduler and breakers use them. */
export interface LimitsMs {
  concurrency: number
  overallMs: number
  idleMs: number
  pollMs: number
  retryBudgetMs: number
  breakerFailures: number
  breakerCooldownMs: number
}

/** Converts plan.json's minutes and seconds into milliseconds. */
export function limitsInMs(limits: RuntimeLimits): LimitsMs {
  return {
    concurrency: limits.concurrency,
    overallMs: limits.overallMinutes * 60_000,
    idleMs: limits.idleSeconds * 1_000,
    pollMs: limits.pollSeconds * 1_000,
    retryBudgetMs: limits.retryBudgetMinutes * 60_000,
    breakerFailures: limits.breakerFailures,
    breakerCooldownMs: limits.breakerCooldownMinutes * 60_000,
  }
}
