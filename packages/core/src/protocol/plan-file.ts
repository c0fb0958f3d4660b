import * as z from "zod"
import { CodeFinding } from "../model/finding"
import { ModelId } from "../model/model-id"
import { Tier } from "../plan/risk"
import { workFiles } from "./names"

/** One file of the change as plan.json records it (the `plan --json` entry). */
export const PlanFileEntry = z.object({
  path: z.string(),
  oldPath: z.string(),
  status: z.enum(["added", "modified", "deleted", "renamed", "copied"]),
  binary: z.boolean(),
  added: z.number().int().nonnegative(),
  removed: z.number().int().nonnegative(),
  noise: z.string().nullable(),
  securitySensitive: z.boolean(),
  patchFile: z.string().nullable(),
})
export type PlanFileEntry = z.infer<typeof PlanFileEntry>

/** An agent of the plan with its final model chain. */
export const PlanFileAgent = z.object({
  name: z.string().min(1),
  role: z.enum(["coordinator", "reviewer"]),
  models: z.array(ModelId).min(1),
  timeoutMinutes: z.number().positive().nullable(),
  reason: z.string(),
})
export type PlanFileAgent = z.infer<typeof PlanFileAgent>

/** The review's timeouts and concurrency, as the runtime applies them (fractions allowed: tests use small ones). */
export const PlanFileLimits = z.object({
  concurrency: z.number().int().min(1),
  overallMinutes: z.number().positive(),
  idleSeconds: z.number().positive(),
  pollSeconds: z.number().positive(),
  retryBudgetMinutes: z.number().nonnegative(),
  breakerFailures: z.number().int().min(1),
  breakerCooldownMinutes: z.number().positive(),
  coordinatorMinutes: z.number().positive(),
  heartbeatSeconds: z.number().positive(),
  descriptionBytes: z.number().int().positive(),
})
export type PlanFileLimits = z.infer<typeof PlanFileLimits>

/** Where merge request text or the diff tried to steer the reviewers. */
export const InjectionRecord = z.object({
  field: z.string(),
  kind: z.enum(["boundary-tag", "instruction"]),
  tags: z.array(z.string()),
  excerpt: z.string(),
})

/** Something the agents were shown only in part. */
export const ClipRecord = z.object({ what: z.string(), detail: z.string() })

/**
 * `<workDir>/plan.json`: the `plan --json` document (docs/contracts.md) plus what the later stages
 * need. Written once by the CLI through {@link planFileText}; every reader goes through
 * {@link parsePlanFile} (or a `pick` of this schema), so a renamed field fails loudly, never reads as 0.
 */
export const PlanFile = z.object({
  tier: Tier,
  reasons: z.array(z.string()),
  totals: z.object({
    files: z.number().int().nonnegative(),
    added: z.number().int().nonnegative(),
    removed: z.number().int().nonnegative(),
  }),
  files: z.array(PlanFileEntry),
  agents: z.array(PlanFileAgent),
  workDir: z.string().min(1),
  configFile: z.string().min(1),
  promptFile: z.string().min(1),
  contextFile: z.string().min(1),
  limits: PlanFileLimits,
  injection: z.array(InjectionRecord),
  clipped: z.array(ClipRecord),
  /** Every changed file, when the prompts list only some (`changed-files.xml`); else null. */
  fileListFile: z.string().nullable(),
  warnings: z.array(z.string()),
  /** Findings plugins established by code during planning. */
  findings: z.array(CodeFinding),
  /** Reviewers the risk tier called for that the spend cap left out, with why: they count as not finished. */
  skipped: z.array(z.object({ name: z.string().min(1), reason: z.string() })),
})
export type PlanFile = z.infer<typeof PlanFile>

/** The plan.json bytes for a plan; throws (a bug of ours) when it does not match the schema. */
export function planFileText(plan: PlanFile): string {
  // Thousands of file entries are slow to check with zod. An entry with exactly the schema's keys, in
  // its order, and valid values is what parsing it returns, so only the rest goes through zod; any
  // other entry sends the whole plan there, as before.
  if (!plan.files.every(isPlainEntry)) return JSON.stringify(PlanFile.parse(plan), null, 2) + "\n"
  const parsed = PlanFile.parse({ ...plan, files: [] })
  parsed.files = plan.files
  return JSON.stringify(parsed, null, 2) + "\n"
}

const entryKeys = Object.keys(PlanFileEntry.shape)
const statuses = new Set<unknown>(PlanFileEntry.shape.status.options)

function isPlainEntry(entry: PlanFileEntry): boolean {
  if (typeof entry !== "object" || entry === null || Object.getPrototypeOf(entry) !== Object.prototype) return false
  let index = 0
  for (const key in entry) if (key !== entryKeys[index++]) return false
  if (index !== entryKeys.length) return false
  const count = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0
  const text = (value: unknown) => typeof value === "string"
  return (
    text(entry.path) &&
    text(entry.oldPath) &&
    statuses.has(entry.status) &&
    typeof entry.binary === "boolean" &&
    count(entry.added) &&
    count(entry.removed) &&
    (entry.noise === null || text(entry.noise)) &&
    typeof entry.securitySensitive === "boolean" &&
    (entry.patchFile === null || text(entry.patchFile))
  )
}

/** A work dir file read and checked, or why not; never throws. */
export type ProtocolRead<T> = { ok: true; value: T } | { ok: false; error: string }

/** Reads plan.json text (or any `pick` of the schema: a reader checks only what it uses). */
export function parsePlanFile<T = PlanFile>(
  text: string,
  schema: z.ZodType<T> = PlanFile as unknown as z.ZodType<T>,
): ProtocolRead<T> {
  return parseProtocolJson(text, schema, workFiles.plan)
}

/** JSON text checked against a protocol schema, with the failing key paths in the error. */
export function parseProtocolJson<T>(text: string, schema: z.ZodType<T>, name: string): ProtocolRead<T> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { ok: false, error: `${name} is not JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
    return { ok: false, error: `${name} does not match this version of opencode-reviewer: ${issues.join("; ")}` }
  }
  return { ok: true, value: parsed.data }
}
