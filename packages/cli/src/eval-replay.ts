import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { type Finding, parseFindings, renderReviewXml, submitReviewTool, tools } from "@opencode-reviewer/core"
import { type Corpus, hashText, type Judge } from "@opencode-reviewer/eval"
import { findingsReply, type ModelServer, type RecordedRequest, text, toolCall } from "@opencode-reviewer/testkit"
import * as z from "zod"

// `eval --demo`: the bundled demo corpus's replay model and replay judge. The model plays the
// generalist reviewer of each case (its findings are in the corpus's replay.json) and a coordinator
// that keeps every reviewer finding; the judge replays recorded verdicts. Every number the demo
// prints still comes from the real pipeline's findings and the real scoring.

const ReplayFile = z.object({
  findings: z.record(z.string(), z.array(z.unknown())),
  verdicts: z.array(z.object({ golden: z.string(), title: z.string(), match: z.boolean() })),
})

/** The replay of a corpus: what the model answers per case, and the judge. */
export interface Replay {
  /** Names the replay data, so a cached result of other replay data is never reused. */
  judgeModel: string
  script(server: ModelServer): void
  judge: Judge
  /** The config pointing every agent at the replay model. */
  config(baseURL: string): object
}

/** Reads `replay.json` of a corpus made for replay (the demo). */
export async function loadReplay(corpus: Corpus): Promise<Replay> {
  const file = ReplayFile.parse(JSON.parse(await readFile(join(corpus.directory, "replay.json"), "utf8")))
  // Which case a request is about: the eval reviews each case in its own directory, `cases/<id>.run<N>`,
  // and every reviewer is told to read the shared context there.
  const caseOf = (request: RecordedRequest) => {
    const body = JSON.stringify(request.body)
    return corpus.cases.find((testCase) => body.includes(`/cases/${testCase.id}.run`))?.id
  }
  const findingsOf = (id: string | undefined): Finding[] => {
    const parsed = z.array(z.unknown()).parse(id === undefined ? [] : (file.findings[id] ?? []))
    return parsed as Finding[]
  }

  return {
    judgeModel: `replay:${hashText(JSON.stringify(file)).slice(0, 12)}`,
    script(server) {
      server.rule(
        (request) => request.model === "replay-code-quality",
        (request) => findingsReply(findingsOf(caseOf(request))),
      )
      server.rule(
        (request) => request.model.startsWith("replay-") && request.model !== "replay-coordinator",
        () => findingsReply([]),
      )
      server.rule((request) => request.model === "replay-coordinator", keepEveryFinding)
    },
    async judge(golden, candidate) {
      const verdict = file.verdicts.find((entry) => entry.golden === golden && candidate.includes(entry.title))
      return { match: verdict?.match ?? false, reason: verdict ? "recorded verdict" : "no recorded match" }
    },
    config(baseURL) {
      const agents = [
        "coordinator",
        "security",
        "code-quality",
        "performance",
        "compliance",
        "documentation",
        "agents-md",
      ]
      const cost = { input: 3, output: 15, cache_read: 0.3 }
      return {
        provider: {
          replay: {
            npm: "@ai-sdk/openai-compatible",
            name: "opencode-reviewer eval replay model",
            options: { baseURL, apiKey: "replay" },
            models: Object.fromEntries(
              agents.map((name) => [`replay-${name}`, { limit: { context: 200_000, output: 8_000 }, cost }]),
            ),
          },
        },
        models: {
          top: ["replay/replay-coordinator"],
          standard: ["replay/replay-coordinator"],
          light: ["replay/replay-coordinator"],
        },
        reviewers: Object.fromEntries(
          agents.filter((name) => name !== "coordinator").map((name) => [name, { model: `replay/replay-${name}` }]),
        ),
        limits: { heartbeatSeconds: 10 },
        // The replay plays no verifier: the corpus measures the reviewers and the coordinator.
        verify: "off",
      }
    },
  }
}

// A coordinator that runs the reviewers, keeps every finding they report, and submits.
function keepEveryFinding(request: RecordedRequest) {
  if (request.toolResults.length === 0) return toolCall(tools.spawnReviewers, {})
  if (request.toolResults.length === 1) {
    const output = request.toolResults[0]!.content
    const findings = [...output.matchAll(/<findings>[\s\S]*?<\/findings>/g)].flatMap((match) => {
      const parsed = parseFindings(match[0])
      return parsed.ok ? parsed.findings : []
    })
    return toolCall(submitReviewTool, {
      review: renderReviewXml({ summary: `Kept ${findings.length} findings.`, findings, answer: null }),
    })
  }
  return text("Submitted.")
}
