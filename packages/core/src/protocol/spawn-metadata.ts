import * as z from "zod"
import { Finding } from "../model/finding"
import { TokenCounts } from "../model/usage"
import { type ProtocolRead, parseProtocolJson } from "./plan-file"

/** What happened to one reviewer: the runtime's outcome, carried whole in the tool's metadata. */
export const ReviewerOutcome = z.object({
  name: z.string().min(1),
  status: z.enum(["done", "failed"]),
  error: z.string().nullable(),
  /** The model of the last attempt (null when none could start). */
  model: z.string().nullable(),
  modelsTried: z.array(z.string()),
  /** Model attempts, one child session each. */
  attempts: z.number().int().nonnegative(),
  /** Follow-up prompts within a session (malformed findings, answer cut off). */
  followUps: z.number().int().nonnegative(),
  sessionIDs: z.array(z.string()),
  durationMs: z.number().nonnegative(),
  tokens: TokenCounts,
  costUsd: z.number().nonnegative(),
  findings: z.array(Finding),
})
export type ReviewerOutcome = z.infer<typeof ReviewerOutcome>

/**
 * The metadata of a `spawn_reviewers` result, which the CLI reads from the coordinator's JSONL
 * (child sessions never appear there: docs/opencode.md, JSONL). `cut` counts findings left out of
 * the XML output to fit OpenCode's tool-output limit; all of them are in `reviewers`.
 */
export const SpawnMetadata = z.object({
  /** The plan.json the runtime read, or null when it had none. */
  plan: z.string().nullable(),
  /** Why the tool could not run at all (no plan, a bad plan), else null. */
  error: z.string().nullable(),
  reviewers: z.array(ReviewerOutcome),
  cut: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative(),
})
export type SpawnMetadata = z.infer<typeof SpawnMetadata>

/** Checks a `spawn_reviewers` metadata value (already parsed from the JSONL event). */
export function parseSpawnMetadata(value: unknown): ProtocolRead<SpawnMetadata> {
  return parseProtocolJson(JSON.stringify(value ?? null), SpawnMetadata, "the spawn_reviewers metadata")
}
