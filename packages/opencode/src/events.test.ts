import { describe, expect, test } from "vitest"
import { errorEventOf, type JsonlLine, readJsonl, stepFinishOf, textOf, toolUseOf } from "./events"

// A stream that delivers the given chunks, optionally waiting between them.
function streamOf(chunks: (string | Uint8Array)[], gapMs = 0): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    async start(controller) {
      for (const chunk of chunks) {
        controller.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk)
        if (gapMs) await Bun.sleep(gapMs)
      }
      controller.close()
    },
  })
}

describe("readJsonl", () => {
  test("reassembles lines and multi-byte characters split across chunks", async () => {
    const bytes = new TextEncoder().encode('{"type":"text","part":{"text":"héllo ✓"}}\n')
    const batches: JsonlLine[][] = []
    await readJsonl(
      streamOf([bytes.slice(0, 33), bytes.slice(33, 35), bytes.slice(35)]),
      (batch) => void batches.push(batch),
    )
    expect(batches.flat()).toEqual([{ ok: true, event: { type: "text", part: { text: "héllo ✓" } } }])
  })

  test("turns a bad line into a result and keeps reading", async () => {
    const lines: JsonlLine[] = []
    await readJsonl(streamOf(['{"type":"a"}\nnot json\n[1,2]\n\n{"type":"b"}']), (batch) => void lines.push(...batch))
    expect(lines.map((line) => (line.ok ? line.event.type : `bad: ${line.line}`))).toEqual([
      "a",
      "bad: not json",
      "bad: [1,2]",
      "b",
    ])
  })

  test("hands on a batch every 100 lines", async () => {
    const text = Array.from({ length: 250 }, (_, index) => JSON.stringify({ type: "step", index })).join("\n") + "\n"
    const sizes: number[] = []
    await readJsonl(streamOf([text]), (batch) => void sizes.push(batch.length))
    expect(sizes).toEqual([100, 100, 50])
  })

  test("hands on a partial batch 50 ms after its first line, before the stream ends", async () => {
    const seen: { at: number; size: number }[] = []
    const started = performance.now()
    await readJsonl(
      streamOf(['{"type":"a"}\n', '{"type":"b"}\n', "", ""], 120),
      (batch) => void seen.push({ at: performance.now() - started, size: batch.length }),
    )
    expect(seen[0]!.size).toBe(1)
    expect(seen[0]!.at).toBeLessThan(115)
    expect(seen.reduce((sum, entry) => sum + entry.size, 0)).toBe(2)
  })
})

describe("event readers", () => {
  // Shapes as `opencode run --format json` prints them (docs/opencode.md, "The JSONL stream").
  const stepFinish = {
    type: "step_finish",
    sessionID: "ses_1",
    part: {
      type: "step-finish",
      reason: "tool-calls",
      tokens: { total: 130, input: 100, output: 20, reasoning: 10, cache: { read: 7, write: 3 } },
      cost: 0.001,
    },
  }
  const toolUse = {
    type: "tool_use",
    sessionID: "ses_1",
    part: {
      type: "tool",
      tool: "spawn_reviewers",
      state: { status: "completed", input: {}, output: "<reviewer_results/>", metadata: { cut: 0 } },
    },
  }

  test("reads a step's reason, tokens and cost", () => {
    expect(stepFinishOf(stepFinish)).toEqual({
      reason: "tool-calls",
      tokens: { input: 100, output: 20, reasoning: 10, cacheRead: 7, cacheWrite: 3 },
      costUsd: 0.001,
    })
    expect(stepFinishOf({ type: "step_finish" })).toEqual({
      reason: null,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      costUsd: 0,
    })
  })

  test("reads a tool call's name, status, input, output and metadata", () => {
    expect(toolUseOf(toolUse)).toEqual({
      tool: "spawn_reviewers",
      status: "completed",
      input: {},
      output: "<reviewer_results/>",
      metadata: { cut: 0 },
    })
    expect(toolUseOf({ type: "tool_use", part: {} })).toEqual({
      tool: "unknown",
      status: "unknown",
      input: null,
      output: "",
      metadata: {},
    })
  })

  test("reads text and errors, and keeps an error event that carries no error", () => {
    expect(textOf({ type: "text", part: { type: "text", text: "done" } })).toBe("done")
    expect(textOf({ type: "text", part: { type: "text" } })).toBeNull()
    const error = { name: "APIError", data: { message: "status 503", statusCode: 503 } }
    expect(errorEventOf({ type: "error", error })).toEqual({ error })
    expect(errorEventOf({ type: "error" })).toEqual({ error: undefined })
  })

  test("each reader answers null for the other events", () => {
    const events = [stepFinish, toolUse, { type: "text", part: { text: "x" } }, { type: "error", error: {} }]
    expect(events.map((event) => [stepFinishOf(event), toolUseOf(event), textOf(event), errorEventOf(event)])).toEqual([
      [expect.anything(), null, null, null],
      [null, expect.anything(), null, null],
      [null, null, "x", null],
      [null, null, null, expect.anything()],
    ])
  })
})
