import { describe, expect, test } from "vitest"
import type { Finding } from "../model/finding"
import {
  applyVerdict,
  checkedEvidence,
  evidenceWindowLines,
  findingsToVerify,
  parseVerdicts,
  readVerdicts,
  verifierPrompt,
} from "./verify"

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
    const verdicts = parseVerdicts(text, 3)!
    expect(verdicts[0]).toMatchObject({ confirmed: true, evidence: [{ file: "src/db.ts", startLine: 2, endLine: 2 }] })
    expect(verdicts[1]).toMatchObject({ confirmed: false, reason: "escaped" })
    expect(verdicts[2]).toBeNull()
    expect(parseVerdicts("no json here {broken", 1)).toBeNull()
  })

  test("a malformed entry, or a finding given two different verdicts, is no verdict; the well-formed others stand", () => {
    const text = JSON.stringify({
      verdicts: [
        { finding: 1, confirmed: "yes" },
        { finding: 2, confirmed: false, reason: "no" },
        { finding: 2, confirmed: true, reason: "yes" },
        { finding: 3, confirmed: false, reason: "the value is a constant" },
      ],
    })
    expect(parseVerdicts(text, 3)).toEqual([
      null,
      null,
      { confirmed: false, reason: "the value is a constant", evidence: [] },
    ])
  })

  test("the finish reason is read first: an answer cut off, or that did not end normally, gives no verdict at all", () => {
    const whole = JSON.stringify({ verdicts: [{ finding: 1, confirmed: false, reason: "no" }] })
    expect(readVerdicts({ text: whole, finish: "stop" }, 1)).toMatchObject({ unusable: null })
    expect(readVerdicts({ text: whole, finish: "length" }, 1)).toEqual({
      verdicts: [null],
      unusable: "the verifier's answer was cut off at its output limit",
    })
    expect(readVerdicts({ text: whole, finish: "content-filter" }, 1).unusable).toBe(
      'the verifier\'s answer ended with finish "content-filter", not a complete answer',
    )
    expect(readVerdicts({ text: "I think they are all fine.", finish: "stop" }, 1).unusable).toBe(
      "the verifier's answer held no verdicts (it was not the JSON it was asked for)",
    )
  })

  test("evidence counts only when its quote is at the lines it names, in the finding's own code", () => {
    const quote = "db.query(`SELECT * FROM t"
    const check = (evidence: { file: string; startLine: number; endLine: number }, of = finding()) =>
      checkedEvidence([{ ...evidence, quote }], of, read)
    expect(check({ file: "src/db.ts", startLine: 2, endLine: 2 })).toEqual({ accepted: ["src/db.ts:2-2"], ignored: [] })
    expect(check({ file: "./src/db.ts", startLine: 2, endLine: 2 }).accepted).toEqual(["src/db.ts:2-2"])
    expect(check({ file: "src/db.ts", startLine: 1, endLine: 1 }).ignored).toEqual([
      "src/db.ts:1-1: the quote is not at those lines",
    ])
    expect(check({ file: "src/db.ts", startLine: 2, endLine: 9 }).ignored).toEqual([
      "src/db.ts:2-9: the file has no such lines",
    ])
    // From another file: ignored, whatever it quotes, unless the finding names that file.
    const elsewhere = (path: string) => (path === "package.json" ? `{\n  ${quote}\n}` : read(path))
    expect(checkedEvidence([{ file: "package.json", startLine: 2, endLine: 2, quote }], finding(), elsewhere)).toEqual({
      accepted: [],
      ignored: ["package.json:2-2: not the finding's file (src/db.ts) nor a file it names"],
    })
    expect(
      checkedEvidence(
        [{ file: "package.json", startLine: 2, endLine: 2, quote }],
        finding({ body: "The query comes from the script in package.json." }),
        elsewhere,
      ).accepted,
    ).toEqual(["package.json:2-2"])
    // Far from the finding's line in its own file: ignored; a file-level finding takes any line.
    const long = (path: string) => (path === "src/db.ts" ? `${"\n".repeat(99)}${quote}\n` : null)
    expect(
      checkedEvidence([{ file: "src/db.ts", startLine: 100, endLine: 100, quote }], finding(), long).ignored,
    ).toEqual([`src/db.ts:100-100: more than ${evidenceWindowLines} lines from the finding's line 2`])
    expect(
      checkedEvidence([{ file: "src/db.ts", startLine: 100, endLine: 100, quote }], finding({ line: null }), long)
        .accepted,
    ).toEqual(["src/db.ts:100-100"])
  })

  test("only an explicit dispute with a reason lowers a finding; anything else keeps its severity, unverified, and says why", () => {
    const kept = applyVerdict(finding(), { confirmed: true, reason: "real", evidence: [] }, ["src/db.ts:2-2"], "m/top")
    expect(kept.finding.severity).toBe("critical")
    expect(kept.verification).toMatchObject({ status: "confirmed", by: "m/top", originalSeverity: "critical" })
    expect(kept.finding.verification).toEqual(kept.verification)

    const disputed = applyVerdict(
      finding(),
      { confirmed: false, reason: "the name is escaped upstream", evidence: [] },
      [],
      "m/top",
    )
    expect(disputed.finding.severity).toBe("warning")
    expect(disputed.verification.status).toBe("not_confirmed")
    expect(disputed.finding.body).toContain("Disputed by the verifier (the name is escaped upstream)")
    expect(
      applyVerdict(finding({ severity: "warning" }), { confirmed: false, reason: "no", evidence: [] }, [], "m").finding
        .severity,
    ).toBe("suggestion")

    const cases: [Parameters<typeof applyVerdict>[1], string | null, string][] = [
      [null, null, "the verifier gave no verdict on it"],
      [
        { confirmed: true, reason: "trust me", evidence: [] },
        null,
        "the verifier confirmed it without evidence from the finding's code that checks out",
      ],
      [{ confirmed: false, reason: "", evidence: [] }, null, "the verifier disputed it without saying why"],
      [
        { confirmed: false, reason: "fine", evidence: [] },
        "the verifier's answer was cut off at its output limit",
        "the verifier's answer was cut off at its output limit",
      ],
    ]
    for (const [verdict, unusable, reason] of cases) {
      const outcome = applyVerdict(finding(), verdict, [], "m/top", unusable)
      expect(outcome.finding.severity).toBe("critical")
      expect(outcome.verification).toMatchObject({ status: "unverified", reason, originalSeverity: "critical" })
      expect(outcome.finding.body).toContain(`Not verified (${reason}); it stands as critical.`)
    }
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
