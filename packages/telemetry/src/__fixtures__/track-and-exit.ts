// A stand-in for the CLI's last moments: track a job's events, flush, print the totals, end.
// Usage: bun track-and-exit.ts <tracker url> <timeout ms>
import { createTracker } from "../tracker"

const [url = "", timeoutMs = "2000"] = process.argv.slice(2)
const tracker = createTracker({ url, timeoutMs: Number(timeoutMs), jobId: "child-job" })
tracker.track({ type: "job-start", repo: { id: 1 }, mergeRequestIid: 3, tier: "lite", agents: ["review_coordinator"] })
tracker.track({ type: "break-glass", by: "carol" })
tracker.track({ type: "error", stage: "publish", message: "late failure" })
const totals = await tracker.flush()
process.stdout.write(`${JSON.stringify(totals)}\n`)
