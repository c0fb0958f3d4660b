import { modelIdSchema } from "@opencode-reviewer/core"
import * as z from "zod"

const ModelId = modelIdSchema("openai/gpt-5.4").describe("A model as <provider>/<model>.")

const AgentName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,63}$/, "must be an agent name (lowercase letters, digits, - or _)")
  .describe("An agent name as planned: review_coordinator, security, code-quality, ...")

const ProviderId = z
  .string()
  .regex(/^[A-Za-z0-9._-]+$/, "must be a provider id (the part of a model before the /)")
  .describe("A provider id: the part of a model id before the first /.")

/** What the document may say about one agent. */
export const ReviewerOverride = z
  .object({
    model: z
      .union([ModelId, z.array(ModelId).min(1, "needs at least one model")])
      .optional()
      .describe("The agent's model, or its primary then failback chain; replaces the chain it was planned with."),
    enabled: z
      .boolean()
      .optional()
      .describe("Reported, not applied: a planned agent cannot be added or removed after planning (see README)."),
  })
  .describe("Overrides for one agent.")
export type ReviewerOverride = z.infer<typeof ReviewerOverride>

/** The provider switch: `enabled: false` removes every model of that provider from every chain. */
export const ProviderSwitch = z
  .object({ enabled: z.boolean().describe("false drops this provider's models before a primary is chosen.") })
  .describe("Kill switch for one provider.")
export type ProviderSwitch = z.infer<typeof ProviderSwitch>

/** The remote reviewer-config document as the control plane serves it (every key optional). */
export const ReviewerConfigDocument = z
  .object({
    version: z
      .literal(1)
      .optional()
      .describe("Document format version; only 1 exists. Any other value makes the document ignored."),
    reviewers: z
      .record(AgentName, ReviewerOverride)
      .optional()
      .describe("Per-agent model assignments, keyed by agent name. Agents not planned for this job are ignored."),
    providers: z
      .record(ProviderId, ProviderSwitch)
      .optional()
      .describe("Provider switches keyed by provider id; providers not listed stay enabled."),
    failback: z
      .record(ModelId, z.array(ModelId))
      .optional()
      .describe("Failback overrides: in any chain, what follows this model is replaced by this list ([] = nothing)."),
  })
  .describe("opencode-reviewer remote reviewer config")
export type ReviewerConfigDocument = z.infer<typeof ReviewerConfigDocument>

/** A parsed document with warnings (unknown keys), or the reason it is unusable. */
export type DocumentResult =
  | { ok: true; document: ReviewerConfigDocument; warnings: string[] }
  | { ok: false; problems: string[] }

/** Validates a parsed JSON value as a document; unknown keys are dropped with a warning. Never throws. */
export function parseReviewerConfig(value: unknown): DocumentResult {
  const parsed = ReviewerConfigDocument.safeParse(value)
  if (!parsed.success) return { ok: false, problems: parsed.error.issues.map(formatIssue) }
  const warnings = unknownKeys(ReviewerConfigDocument, value, []).map((path) => `unknown key "${path}" is ignored`)
  return { ok: true, document: parsed.data, warnings }
}

function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")
  return `${path}: ${issue.message}`
}

// Walks the value alongside the schema and lists keys no object shape declares; records are open
// by design (their keys are agent, provider and model names), so only their values are walked.
function unknownKeys(schema: z.ZodType, value: unknown, path: string[]): string[] {
  const inner = schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema
  if (!isPlainObject(value)) return []
  if (inner instanceof z.ZodRecord) {
    return Object.entries(value).flatMap(([key, child]) =>
      unknownKeys(inner.valueType as z.ZodType, child, [...path, key]),
    )
  }
  if (!(inner instanceof z.ZodObject)) return []
  const shape = inner.shape as Record<string, z.ZodType>
  return Object.entries(value).flatMap(([key, child]) => {
    const childSchema = shape[key]
    if (!childSchema) return [[...path, key].join(".")]
    return unknownKeys(childSchema, child, [...path, key])
  })
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}
