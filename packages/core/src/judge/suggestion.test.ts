import { describe, expect, test } from "vitest"
import { parseDiff } from "../plan/diff"
import { applicableSuggestion } from "./suggestion"

// Two hunks of src/a.ts: new lines 1-4 (line 2 replaced), then 20-22 (line 21 added).
const diff = [
  "diff --git a/src/a.ts b/src/a.ts",
  "index 1111111..2222222 100644",
  "--- a/src/a.ts",
  "+++ b/src/a.ts",
  "@@ -1,4 +1,4 @@",
  " const a = 1",
  "-const b = 2",
  "+const b = input + 2",
  " const c = 3",
  " const d = 4",
  "@@ -19,2 +20,3 @@ function tail() {",
  " export function tail() {",
  "+  return eval(code)",
  " }",
  "",
].join("\n")
const files = parseDiff(diff).files

function finding(line: number | null, startLine: number, lines: string[], file = "src/a.ts") {
  return { file, line, suggestion: { startLine, lines } }
}

describe("applicableSuggestion", () => {
  test("applies to added and context lines of one hunk, as the lines they replace", () => {
    expect(applicableSuggestion(finding(2, 2, ["const b = Number(input) + 2"]), files)).toEqual({
      ok: true,
      suggestion: { startLine: 2, endLine: 2, lines: ["const b = Number(input) + 2"] },
    })
    const span = applicableSuggestion(finding(3, 1, ["const a = 1", "const b = 2", "const c = 3"]), files)
    expect(span.ok && span.suggestion).toEqual({
      startLine: 1,
      endLine: 3,
      lines: ["const a = 1", "const b = 2", "const c = 3"],
    })
  })

  test("refuses lines outside the diff or across hunks, and files without a new side", () => {
    const reasons = [
      applicableSuggestion(finding(10, 10, ["x"]), files),
      applicableSuggestion(finding(21, 4, ["x"]), files),
      applicableSuggestion(finding(null, 1, ["x"]), files),
      applicableSuggestion(finding(2, 2, ["x"], "src/other.ts"), files),
    ].map((result) => (result.ok ? "applies" : result.reason))
    expect(reasons).toEqual([
      "lines 10-10 are not all in one hunk of the diff",
      "lines 4-21 are not all in one hunk of the diff",
      "the finding has no line",
      "the file has no new side",
    ])
  })

  test("refuses a replacement that leaves code out, holds a fence, or changes nothing", () => {
    const reasons = [
      applicableSuggestion(finding(22, 20, ["export function tail() {", "  // ...", "}"]), files),
      applicableSuggestion(finding(21, 21, ["…"]), files),
      applicableSuggestion(finding(21, 21, ["```", "  return run(code)"]), files),
      applicableSuggestion(finding(21, 21, ["  return eval(code)"]), files),
    ].map((result) => (result.ok ? "applies" : result.reason))
    expect(reasons).toEqual([
      "the replacement leaves code out (a `...` line)",
      "the replacement leaves code out (a `...` line)",
      "the replacement holds a code fence",
      "the replacement is the code as it is",
    ])
    // A spread or a rest parameter is code, not a stand-in.
    expect(applicableSuggestion(finding(21, 21, ["  return run(...args)"]), files).ok).toBe(true)
  })
})
