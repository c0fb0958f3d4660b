import type { Finding } from "@opencode-reviewer/core/model/finding"
import { parseFindings } from "@opencode-reviewer/core/protocol/findings-xml"
import { describe, expect, test } from "vitest"
import { reviewerOutcome } from "./fake-driver"
import { renderFailure, renderResults } from "./render"

const finding = (severity: Finding["severity"], title: string, body = "Why it matters."): Finding => ({
  severity,
  file: "src/app.ts",
  line: 3,
  category: "security",
  title,
  body,
})

// Each reviewer_result's findings, read back with the same parser the coordinator's input follows.
const readBack = (output: string) =>
  [...output.matchAll(/<reviewer_result ([^>]*?)(\/>|>([\s\S]*?)<\/reviewer_result>)/g)].map((match) => ({
    attributes: Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]])),
    findings: match[3] === undefined ? null : parseFindings(match[3]),
  }))

describe("renderResults", () => {
  test("renders one compact document with a result per reviewer", () => {
    const { output, cut } = renderResults(
      [
        reviewerOutcome("security", { findings: [finding("critical", "SQL built from request input")] }),
        reviewerOutcome("performance", { status: "failed", error: "timeout after 5 min", findings: [] }),
        reviewerOutcome("documentation"),
      ],
      { plan: "/work/plan.json" },
    )
    expect(cut).toBe(0)
    expect(output.split("\n")[0]).toBe('<reviewer_results plan="/work/plan.json" reviewers="3" failed="1">')
    expect(output).toContain(
      '<reviewer_result name="performance" status="failed" model="fake/performance" duration_ms="1234" attempts="1" error="timeout after 5 min"/>',
    )
    expect(output).toContain(
      '<reviewer_result name="documentation" status="done" model="fake/documentation" duration_ms="1234" attempts="1">\n<findings/>\n</reviewer_result>',
    )
    const results = readBack(output)
    expect(results.map((result) => result.attributes.name)).toEqual(["security", "performance", "documentation"])
    expect(results[0]!.findings).toEqual({ ok: true, findings: [finding("critical", "SQL built from request input")] })
    expect(output.endsWith("</reviewer_results>")).toBe(true)
  })

  test("escapes attribute and body text, and drops characters XML cannot carry", () => {
    const { output } = renderResults(
      [
        reviewerOutcome("security", {
          status: "failed",
          error: 'APIError 500: <html> "bad" & worse\nline two\u0007',
          model: 'fake/"odd"',
        }),
        reviewerOutcome("code-quality", {
          findings: [finding("warning", "a < b && c > d", "Use `x & y` </body> here")],
        }),
      ],
      { plan: null, notes: ["not in the plan, ignored: <x>"] },
    )
    expect(output).toContain('model="fake/&quot;odd&quot;"')
    expect(output).toContain('error="APIError 500: &lt;html&gt; &quot;bad&quot; &amp; worse&#10;line two"')
    expect(output).not.toContain("\u0007")
    expect(output).toContain("<note>not in the plan, ignored: &lt;x&gt;</note>")
    const results = readBack(output)
    expect(results[1]!.findings).toEqual({
      ok: true,
      findings: [finding("warning", "a < b && c > d", "Use `x & y` </body> here")],
    })
  })

  test("lists the models tried when a reviewer failed back", () => {
    const { output } = renderResults(
      [reviewerOutcome("security", { model: "fake/b", modelsTried: ["fake/a", "fake/b"], attempts: 2 })],
      { plan: null },
    )
    expect(output).toContain('attempts="2" models_tried="fake/a fake/b"')
  })

  test("keeps the most severe findings and says how many were cut when the output would pass the limit", () => {
    const body = "x".repeat(900)
    const many = (severity: Finding["severity"], count: number, prefix: string) =>
      Array.from({ length: count }, (_, index) => finding(severity, `${prefix} ${index}`, body))
    const outcomes = [
      reviewerOutcome("security", { findings: [...many("suggestion", 30, "s-sug"), ...many("critical", 5, "s-crit")] }),
      reviewerOutcome("performance", {
        findings: [...many("warning", 20, "p-warn"), ...many("suggestion", 30, "p-sug")],
      }),
    ]
    const { output, cut } = renderResults(outcomes, { plan: "/w/plan.json", maxBytes: 40_000 })
    expect(Buffer.byteLength(output)).toBeLessThanOrEqual(40_000)
    expect(cut).toBeGreaterThan(0)
    const titles = readBack(output).flatMap((result) =>
      result.findings?.ok ? result.findings.findings.map((f) => f.title) : [],
    )
    expect(titles.length).toBe(85 - cut)
    for (let index = 0; index < 5; index += 1) expect(titles).toContain(`s-crit ${index}`)
    for (let index = 0; index < 20; index += 1) expect(titles).toContain(`p-warn ${index}`)
    // Suggestions fill what is left, in reviewer order.
    expect(titles.filter((title) => title.startsWith("p-sug"))).toHaveLength(Math.max(0, titles.length - 25 - 30))
    expect(output).toContain(`<note>${cut} less severe findings were left out to fit the tool output limit`)
    expect(output).toContain(
      '<reviewer_result name="security" status="done" model="fake/security" duration_ms="1234" attempts="1" findings="35" shown="',
    )
  })

  test("stays under the line limit too", () => {
    const outcomes = [
      reviewerOutcome("security", {
        findings: Array.from({ length: 600 }, (_, index) => finding("suggestion", `t${index}`, "b")),
      }),
    ]
    const { output, cut } = renderResults(outcomes, { plan: null, maxLines: 1_500 })
    expect(output.split("\n").length).toBeLessThanOrEqual(1_500)
    expect(cut).toBeGreaterThan(0)
  })

  test("stays under OpenCode's limits by default with seven reviewers' worth of long findings", () => {
    const outcomes = Array.from({ length: 7 }, (_, reviewer) =>
      reviewerOutcome(`r${reviewer}`, {
        findings: Array.from({ length: 40 }, (_, index) => finding("warning", `t${index}`, "y".repeat(400))),
      }),
    )
    const { output } = renderResults(outcomes, { plan: null })
    expect(Buffer.byteLength(output)).toBeLessThan(51_200)
    expect(output.split("\n").length).toBeLessThan(2_000)
  })

  test("renders a failure to run as an error document", () => {
    expect(renderFailure("OPENCODE_REVIEWER_WORK_DIR is not set", null)).toBe(
      '<reviewer_results reviewers="0" failed="0" status="error">\n<error>OPENCODE_REVIEWER_WORK_DIR is not set</error>\n</reviewer_results>',
    )
  })
})
