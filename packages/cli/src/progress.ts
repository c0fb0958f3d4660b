import { closeSync, openSync, readSync, statSync } from "node:fs"
import { parseProgressLine, parseSpawnMetadata, plural, tools } from "@opencode-reviewer/core"
import { type RunEvent, toolUseOf } from "@opencode-reviewer/opencode/events"
import type { Io } from "./io"

// Child sessions are invisible in the parent's JSONL; the spawn_reviewers tool result carries each
// reviewer's outcome, so that is where per-reviewer progress comes from.
export function progress(event: RunEvent, io: Io, live: boolean): void {
  const use = toolUseOf(event)
  if (!use) return
  if (use.tool !== tools.spawnReviewers) {
    if (use.tool !== "unknown") io.stderr(`review: coordinator used ${use.tool} (${use.status})\n`)
    return
  }
  // The live progress file already told each reviewer's story; this is the fallback without it.
  if (live) return
  const metadata = parseSpawnMetadata(use.metadata)
  if (!metadata.ok) return void io.stderr(`review: ${metadata.error}\n`)
  for (const reviewer of metadata.value.reviewers) {
    const detail =
      reviewer.status === "done" ? plural(reviewer.findings.length, "finding") : `failed: ${reviewer.error}`
    io.stderr(`review:   ${reviewer.name.padEnd(14)} ${detail}\n`)
  }
}

/** Follows the runtime's progress file while the coordinator runs and prints each reviewer's start and end. */
export function tailProgress(file: string, io: Io): { file: string; seen(): boolean; stop(): void } {
  let offset = 0
  let pending = ""
  let lines = 0
  const read = () => {
    let size = 0
    try {
      size = statSync(file).size
    } catch {
      return
    }
    if (size <= offset) return
    const handle = openSync(file, "r")
    try {
      const buffer = Buffer.alloc(size - offset)
      readSync(handle, buffer, 0, buffer.length, offset)
      offset = size
      pending += buffer.toString("utf8")
    } finally {
      closeSync(handle)
    }
    const complete = pending.split("\n")
    pending = complete.pop() ?? ""
    for (const line of complete) {
      const entry = parseProgress(line)
      if (!entry) continue
      lines += 1
      io.stderr(`review: ${entry}\n`)
    }
  }
  const timer = setInterval(read, 200)
  return {
    file,
    seen: () => {
      read()
      return lines > 0
    },
    stop() {
      clearInterval(timer)
      read()
    },
  }
}

function parseProgress(line: string): string | null {
  const parsed = parseProgressLine(line)
  if (!parsed.ok) return null
  const entry = parsed.event
  if (entry.event === "reviewers-start") return `running ${entry.reviewers.join(", ")}`
  const name = entry.name.padEnd(14)
  if (entry.event === "reviewer-start")
    return entry.attempt > 1 ? `  ${name} failing back to ${entry.model}` : `  ${name} started on ${entry.model}`
  return entry.status === "done"
    ? `  ${name} done, ${plural(entry.findings, "finding")}`
    : `  ${name} FAILED: ${entry.error}`
}
