import * as z from "zod"
import { TokenCounts } from "../model/usage"

/**
 * One line of `progress.jsonl`: the runtime plugin appends one per reviewer start and end so the
 * CLI can print live progress (child sessions are invisible in the coordinator's output).
 */
export const ProgressEvent = z.discriminatedUnion("event", [
  z.object({ event: z.literal("reviewers-start"), at: z.number(), reviewers: z.array(z.string()) }),
  z.object({
    event: z.literal("reviewer-start"),
    at: z.number(),
    name: z.string(),
    model: z.string(),
    attempt: z.number().int().positive(),
  }),
  z.object({
    event: z.literal("reviewer-end"),
    at: z.number(),
    name: z.string(),
    status: z.enum(["done", "failed"]),
    error: z.string().nullable(),
    model: z.string().nullable(),
    findings: z.number().int().nonnegative(),
    /** What the reviewer spent, session by session, so the CLI counts it even when no spawn_reviewers call reports it. */
    sessionIDs: z.array(z.string()),
    tokens: TokenCounts,
    costUsd: z.number().nonnegative(),
  }),
])
export type ProgressEvent = z.infer<typeof ProgressEvent>

/** A progress event without its time, as the writer hands it over. */
export type ProgressEntry = ProgressEvent extends infer E ? (E extends ProgressEvent ? Omit<E, "at"> : never) : never

/** The progress.jsonl line for an entry at `at` (ms since the epoch); throws on a malformed entry (a bug of ours). */
export function progressLine(entry: ProgressEntry, at: number): string {
  return JSON.stringify(ProgressEvent.parse({ at, ...entry })) + "\n"
}

/** One progress.jsonl line read, or why it is not an event this version knows; never throws. */
export function parseProgressLine(line: string): { ok: true; event: ProgressEvent } | { ok: false; error: string } {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return { ok: false, error: "not JSON" }
  }
  const parsed = ProgressEvent.safeParse(value)
  return parsed.success
    ? { ok: true, event: parsed.data }
    : { ok: false, error: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ") }
}
