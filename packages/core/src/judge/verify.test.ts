import { describe, expect, test } from "vitest"
import type { Finding } from "../model/finding"
import { applyVerdict, checkedEvidence, findingsToVerify, parseVerdicts, verifierPrompt } from "./verify"

const finding = (over: Partial<Finding> = {}): Finding => ({
  severity: "critical",
  file: "src/db.ts",
  line: 2,
  category: "security",
  title: "SQL built from input",
  body: "The name is concatenated.",
  ...over,
})
const file = "import { db } from './db'\nexport const q = (name) => db.query(`SELECT * FROM t WHERE n = '${name}'`)\n"
const read = (path: string) => (path === "src/db.ts" ? file : null)

describe("verification", () => {
  test("the level picks criticals, or criticals and warnings, or nothing", () => {
    const findings = [finding(), finding({ severity: "warning" }), finding({ severity: "suggestion" })]
    expect(findingsToVerify(findings, "critical")).toEqual([0])
    expect(findingsToVerify(findings, "warning")).toEqual([0, 1])
    expect(findingsToVerify(findings, "off")).toEqual([])
  })

  test("verdicts are read from the last JSON object with verdicts, prose around it or not", () => {
    const text = `I read the file.\n{"note": 1}\n{"verdicts": [{"finding": 2, "confirmed": false, "reason": "escaped"}, {"finding": 1, "confirmed": true, "reason": "real", "evidence": [{"file": "src/db.ts", "start_line": 2, "end_line": 2, "quote": "WHERE n = '\${name}'"}]}]}`
    const verdicts = parseVerdicts(text, 3)
    expect(verdicts[0]).toMatchObject({ confirmed: true, evidence: [{ file: "src/db.ts", startLine: 2, endLine: 2 }] })
    expect(verdicts[1]).toMatchObject({ confirmed: false, reason: "escaped" })
    expect(verdicts[2]).toBeNull()
    expect(parseVerdicts("no json here {broken", 1)).toEqual([null])
  })

  test("evidence counts only when its quote is at the lines it names", () => {
    const quote = "db.query(`SELECT * FROM t"
    expect(checkedEvidence([{ file: "src/db.ts", startLine: 2, endLine: 2, quote }], read)).toEqual(["src/db.ts:2-2"])
    expect(checkedEvidence([{ file: "src/db.ts", startLine: 1, endLine: 1, quote }], read)).toEqual([])
    expect(checkedEvidence([{ file: "src/db.ts", startLine: 2, endLine: 9, quote }], read)).toEqual([])
    expect(checkedEvidence([{ file: "src/other.ts", startLine: 1, endLine: 1, quote }], read)).toEqual([])
  })

  test("a confirmed finding stays; an unconfirmed one, or one whose evidence fails, is one severity lower and says why", () => {
    const kept = applyVerdict(finding(), { confirmed: true, reason: "real", evidence: [] }, ["src/db.ts:2-2"], "m/top")
    expect(kept.finding.severity).toBe("critical")
    expect(kept.verification).toMatchObject({ status: "confirmed", by: "m/top", originalSeverity: "critical" })
    const rejected = applyVerdict(
      finding(),
      { confirmed: false, reason: "the name is escaped upstream", evidence: [] },
      [],
      "m/top",
    )
    expect(rejected.finding.severity).toBe("warning")
    expect(rejected.finding.body).toContain("Not confirmed by the verifier (the name is escaped upstream)")
    const unsupported = applyVerdict(finding(), { confirmed: true, reason: "trust me", evidence: [] }, [], "m/top")
    expect(unsupported.verification).toMatchObject({
      status: "not_confirmed",
      reason: "the verifier's evidence does not match the code",
    })
    expect(applyVerdict(finding({ severity: "warning" }), null, [], "m").finding.severity).toBe("suggestion")
  })

  test("the prompt carries each finding escaped, numbered, with its patch", () => {
    const { user } = verifierPrompt(
      [{ finding: finding({ title: "a <b> & c" }), patchFile: "/w/diff/src__db.ts.patch" }],
      "/repo",
    )
    expect(user).toContain('<finding number="1" severity="critical" file="src/db.ts" line="2">')
    expect(user).toContain("<title>a &lt;b&gt; &amp; c</title>")
    expect(user).toContain("<patch>/w/diff/src__db.ts.patch</patch>")
  })
})
