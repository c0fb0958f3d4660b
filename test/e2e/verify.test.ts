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

// A third critical, on the login's first line: the verifier "confirms" it with a quote that is not there.
const returnFinding = {
  severity: "critical" as const,
  file: "src/auth/login.ts",
  line: 3,
  category: "code-quality",
  title: "Login result ignored",
  body: "The caller never checks what the query returned.",
}

/**
 * A verifier that confirms the SQL finding quoting line 2 of the login file, "confirms" the ignored
 * result with a quote that is nowhere in the file, and disputes the password finding with a reason.
 */
function verifier(request: RecordedRequest) {
  const findings = [...request.lastUser.matchAll(/<finding number="(\d+)"[^>]*>\n<title>([^<]*)<\/title>/g)]
  const confirmed = (number: string, quote: string, line: number) => ({
    finding: Number(number),
    confirmed: true,
    reason: "the code does what the finding says",
    evidence: [{ file: "src/auth/login.ts", start_line: line, end_line: line, quote }],
  })
  return text(
    `I read src/auth/login.ts.\n${JSON.stringify({
      verdicts: findings.map(([, number, title]) =>
        /SQL/.test(title!)
          ? confirmed(number!, "SELECT * FROM users WHERE name", 2)
          : /ignored/.test(title!)
            ? confirmed(number!, "this text is nowhere in the file", 3)
            : { finding: Number(number), confirmed: false, reason: "there is no password in this file" },
      ),
    })}`,
  )
}

describe("verified blockers", () => {
  // One review, three criticals, one verifier session: a confirmation with the lines it read stands; a
  // reasoned dispute lowers; a confirmation whose quote is not at the lines it names counts for
  // nothing and lowers nothing (the critical stands, unverified). The verifier's failures (garbage,
  // cut off, evidence from another file) are in approval.test.ts, on GitLab and GitHub.
  test("the verifier keeps the critical it confirms, lowers the one it disputes, and one with evidence that does not check out stands unverified", async () => {
    const scenario = await createScenario({
      replies: {
        "fake/security": findingsReply([sqlFinding, secretFinding, returnFinding]),
        "fake/verifier": verifier,
      },
      config: {
        verify: "critical",
        models: {
          top: ["fake/coordinator", "fake/verifier"],
          standard: ["fake/coordinator"],
          light: ["fake/coordinator"],
        },
      },
    })
    const run = await scenario.run()
    expect(run.code, run.stderr).toBe(2)
    const record = run.record!
    const byTitle = (title: string) => record.findings.find((finding) => finding.title === title)!
    expect(byTitle(sqlFinding.title)).toMatchObject({
      severity: "critical",
      verification: { status: "confirmed", by: "fake/verifier", evidence: ["src/auth/login.ts:2-2"] },
    })
    const secret = byTitle(secretFinding.title)
    expect(secret).toMatchObject({
      severity: "warning",
      verification: {
        status: "not_confirmed",
        originalSeverity: "critical",
        reason: "there is no password in this file",
      },
    })
    expect(secret.body).toContain("Disputed by the verifier (there is no password in this file)")
    expect(record.notes.join("\n")).toContain(
      'verifier: "Hard-coded admin password" (src/auth/login.ts:1) was disputed',
    )
    expect(byTitle(returnFinding.title)).toMatchObject({
      severity: "critical",
      verification: {
        status: "unverified",
        reason: "the verifier confirmed it without evidence from the finding's code that checks out",
      },
    })
    expect(record.notes).toContain(
      'verifier: evidence for "Login result ignored" (src/auth/login.ts:3) ignored: src/auth/login.ts:3-3: the quote is not at those lines',
    )
    expect(record.decision).toBe("significant_concerns")
    expect(record.usage.byAgent.verifier).toBeDefined()
    const asked = scenario.server.requests.filter((request) => request.model === "verifier")
    expect(asked.length).toBeGreaterThan(0)
    expect(asked[0]!.tools.sort()).toEqual(["glob", "grep", "read"])
  })
})
