import { createHash } from "node:crypto"
import type { CorpusCase } from "./corpus"
import { compareCodeUnits } from "./order"

/** Bumped when a cached case result's meaning changes (scoring, the result's shape): old entries then miss. */
export const cacheKeyVersion = 1

/** Everything a case's result depends on. */
export interface CacheKeyInput {
  caseId: string
  /** {@link hashCase} of the case (and its diff, when known). */
  caseHash: string
  /** Each planned agent's model chain, first choice first; agent order does not matter, chain order does. */
  modelChains: Readonly<Record<string, readonly string[]>>
  /** A hash of the prompts the reviewers and the coordinator were given (their files, as shipped or configured). */
  promptHash: string
  judgeModel: string
}

/** A stable key (64 hex digits) for one case's result: equal inputs give equal keys on every machine. */
export function cacheKey(input: CacheKeyInput): string {
  const chains = Object.keys(input.modelChains)
    .sort(compareCodeUnits)
    .map((agent) => [agent, [...(input.modelChains[agent] ?? [])]])
  return hashText(
    canonicalJson({
      version: cacheKeyVersion,
      case: input.caseId,
      caseHash: input.caseHash,
      chains,
      prompt: input.promptHash,
      judge: input.judgeModel,
    }),
  )
}

/**
 * A case's content hash: its JSON with keys in a fixed order (so reformatting the file does not
 * change it) and, when given, the text of its diff (a fetched pull request can change under you).
 */
export function hashCase(testCase: CorpusCase, diff?: string): string {
  return hashText(canonicalJson({ case: testCase, diff: diff === undefined ? null : hashText(diff) }))
}

/** sha256 of UTF-8 text, in hex. */
export function hashText(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex")
}

/** JSON with object keys sorted at every level and `undefined` members left out. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)))
  if (typeof value !== "object" || value === null) return value
  const record = value as Record<string, unknown>
  return Object.fromEntries(
    Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort(compareCodeUnits)
      .map((key) => [key, sortKeys(record[key])]),
  )
}
