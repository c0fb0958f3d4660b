import { join } from "node:path"
import { type Config, childEnv, missingProviderKeys, ProviderKeyMissingError } from "@opencode-reviewer/core"
import { buildJudgePrompt, type Judge, parseJudgeAnswer } from "@opencode-reviewer/eval"
import { findOpencodeBinary, opencodeHomeEnv, prepareOpencodeHome } from "@opencode-reviewer/opencode/binary"
import { startPromptServer } from "@opencode-reviewer/opencode/prompt-server"
import type { Io } from "./io"

/** The LLM judge of an eval run, with what it cost; close it when the run ends. */
export interface ModelJudge {
  judge: Judge
  /** What the judge's calls cost so far, in USD (OpenCode's cost for the model). */
  costUsd(): number
  close(): Promise<void>
}

/**
 * The benchmark's pairwise judge on `model`, through one `opencode serve` for the whole run: every
 * golden comment against every finding is one prompt without tools, at temperature 0 where the
 * model takes one. The model's provider comes from the review config; only its key reaches the
 * OpenCode process.
 */
export async function startModelJudge(input: {
  config: Config
  model: string
  workDir: string
  io: Io
}): Promise<ModelJudge> {
  const opencodeConfig = { provider: input.config.provider ?? {} }
  const missing = missingProviderKeys({
    config: opencodeConfig,
    agents: [{ name: "judge", models: [input.model] }],
    env: input.io.env,
    authenticated: [],
  })
  if (missing.length > 0) throw new ProviderKeyMissingError(missing)
  const home = await prepareOpencodeHome(join(input.workDir, "judge-home"))
  const { env } = childEnv({
    parent: input.io.env,
    config: opencodeConfig,
    models: [input.model],
    extra: opencodeHomeEnv(home),
  })
  const server = await startPromptServer({
    binary: findOpencodeBinary(input.io.env, import.meta.url),
    cwd: input.workDir,
    env,
    config: opencodeConfig,
  })
  let cost = 0
  return {
    async judge(golden, candidate) {
      const prompt = buildJudgePrompt(golden, candidate)
      const answer = await server.prompt({ model: input.model, system: prompt.system, user: prompt.user })
      cost += answer.costUsd
      return parseJudgeAnswer(answer.text)
    },
    costUsd: () => cost,
    close: () => server.close(),
  }
}
