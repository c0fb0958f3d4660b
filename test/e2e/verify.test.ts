import { findingsReply, type RecordedRequest, text } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { cleanUp, createScenario, sqlFinding } from "./harness"

// Verified blockers end to end: the real pipeline, then one verifier session through a real
// `opencode serve` on a different top-tier model (fake/verifier), with the reviewers' read-only
// tools in the checkout. The scripted verifier confirms what its rule says and quotes the code;
// code checks the quote against the file before a critical may stand.

afterEach(cleanUp)

const secretFinding = {
  severity: "critical" as const,
  file: "src/auth/login.ts",
  line: 1,
  category: "security",
  title: "Hard-coded admin password",
  body: "The login compares against a password in the source.",
}

/** A verifier that confirms the findings whose title matches, quoting `quote` from `line` of the login file. */
function verifier(confirm: RegExp, quote: string, line: number) {
  return (request: RecordedRequest) => {
    const findings = [...request.lastUser.matchAll(/<finding number="(\d+)"[^>]*>\n<title>([^<]*)<\/title>/g)]
    return text(
      `I read src/auth/login.ts.\n${JSON.stringify({
        verdicts: findings.map(([, number, title]) =>
          confirm.test(title!)
            ? {
                finding: Number(number),
                confirmed: true,
                reason: "the query is built from the name",
                evidence: [{ file: "src/auth/login.ts", start_line: line, end_line: line, quote }],
              }
            : { finding: Number(number), confirmed: false, reason: "there is no password in this file" },
        ),
      })}`,
    )
  }
}

function scenarioWith(verifierReply: (request: RecordedRequest) => ReturnType<typeof text>, findings: object[]) {
  return createScenario({
    replies: { "fake/security": findingsReply(findings as never), "fake/verifier": verifierReply },
    config: {
      verify: "critical",
      models: {
        top: ["fake/coordinator", "fake/verifier"],
        standard: ["fake/coordinator"],
        light: ["fake/coordinator"],
      },
    },
  })
}

describe("verified blockers", () => {
  test("the verifier keeps the critical it confirms with the lines it read and lowers the one it rejects", async () => {
    const scenario = await scenarioWith(verifier(/SQL/, "SELECT * FROM users WHERE name", 2), [
      sqlFinding,
      secretFinding,
    ])
    const run = await scenario.run()
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    const sql = record.findings.find((finding) => finding.title === sqlFinding.title)!
    const secret = record.findings.find((finding) => finding.title === secretFinding.title)!
    expect(sql).toMatchObject({
      severity: "critical",
      verification: { status: "confirmed", by: "fake/verifier", evidence: ["src/auth/login.ts:2-2"] },
    })
    expect(secret).toMatchObject({
      severity: "warning",
      verification: {
        status: "not_confirmed",
        originalSeverity: "critical",
        reason: "there is no password in this file",
      },
    })
    expect(secret.body).toContain("Not confirmed by the verifier")
    expect(record.notes.join("\n")).toContain('verifier: "Hard-coded admin password"')
    expect(record.usage.byAgent.verifier).toBeDefined()
    const asked = scenario.server.requests.filter((request) => request.model === "verifier")
    expect(asked.length).toBeGreaterThan(0)
    expect(asked[0]!.tools.sort()).toEqual(["glob", "grep", "read"])
  })

  test("a confirmation whose quote is not at the lines it names does not count: the only critical is lowered, nothing blocks", async () => {
    const scenario = await scenarioWith(verifier(/SQL/, "this text is nowhere in the file", 2), [sqlFinding])
    const run = await scenario.run()
    expect(run.code, run.stderr).toBe(0)
    expect(run.record!.findings[0]).toMatchObject({
      severity: "warning",
      verification: { status: "not_confirmed", reason: "the verifier's evidence does not match the code" },
    })
    expect(run.record!.decision).not.toBe("significant_concerns")
  })
})
