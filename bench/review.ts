// `bun run bench`, part 2: whole reviews (the CLI as its own process, the real opencode binary)
// against the scripted model server at a fixed latency, with a simulated provider prompt cache.
//  (a) wall time of a full-tier review ÷ the model's critical path (coordinator turns + slowest specialist)
//  (b) bytes sent to the model ÷ a naive baseline that pastes the whole diff into every agent's prompt
//  (c) how much of the input a provider could serve from its prompt cache
//  (d) spawn_reviewers with six specialists ÷ with one (concurrency)
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
  toolCalls,
} from "../packages/testkit/src/index"

const cli = join(import.meta.dirname, "..", "packages", "cli", "bin", "opencode-reviewer.ts")
const specialists = ["security", "code-quality", "performance", "compliance", "documentation", "agents-md"]

/** What part 2 measures; every ratio is a plain number (1.0 = equal). */
export interface ReviewFigures {
  latencyMs: number
  wallMs: number
  criticalMs: number
  wallOverCritical: number
  /** First request to last answer, ÷ the critical path: what OpenCode and we add between model calls. */
  activeOverCritical: number
  /** From the CLI's start to the first model request: planning, OpenCode's start-up, plugins, MCP. */
  firstRequestMs: number
  /** From the last model answer to the CLI's exit: stopping OpenCode, review.json, publishing. */
  afterLastAnswerMs: number
  sentBytes: number
  naiveBytes: number
  diffBytes: number
  bytesOverNaive: number
  largeSentBytes: number
  largeNaiveBytes: number
  largeDiffBytes: number
  bytesOverNaiveLarge: number
  /** Bytes of each request a provider could serve from cache ÷ its input bytes, over all requests. */
  cacheablePrefix: number
  /** review.json's cache reads ÷ its input tokens: what the (simulated) provider reported, end to end. */
  cacheReadShare: number
  /** Input tokens as billed (uncached + cache reads at a tenth) ÷ the naive baseline's, uncached. */
  billedOverNaive: number
  costUsd: number
  requests: number
  coordinatorRequests: number
  spawnMs: number
  singleSpawnMs: number
  sevenOverOne: number
}

interface Outcome {
  wallMs: number
  /** When the review's CLI process started, on the model server's clock. */
  startedAt: number
  requests: RecordedRequest[]
  diffBytes: number
  spawnMs: number
  usage: { input: number; cacheRead: number; cacheWrite: number; costUsd: number }
}

// A coordinator that collects the specialists' results and submits what they found.
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

// The review the scripted specialists are working on.
interface Current {
  workDir: string
  patches: string[]
}

// A specialist that works as its brief asks: it reads the shared context only when its first
// message does not carry it, opens the two patches of its domain together in one turn, then answers.
function specialist(current: Current, index: number): (request: RecordedRequest) => Reply {
  return (request) => {
    const first = request.body.messages.find((message: { role: string }) => message.role === "user")
    const carriesContext = JSON.stringify(first?.content ?? "").includes("<merge_request_context>")
    const step = request.toolResults.length
    if (!carriesContext && step === 0)
      return toolCall("read", { filePath: join(current.workDir, "shared-mr-context.txt") })
    const own = current.patches
    const read = carriesContext ? step : step - 1
    if (read === 0 && own.length > 0)
      return toolCalls(
        [0, 1].map((offset) => ({
          name: "read",
          args: { filePath: join(current.workDir, own[(index * 2 + offset) % own.length]!) },
        })),
      )
    return findingsReply([])
  }
}

async function runReview(
  server: ModelServer,
  serverClock: () => number,
  current: Current,
  reviewers: string[],
  files: number,
): Promise<Outcome> {
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

    const workDir = join(scratch, "work")
    current.workDir = workDir

    const config = {
      provider: {
        bench: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: server.url, apiKey: "bench" },
          models: Object.fromEntries(
            ["coordinator", ...specialists].map((name) => [
              name,
              // Anthropic's Sonnet prices per million tokens: cache reads at a tenth of input.
              { limit: { context: 400_000, output: 8_000 }, cost: { input: 3, output: 15, cache_read: 0.3 } },
            ]),
          ),
        },
      },
      models: { top: ["bench/coordinator"], standard: ["bench/coordinator"], light: ["bench/coordinator"] },
      reviewers: Object.fromEntries(
        specialists.map((name) => [name, reviewers.includes(name) ? { model: `bench/${name}` } : { enabled: false }]),
      ),
      verify: "off",
    }
    const configFile = join(scratch, "config.json")
    await writeFile(configFile, JSON.stringify(config))
    const planned = await runCli(
      ["plan", "--json", "--repo", repo.dir, "--config", configFile, "--work-dir", workDir],
      repo.dir,
    )
    current.patches = (JSON.parse(planned.stdout) as { files: { patchFile: string | null }[] }).files.flatMap((file) =>
      file.patchFile ? [file.patchFile] : [],
    )

    const before = server.requests.length
    const outputDir = join(scratch, "out")
    const startedAt = serverClock()
    const review = await runCli(
      [
        "review",
        "--repo",
        repo.dir,
        "--config",
        configFile,
        "--work-dir",
        workDir,
        "--output-dir",
        outputDir,
        "--fail-on",
        "significant_concerns",
      ],
      repo.dir,
    )
    const requests = server.requests.slice(before).filter((request) => !request.isTitle)
    const spawn = requests.filter((request) => request.model !== "coordinator")
    const spawnMs =
      Math.max(...spawn.map((request) => request.finishedAt ?? request.at)) -
      Math.min(...spawn.map((request) => request.at))
    const record = JSON.parse(await readFile(join(outputDir, "review.json"), "utf8")) as {
      usage: { byModel: Record<string, Outcome["usage"]>; costUsd: number }
    }
    const usage = Object.values(record.usage.byModel).reduce(
      (sum, entry) => ({
        input: sum.input + entry.input,
        cacheRead: sum.cacheRead + entry.cacheRead,
        cacheWrite: sum.cacheWrite + entry.cacheWrite,
        costUsd: sum.costUsd,
      }),
      { input: 0, cacheRead: 0, cacheWrite: 0, costUsd: record.usage.costUsd },
    )
    return { wallMs: review.ms, startedAt, requests, diffBytes, spawnMs, usage }
  } finally {
    await repo.remove()
    await rm(scratch, { recursive: true, force: true })
  }
}

// The CLI as its own process, as a pipeline runs it: its start-up counts.
async function runCli(argv: string[], cwd: string): Promise<{ stdout: string; ms: number }> {
  const started = performance.now()
  const child = Bun.spawn(["bun", cli, ...argv], {
    cwd,
    env: { ...gitEnv(cwd), PATH: process.env.PATH! },
    stdout: "pipe",
    stderr: "pipe",
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  const ms = performance.now() - started
  if (code !== 0 && code !== 2) throw new Error(`opencode-reviewer ${argv[0]} failed (${code}):\n${stderr}`)
  return { stdout, ms }
}

// What a provider reads of a request: the tool definitions, then the messages (system first).
const inputBytes = (request: RecordedRequest) =>
  Buffer.byteLength(JSON.stringify({ tools: request.body.tools ?? [], messages: request.body.messages ?? [] }))

/** Runs part 2; `progress` gets a line as each review ends. */
export async function measureReview(latencyMs: number, progress: (line: string) => void): Promise<ReviewFigures> {
  // The server's `at` times count from its start; this clock reads the same (to a millisecond or so).
  const origin = performance.now()
  const server = await startModelServer({ latencyMs, promptCache: true })
  const serverClock = () => performance.now() - origin
  const current: Current = { workDir: "", patches: [] }
  server.rule((request) => request.model === "coordinator", coordinator)
  for (const [index, name] of specialists.entries())
    server.rule((request) => request.model === name, specialist(current, index))
  try {
    // A review of another change first: a busy repository's provider cache is warm with the agents'
    // prompts and tool definitions, which is the state every later review meets.
    await runReview(server, serverClock, current, specialists, 2)
    progress("warm-up review done")
    const full = await runReview(server, serverClock, current, specialists, 24)
    progress(`24-file review: ${(full.wallMs / 1000).toFixed(1)} s, ${full.requests.length} requests`)
    // To see where the bytes go: OCR_BENCH_DUMP=<dir> keeps this review's requests, one JSON file each.
    const dump = process.env.OCR_BENCH_DUMP
    if (dump) {
      await mkdir(dump, { recursive: true })
      for (const request of full.requests)
        await writeFile(
          join(dump, `${String(request.id).padStart(3, "0")}-${request.model}.json`),
          JSON.stringify(request.body, null, 1),
        )
    }
    const large = await runReview(server, serverClock, current, specialists, 96)
    progress(`96-file review: ${(large.wallMs / 1000).toFixed(1)} s, ${large.requests.length} requests`)
    const single = await runReview(server, serverClock, current, ["code-quality"], 24)
    progress(`24-file review with one specialist: ${(single.wallMs / 1000).toFixed(1)} s`)

    // (a) the critical path: every coordinator request, plus the slowest specialist's chain of requests.
    const bySession = new Map<string, RecordedRequest[]>()
    for (const request of full.requests)
      bySession.set(request.model, [...(bySession.get(request.model) ?? []), request])
    const duration = (requests: RecordedRequest[]) =>
      requests.reduce((sum, request) => sum + ((request.finishedAt ?? request.at) - request.at), 0)
    const coordinatorMs = duration(bySession.get("coordinator") ?? [])
    const slowestMs = Math.max(...specialists.map((name) => duration(bySession.get(name) ?? [])))
    const criticalMs = coordinatorMs + slowestMs
    const firstAt = Math.min(...full.requests.map((request) => request.at))
    const lastAt = Math.max(...full.requests.map((request) => request.finishedAt ?? request.at))

    // (b) bytes: what we sent vs each agent getting its system prompt plus the whole diff, once.
    const sent = (outcome: Outcome) => outcome.requests.reduce((sum, request) => sum + request.bytes, 0)
    const systemBytes = (outcome: Outcome, name: string) =>
      Buffer.byteLength(outcome.requests.find((request) => request.model === name)?.system ?? "")
    const naive = (outcome: Outcome) =>
      [...specialists, "coordinator"].reduce((sum, name) => sum + systemBytes(outcome, name) + outcome.diffBytes, 0)

    // (c) the simulated provider cache: bytes by prefix, and tokens as review.json reports them.
    const cachedBytes = full.requests.reduce((sum, request) => sum + (request.cachedPrefixBytes ?? 0), 0)
    const allInput = full.requests.reduce((sum, request) => sum + inputBytes(request), 0)
    const tokensIn = full.usage.input + full.usage.cacheRead + full.usage.cacheWrite
    // What the input is billed as, in bytes: uncached at full price, cache reads at a tenth.
    const billed = sent(full) - cachedBytes * 0.9

    return {
      latencyMs,
      wallMs: full.wallMs,
      criticalMs,
      wallOverCritical: full.wallMs / criticalMs,
      activeOverCritical: (lastAt - firstAt) / criticalMs,
      firstRequestMs: firstAt - full.startedAt,
      afterLastAnswerMs: full.startedAt + full.wallMs - lastAt,
      sentBytes: sent(full),
      naiveBytes: naive(full),
      diffBytes: full.diffBytes,
      bytesOverNaive: sent(full) / naive(full),
      largeSentBytes: sent(large),
      largeNaiveBytes: naive(large),
      largeDiffBytes: large.diffBytes,
      bytesOverNaiveLarge: sent(large) / naive(large),
      cacheablePrefix: cachedBytes / allInput,
      cacheReadShare: tokensIn === 0 ? 0 : full.usage.cacheRead / tokensIn,
      billedOverNaive: billed / naive(full),
      costUsd: full.usage.costUsd,
      requests: full.requests.length,
      coordinatorRequests: bySession.get("coordinator")?.length ?? 0,
      spawnMs: full.spawnMs,
      singleSpawnMs: single.spawnMs,
      sevenOverOne: full.spawnMs / single.spawnMs,
    }
  } finally {
    await server.close()
  }
}

/** The table of part 2. */
export function formatReview(figures: ReviewFigures): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`
  const percent = (share: number) => `${(share * 100).toFixed(1)} %`
  const rows: [string, string, string][] = [
    [
      "(a) review wall time ÷ model critical path",
      figures.wallOverCritical.toFixed(2),
      `${s(figures.wallMs)} ÷ ${s(figures.criticalMs)} (target ≤ 1.10)`,
    ],
    [
      "    model-active window ÷ critical path",
      figures.activeOverCritical.toFixed(2),
      `first request ${s(figures.firstRequestMs)} after the CLI started, exit ${s(figures.afterLastAnswerMs)} after the last answer`,
    ],
    [
      "(b) bytes sent ÷ naive paste-the-diff baseline",
      figures.bytesOverNaive.toFixed(2),
      `${kib(figures.sentBytes)} ÷ ${kib(figures.naiveBytes)}, diff ${kib(figures.diffBytes)} (target ≤ 0.25)`,
    ],
    [
      "    the same with a 4× larger change",
      figures.bytesOverNaiveLarge.toFixed(2),
      `${kib(figures.largeSentBytes)} ÷ ${kib(figures.largeNaiveBytes)}, diff ${kib(figures.largeDiffBytes)}`,
    ],
    [
      "(c) input a provider can serve from its cache",
      percent(figures.cacheablePrefix),
      "bytes of each request an earlier request began with (target ≥ 90 %)",
    ],
    [
      "    cache reads in review.json",
      percent(figures.cacheReadShare),
      "of input tokens, as the provider reported them",
    ],
    [
      "    input as billed ÷ naive baseline",
      figures.billedOverNaive.toFixed(2),
      `cache reads at a tenth; review cost $${figures.costUsd.toFixed(4)} at $3/$15 per million`,
    ],
    [
      "(d) six specialists ÷ one",
      figures.sevenOverOne.toFixed(2),
      `spawn_reviewers ${s(figures.spawnMs)} vs ${s(figures.singleSpawnMs)} (target ≤ 1.3)`,
    ],
  ]
  return [
    ...rows.map(([label, value, detail]) => `${label.padEnd(50)} ${value.padStart(8)}   ${detail}`),
    `requests: ${figures.requests} (coordinator ${figures.coordinatorRequests}), full-tier review on ${specialists.length} specialists`,
  ]
}
