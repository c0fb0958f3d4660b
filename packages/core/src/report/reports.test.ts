import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import * as z from "zod"
import { findingFingerprints } from "../judge/fingerprints"
import { type ReviewFinding, ReviewRecord } from "../judge/review-record"
import { codeQualityReport, sarifFingerprintKey, sarifReport, writeReports } from "./reports"

// docs/gitlab.md#code-quality-report: the fields GitLab's Code Quality reads, nothing else.
const CodeQualityEntry = z
  .object({
    description: z.string().min(1),
    check_name: z.string().min(1),
    fingerprint: z.string().min(1),
    severity: z.enum(["info", "minor", "major", "critical", "blocker"]),
    location: z
      .object({
        path: z
          .string()
          .min(1)
          .refine((path) => !path.startsWith("/") && !path.startsWith("./") && !path.includes("\\"), "repo-relative"),
        lines: z.object({ begin: z.number().int().positive() }).strict(),
      })
      .strict(),
  })
  .strict()

const sql: ReviewFinding = {
  id: "f1",
  reviewer: "security",
  severity: "critical",
  category: "security",
  file: "src/db.ts",
  line: 12,
  title: "SQL built from request input",
  body: "The query concatenates `req.query.id`:\n\n```ts\ndb.run(`SELECT * FROM t WHERE id = ${id}`)\n```\nUse parameters.",
  status: "new",
  thread: null,
}
const loop: ReviewFinding = {
  id: "f2",
  reviewer: "performance",
  severity: "warning",
  category: "performance",
  file: "src/list.ts",
  line: 40,
  title: "Quadratic loop over users",
  body: "Index by id.",
  status: "persisting",
  thread: "d1",
}
const docs: ReviewFinding = {
  id: "f3",
  reviewer: "documentation",
  severity: "suggestion",
  category: "Code Quality",
  file: "docs/my guide.md",
  line: null,
  title: "Document the new flag",
  body: "",
  status: "new",
  thread: null,
}

function record(findings: ReviewFinding[]): ReviewRecord {
  return ReviewRecord.parse({
    decision: "significant_concerns",
    tier: "full",
    breakGlass: false,
    injectionSuspected: false,
    findings,
    resolved: [],
    dismissed: [],
    stillOpen: [],
    coverage: { reviewedFiles: 3, filtered: [], failedReviewers: [], complete: true, unjudgedFindings: 0 },
    usage: { byAgent: {}, byModel: {}, costUsd: 0, cacheHitRate: 0 },
    durationMs: 1000,
    reasons: [],
    summary: "One injection.",
    answer: null,
    notes: [],
  })
}

describe("codeQualityReport", () => {
  test("every entry has exactly the fields GitLab's Code Quality reads", () => {
    const report = codeQualityReport(record([sql, loop, docs]))
    expect(report).toHaveLength(3)
    for (const entry of report) expect(CodeQualityEntry.safeParse(entry).error).toBeUndefined()
  })

  test("maps severities critical→critical, warning→major, suggestion→minor", () => {
    expect(codeQualityReport(record([sql, loop, docs])).map((entry) => entry.severity)).toEqual([
      "critical",
      "major",
      "minor",
    ])
  })

  test("names the check after the canonical category and puts a file-level finding on line 1", () => {
    const [first, , third] = codeQualityReport(record([sql, loop, docs]))
    expect(first?.check_name).toBe("opencode-reviewer/security")
    expect(first?.location).toEqual({ path: "src/db.ts", lines: { begin: 12 } })
    expect(third?.check_name).toBe("opencode-reviewer/code-quality")
    expect(third?.location).toEqual({ path: "docs/my guide.md", lines: { begin: 1 } })
  })

  test("describes a finding as one line of text: title, then the body without code fences", () => {
    const [first, , third] = codeQualityReport(record([sql, loop, docs]))
    expect(first?.description).toBe(
      "SQL built from request input — The query concatenates `req.query.id`: db.run(`SELECT * FROM t WHERE id = ${id}`) Use parameters.",
    )
    expect(third?.description).toBe("Document the new flag")
  })

  test("cuts a long description at 500 characters and strips invisible characters", () => {
    const long = { ...sql, title: "Hidden\u202E text\u200B", body: "word ".repeat(300) }
    const description = codeQualityReport(record([long]))[0]?.description ?? ""
    expect([...description].length).toBeLessThanOrEqual(500)
    expect([...description].length).toBeGreaterThan(490)
    expect(description.startsWith("Hidden text — word word")).toBe(true)
    expect(description.endsWith("…")).toBe(true)
    expect(description).not.toMatch(/[\n\u200B\u202E]/)
  })

  test("normalises the path to repo-relative with forward slashes", () => {
    expect(codeQualityReport(record([{ ...sql, file: "./src\\db.ts" }]))[0]?.location.path).toBe("src/db.ts")
  })

  test("an empty review gives an empty array", () => {
    expect(codeQualityReport(record([]))).toEqual([])
  })
})

describe("fingerprints", () => {
  const fingerprint = (finding: ReviewFinding) => codeQualityReport(record([finding]))[0]?.fingerprint

  test("are 32 hex characters and the same on every run", () => {
    expect(fingerprint(sql)).toMatch(/^[0-9a-f]{32}$/)
    expect(fingerprint(structuredClone(sql))).toBe(fingerprint(sql))
  })

  test("stay the same when the code moves to another line or the wording of the body changes", () => {
    expect(fingerprint({ ...sql, line: 250 })).toBe(fingerprint(sql))
    expect(fingerprint({ ...sql, line: null })).toBe(fingerprint(sql))
    expect(fingerprint({ ...sql, body: "Different explanation." })).toBe(fingerprint(sql))
  })

  test("ignore case, spacing, Markdown quotes and trailing punctuation in the title", () => {
    expect(fingerprint({ ...sql, title: "  sql BUILT from   `request` input. " })).toBe(fingerprint(sql))
    expect(fingerprint({ ...sql, category: "Security" })).toBe(fingerprint(sql))
  })

  test("differ for another title, file or category", () => {
    const base = fingerprint(sql)
    expect(fingerprint({ ...sql, title: "SQL built from a cookie" })).not.toBe(base)
    expect(fingerprint({ ...sql, file: "src/other.ts" })).not.toBe(base)
    expect(fingerprint({ ...sql, category: "performance" })).not.toBe(base)
  })

  test("are unique when two findings share category, file and title, and stable when both move", () => {
    const first = { ...sql, id: "f1", line: 10 }
    const second = { ...sql, id: "f2", line: 20 }
    const report = codeQualityReport(record([first, second, loop]))
    const prints = report.map((entry) => entry.fingerprint)
    expect(new Set(prints).size).toBe(3)
    expect(prints[0]).toBe(fingerprint(sql))

    const moved = codeQualityReport(record([{ ...second, line: 35 }, { ...first, line: 25 }, loop])).map(
      (entry) => entry.fingerprint,
    )
    expect(moved).toEqual([prints[1], prints[0], prints[2]])
  })

  test("findingFingerprints returns one per finding in the given order", () => {
    const prints = findingFingerprints([sql, loop])
    expect(prints).toEqual(codeQualityReport(record([sql, loop])).map((entry) => entry.fingerprint))
    expect(findingFingerprints([loop, sql])).toEqual([prints[1], prints[0]])
  })
})

describe("sarifReport", () => {
  const log = sarifReport(record([sql, loop, docs, { ...sql, id: "f4", line: 30 }]), {
    toolVersion: "0.1.0",
    informationUri: "https://example.com/opencode-reviewer",
  })
  const run = log.runs[0]

  test("is a SARIF 2.1.0 log with one run of opencode-reviewer", () => {
    expect(log.version).toBe("2.1.0")
    expect(log.$schema).toMatch(/sarif-2\.1\.0/)
    expect(log.runs).toHaveLength(1)
    expect(run.tool.driver).toMatchObject({
      name: "opencode-reviewer",
      version: "0.1.0",
      semanticVersion: "0.1.0",
      informationUri: "https://example.com/opencode-reviewer",
    })
    expect(JSON.parse(JSON.stringify(log))).toEqual(log)
  })

  test("has one rule per category, and every result points at an existing rule", () => {
    expect(run.tool.driver.rules.map((rule) => rule.id)).toEqual(["code-quality", "performance", "security"])
    expect(run.results).toHaveLength(4)
    for (const result of run.results) {
      expect(run.tool.driver.rules[result.ruleIndex]?.id).toBe(result.ruleId)
    }
  })

  test("maps severities to levels critical→error, warning→warning, suggestion→note", () => {
    expect(run.results.map((result) => result.level)).toEqual(["error", "warning", "note", "error"])
  })

  test("locates results by relative, percent-encoded URI and omits the region of a file-level finding", () => {
    const [first, , third] = run.results
    expect(first?.locations[0]?.physicalLocation).toEqual({
      artifactLocation: { uri: "src/db.ts", uriBaseId: "%SRCROOT%" },
      region: { startLine: 12 },
    })
    expect(third?.locations[0]?.physicalLocation).toEqual({
      artifactLocation: { uri: "docs/my%20guide.md", uriBaseId: "%SRCROOT%" },
    })
    for (const result of run.results) {
      const uri = result.locations[0]?.physicalLocation.artifactLocation.uri ?? ""
      expect(uri).not.toMatch(/^(?:[a-z][a-z0-9+.-]*:|\/)/i)
      expect(new URL(uri, "file:///repo/").pathname.startsWith("/repo/")).toBe(true)
    }
  })

  test("uses the Code Quality fingerprints as partial fingerprints", () => {
    const quality = codeQualityReport(record([sql, loop, docs, { ...sql, id: "f4", line: 30 }]))
    expect(run.results.map((result) => result.partialFingerprints[sarifFingerprintKey])).toEqual(
      quality.map((entry) => entry.fingerprint),
    )
  })

  test("carries the message, the baseline state and the finding's identity", () => {
    const [first, second] = run.results
    expect(first?.message.text).toBe(`${sql.title}\n\n${sql.body}`)
    expect(first?.baselineState).toBe("new")
    expect(second?.baselineState).toBe("unchanged")
    expect(second?.properties).toEqual({ findingId: "f2", reviewer: "performance", severity: "warning" })
  })

  test("an empty review gives a run without rules or results, and no informationUri unless given", () => {
    const empty = sarifReport(record([]), { toolVersion: "dev" })
    expect(empty.runs[0].results).toEqual([])
    expect(empty.runs[0].tool.driver).toEqual({ name: "opencode-reviewer", version: "dev", rules: [] })
  })
})

describe("writeReports", () => {
  const dirs: string[] = []
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
  })

  test("writes both files beside review.json, UTF-8 without BOM, and returns their paths", async () => {
    const root = await mkdtemp(join(tmpdir(), "reports-"))
    dirs.push(root)
    const dir = join(root, "out")
    const review = record([{ ...sql, title: "Ünïcode title" }, loop])
    const paths = await writeReports(dir, review, { toolVersion: "0.1.0" })
    expect(paths).toEqual({ codeQuality: join(dir, "gl-code-quality-report.json"), sarif: join(dir, "review.sarif") })

    const quality = await readFile(paths.codeQuality)
    expect([...quality.subarray(0, 3)]).not.toEqual([0xef, 0xbb, 0xbf])
    expect(quality[0]).toBe("[".charCodeAt(0))
    const entries: unknown = JSON.parse(quality.toString("utf8"))
    expect(entries).toEqual(codeQualityReport(review))
    expect(z.array(CodeQualityEntry).safeParse(entries).success).toBe(true)

    const sarif = await readFile(paths.sarif)
    expect(sarif[0]).toBe("{".charCodeAt(0))
    expect(JSON.parse(sarif.toString("utf8"))).toEqual(sarifReport(review, { toolVersion: "0.1.0" }))
  })
})
