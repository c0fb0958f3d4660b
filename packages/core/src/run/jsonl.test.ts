import { describe, expect, test } from "vitest"
import { type JsonlLine, readJsonl } from "./jsonl"

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
