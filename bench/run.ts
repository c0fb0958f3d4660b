// `bun run bench`: prints numbers, asserts nothing. Part 1 measures planning and the CLI's start-up
// (planning.ts), part 2 whole reviews against the scripted model server (review.ts), side by side in
// one run. `bun run bench -- --json` prints one JSON object with every figure on stdout instead of the
// table (progress then goes to stderr). BENCH_LATENCY_MS sets the model's latency (default 3000).
import { formatRow, measurePlanning } from "./planning"
import { formatReview, measureReview } from "./review"

const json = process.argv.includes("--json")
const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 3000)
const say = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`)

say("opencode-reviewer bench, part 1: planning (median of 5 runs, wall time of the whole process)")
const planning = await measurePlanning(json ? say : () => {})
if (!json) {
  say(`change: ${planning.change}`)
  for (const row of planning.rows) say(formatRow(row))
}

say(`\nopencode-reviewer bench, part 2: review pipeline (scripted model, ${latencyMs} ms to first byte per request)`)
const review = await measureReview(latencyMs, json ? say : () => {})
if (!json) for (const line of formatReview(review)) say(line)

if (json) {
  const round = (value: number, digits: number) => Number(value.toFixed(digits))
  process.stdout.write(
    `${JSON.stringify({
      wallOverCritical: round(review.wallOverCritical, 3),
      bytesOverNaive: round(review.bytesOverNaive, 3),
      bytesOverNaiveLarge: round(review.bytesOverNaiveLarge, 3),
      cacheablePrefix: round(review.cacheablePrefix, 3),
      sevenOverOne: round(review.sevenOverOne, 3),
      planMs: Math.round(planning.planMs),
      planRssMb: Math.round(planning.planRssMb),
      startupMs: Math.round(planning.startupMs),
      planFirstByteMs: Math.round(planning.planFirstByteMs),
      cacheReadShare: round(review.cacheReadShare, 3),
      billedOverNaive: round(review.billedOverNaive, 3),
      activeOverCritical: round(review.activeOverCritical, 3),
      firstRequestMs: Math.round(review.firstRequestMs),
      afterLastAnswerMs: Math.round(review.afterLastAnswerMs),
      reviewCostUsd: round(review.costUsd, 6),
      latencyMs,
    })}\n`,
  )
}
