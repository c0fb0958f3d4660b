import { readFile } from "node:fs/promises"
import { join } from "node:path"
import * as z from "zod"
import { defaults } from "@opencode-reviewer/core/config"

const ModelId = z.string().regex(/^[^/\s]+\/\S+$/, "must be <provider>/<model>")

/** One agent of plan.json as the runtime reads it. */
export const RuntimeAgent = z.object({
  name: z.string().min(1),
  role: z.enum(["coordinator", "reviewer"]),
  models: z.array(ModelId).min(1),
  timeoutMinutes: z.number().positive().nullable().optional(),
  reason: z.string().optional(),
})
export type RuntimeAgent = z.infer<typeof RuntimeAgent>

/** The limits of plan.json; fractions allowed (tests use small ones); missing keys take the defaults. */
export const RuntimeLimits = z.object({
  concurrency: z.number().int().min(1).default(defaults.limits.concurrency),
  overallMinutes: z.number().positive().default(defaults.limits.overallMinutes),
  idleSeconds: z.number().positive().default(defaults.limits.idleSeconds),
  pollSeconds: z.number().positive().default(defaults.limits.pollSeconds),
  retryBudgetMinutes: z.number().nonnegative().default(defaults.limits.retryBudgetMinutes),
  breakerFailures: z.number().int().min(1).default(defaults.limits.breakerFailures),
  breakerCooldownMinutes: z.number().positive().default(defaults.limits.breakerCooldownMinutes),
})
export type RuntimeLimits = z.infer<typeof RuntimeLimits>

/** The part of the work dir's plan.json (core's `planRecord`) the runtime plugin needs. */
export const RuntimePlan = z.object({
  agents: z.array(RuntimeAgent),
  limits: RuntimeLimits.default(RuntimeLimits.parse({})),
  contextFile: z.string().min(1).optional(),
  workDir: z.string().min(1).optional(),
})
export type RuntimePlan = z.infer<typeof RuntimePlan>

/** plan.json read and validated, or why not. */
export type PlanRead = { ok: true; plan: RuntimePlan; file: string } | { ok: false; error: string; file: string | null }

/** Default per-reviewer timeout when plan.json has none. */
export const defaultTimeoutMinutes = defaults.timeoutMinutes

/** Reads `<workDir>/plan.json`. Never throws: the tool reports a bad plan as its output. */
export async function readPlanFile(workDir: string | null | undefined): Promise<PlanRead> {
  if (!workDir) {
    return { ok: false, file: null, error: "OPENCODE_REVIEWER_WORK_DIR is not set: run the review through opencode-reviewer, which writes plan.json and sets it" }
  }
  const file = join(workDir, "plan.json")
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
  return parsePlan(json, file)
}

/** Validates parsed plan.json content. */
export function parsePlan(value: unknown, file: string): PlanRead {
  const parsed = RuntimePlan.safeParse(value)
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`)
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

export * as PlanFile from "./plan-file"
