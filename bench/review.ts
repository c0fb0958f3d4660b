// `bun run bench`, part 2: the review pipeline against the scripted model server at a fixed
// latency. Prints numbers, asserts nothing.
//  (a) wall time of a full-tier review ÷ the model's critical path (coordinator turns + slowest specialist)
//  (b) bytes sent to the model ÷ a naive baseline that pastes the whole diff into every specialist's prompt
//  (c) share of each request's input that repeats the previous request's prefix in its session (cacheability)
//  (d) spawn_reviewers with seven specialists ÷ with one (concurrency)
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { main } from "../packages/cli/src/main"
import { type Finding, parseFindings, renderReviewXml } from "../packages/core/src/index"
import {
  createTempRepo,
  findingsReply,
  gitEnv,
  type ModelServer,
  type RecordedRequest,
  type Reply,
  startModelServer,
  text,
  toolCall,
} from "../packages/testkit/src/index"

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 3000)
const specialists = ["security", "code-quality", "performance", "compliance", "documentation", "agents-md"]

interface Outcome {
  wallMs: number
  requests: RecordedRequest[]
  diffBytes: number
  spawnMs: number
}

// A coordinator that runs the specialists and submits what they found.
function coordinator(request: RecordedRequest): Reply {
  if (request.toolResults.length === 0) return toolCall("spawn_reviewers", {})
  const output = request.toolResults[0]!.content
  const findings: Finding[] = [...output.matchAll(/<findings>[\s\S]*?<\/findings>/g)].flatMap((match) => {
    const parsed = parseFindings(match[0])
    return parsed.ok ? parsed.findings : []
  })
  if (request.toolResults.length === 1)
    return toolCall("review_submit_review", {
      review: renderReviewXml({ summary: "Bench review.", findings, answer: null }),
    })
  return text("Submitted.")
}

// A specialist that works as a real one would: reads the shared context, then the patches of its
// domain (two of them), then answers.
function specialist(
  workDir: () => string,
  patches: () => string[],
  index: number,
): (request: RecordedRequest) => Reply {
  return (request) => {
    const step = request.toolResults.length
    if (step === 0) return toolCall("read", { filePath: join(workDir(), "shared-mr-context.txt") })
    const own = patches()
    if (step <= 2 && own.length > 0)
      return toolCall("read", { filePath: join(workDir(), own[(index * 2 + step - 1) % own.length]!) })
    return findingsReply([])
  }
}

async function runReview(server: ModelServer, reviewers: string[], files: number): Promise<Outcome> {
  const repo = await createTempRepo("ocr-bench-review-")
  const scratch = await mkdtemp(join(tmpdir(), "ocr-bench-review-out-"))
  try {
    await repo.write({ "README.md": "# bench\n" })
    repo.commit("init")
    repo.git("checkout", "-q", "-b", "feature")
    const module = (file: number) =>
      Array.from(
        { length: 40 },
        (_, line) =>
          `export function handler${file}_${line}(input: string): string {\n  return input.trim() + "${"x".repeat(20)}"\n}`,
      ).join("\n") + "\n"
    const written: Record<string, string> = {}
    for (let file = 0; file < files; file += 1) written[`src/auth/module${file}.ts`] = module(file)
    await repo.write(written)
    repo.commit("change")
    const diffBytes = Buffer.byteLength(repo.git("diff", "main...feature"))

    let workDir = ""
    let patches: string[] = []
    server.rule((request) => request.model === "coordinator", coordinator)
    for (const [index, name] of specialists.entries())
      server.rule(
        (request) => request.model === name,
        specialist(
          () => workDir,
          () => patches,
          index,
        ),
      )

    const config = {
      provider: {
        bench: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: server.url, apiKey: "bench" },
          models: Object.fromEntries(
            ["coordinator", ...specialists].map((name) => [name, { limit: { context: 400_000, output: 8_000 } }]),
          ),
        },
      },
      models: { top: ["bench/coordinator"], standard: ["bench/coordinator"], light: ["bench/coordinator"] },
      reviewers: Object.fromEntries(
        specialists.map((name) => [name, reviewers.includes(name) ? { model: `bench/${name}` } : { enabled: false }]),
      ),
    }
    const configFile = join(scratch, "config.json")
    await writeFile(configFile, JSON.stringify(config))
    workDir = join(scratch, "work")
    const planned = await runCli(
      ["plan", "--json", "--repo", repo.dir, "--config", configFile, "--work-dir", workDir],
      repo.dir,
    )
    patches = (JSON.parse(planned) as { files: { patchFile: string | null }[] }).files.flatMap((file) =>
      file.patchFile ? [file.patchFile] : [],
    )

    const before = server.requests.length
    const started = performance.now()
    await runCli(
      [
        "review",
        "--repo",
        repo.dir,
        "--config",
        configFile,
        "--work-dir",
        workDir,
        "--output-dir",
        join(scratch, "out"),
        "--fail-on",
        "significant_concerns",
      ],
      repo.dir,
    )
    const wallMs = performance.now() - started
    const requests = server.requests.slice(before).filter((request) => !request.isTitle)
    const spawn = requests.filter((request) => request.model !== "coordinator")
    const spawnMs =
      Math.max(...spawn.map((request) => request.finishedAt ?? request.at)) -
      Math.min(...spawn.map((request) => request.at))
    return { wallMs, requests, diffBytes, spawnMs }
  } finally {
    await repo.remove()
    await rm(scratch, { recursive: true, force: true })
  }
}

async function runCli(argv: string[], cwd: string): Promise<string> {
  let stdout = ""
  let stderr = ""
  const code = await main({
    argv,
    env: { ...gitEnv(cwd), PATH: process.env.PATH! },
    cwd,
    stdout: (chunk) => void (stdout += chunk),
    stderr: (chunk) => void (stderr += chunk),
    stdin: async () => new Uint8Array(),
    execPath: process.execPath,
  })
  if (code !== 0 && code !== 2) throw new Error(`opencode-reviewer ${argv[0]} failed (${code}):\n${stderr}`)
  return stdout
}

// Longest common prefix of two strings, in characters.
function commonPrefix(a: string, b: string): number {
  const limit = Math.min(a.length, b.length)
  let index = 0
  while (index < limit && a.charCodeAt(index) === b.charCodeAt(index)) index += 1
  return index
}

// What a provider's prompt cache sees: tool definitions, then the messages (system first).
const input = (request: RecordedRequest) =>
  JSON.stringify({ tools: request.body.tools ?? [], messages: request.body.messages ?? [] })

console.log(
  `\nopencode-reviewer bench, part 2: review pipeline (scripted model, ${latencyMs} ms to first byte per request)`,
)
const server = await startModelServer({ latencyMs })
try {
  const full = await runReview(server, specialists, 24)
  const large = await runReview(server, specialists, 96)

  // (a) the critical path: every coordinator request, plus the slowest specialist's chain of requests.
  const bySession = new Map<string, RecordedRequest[]>()
  for (const request of full.requests) bySession.set(request.model, [...(bySession.get(request.model) ?? []), request])
  const duration = (requests: RecordedRequest[]) =>
    requests.reduce((sum, request) => sum + ((request.finishedAt ?? request.at) - request.at), 0)
  const coordinatorMs = duration(bySession.get("coordinator") ?? [])
  const slowestMs = Math.max(...specialists.map((name) => duration(bySession.get(name) ?? [])))
  const criticalMs = coordinatorMs + slowestMs
  const firstAt = Math.min(...full.requests.map((request) => request.at))
  const lastAt = Math.max(...full.requests.map((request) => request.finishedAt ?? request.at))

  // (b) bytes: what we sent vs each specialist getting its prompt plus the whole diff (and the
  // coordinator the diff once more).
  const sentBytes = full.requests.reduce((sum, request) => sum + request.bytes, 0)
  const systemBytes = (name: string) => Buffer.byteLength(bySession.get(name)?.[0]?.system ?? "")
  const naiveBytes = [...specialists, "coordinator"].reduce((sum, name) => sum + systemBytes(name) + full.diffBytes, 0)
  const largeSent = large.requests.reduce((sum, request) => sum + request.bytes, 0)
  const largeNaive = [...specialists, "coordinator"].reduce((sum, name) => sum + systemBytes(name) + large.diffBytes, 0)

  // (c) within each session, how much of each request's input is the previous request's prefix.
  const shares: number[] = []
  for (const requests of bySession.values()) {
    for (let index = 1; index < requests.length; index += 1) {
      const current = input(requests[index]!)
      shares.push(commonPrefix(input(requests[index - 1]!), current) / current.length)
    }
  }
  const cacheable = shares.reduce((sum, share) => sum + share, 0) / Math.max(1, shares.length)

  // (d) the same change with one specialist.
  const single = await runReview(server, ["code-quality"], 24)

  const rows: [string, string, string][] = [
    [
      "(a) review wall time ÷ model critical path",
      `${(full.wallMs / criticalMs).toFixed(2)}`,
      `${(full.wallMs / 1000).toFixed(1)} s ÷ ${(criticalMs / 1000).toFixed(1)} s (target ≤ 1.05)`,
    ],
    [
      "    model-active window ÷ critical path",
      `${((lastAt - firstAt) / criticalMs).toFixed(2)}`,
      `${((lastAt - firstAt) / 1000).toFixed(1)} s: first request to last answer, without opencode start-up`,
    ],
    [
      "(b) bytes sent ÷ naive paste-the-diff baseline",
      `${(sentBytes / naiveBytes).toFixed(2)}`,
      `${(sentBytes / 1024).toFixed(0)} KiB ÷ ${(naiveBytes / 1024).toFixed(0)} KiB, diff ${(full.diffBytes / 1024).toFixed(0)} KiB (target ≤ 0.25)`,
    ],
    [
      "    the same with a 4× larger change",
      `${(largeSent / largeNaive).toFixed(2)}`,
      `${(largeSent / 1024).toFixed(0)} KiB ÷ ${(largeNaive / 1024).toFixed(0)} KiB, diff ${(large.diffBytes / 1024).toFixed(0)} KiB`,
    ],
    [
      "(c) request input repeating the previous prefix",
      `${(cacheable * 100).toFixed(1)} %`,
      `mean over ${shares.length} follow-up requests (target ≥ 90 %)`,
    ],
    [
      "(d) seven specialists ÷ one",
      `${(full.spawnMs / single.spawnMs).toFixed(2)}`,
      `spawn_reviewers ${(full.spawnMs / 1000).toFixed(1)} s vs ${(single.spawnMs / 1000).toFixed(1)} s (target ≤ 1.3)`,
    ],
  ]
  for (const [label, value, detail] of rows) console.log(`${label.padEnd(50)} ${value.padStart(8)}   ${detail}`)
  console.log(
    `requests: ${full.requests.length} (coordinator ${bySession.get("coordinator")?.length ?? 0}), full-tier review on ${specialists.length} specialists`,
  )
} finally {
  await server.close()
}
