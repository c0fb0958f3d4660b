import { describe, expect, test } from "vitest"
import { assessCoverage, capForCoverage } from "./coverage"

const six = ["security", "code-quality", "performance", "compliance", "documentation", "agents-md"]

describe("assessCoverage", () => {
  test("every reviewer finished: complete", () => {
    expect(assessCoverage(six, [])).toEqual({ complete: true, reasons: [] })
  })

  test("any planned reviewer that did not finish makes it incomplete: one of six, naming it with its error", () => {
    expect(assessCoverage(six, [{ name: "documentation", error: "timeout" }])).toEqual({
      complete: false,
      reasons: ["1 of 6 planned reviewers did not finish (documentation: timeout)"],
    })
  })

  test("half failed is incomplete too, each named with its error", () => {
    const missing = ["code-quality", "performance", "compliance"].map((name) => ({ name, error: "APIError 503: busy" }))
    const verdict = assessCoverage(six, missing)
    expect(verdict.complete).toBe(false)
    expect(verdict.reasons).toEqual([
      "3 of 6 planned reviewers did not finish (code-quality: APIError 503: busy; performance: APIError 503: busy; compliance: APIError 503: busy)",
    ])
  })

  test("the security reviewer failing is named first", () => {
    const verdict = assessCoverage(six, [{ name: "security", error: "no output for 60 s" }])
    expect(verdict).toEqual({
      complete: false,
      reasons: [
        "the security review did not run",
        "1 of 6 planned reviewers did not finish (security: no output for 60 s)",
      ],
    })
  })

  test("the one reviewer of a trivial review failing", () => {
    expect(assessCoverage(["code-quality"], [{ name: "code-quality", error: "did not run" }]).complete).toBe(false)
  })

  test("nothing planned (nothing to read) is complete", () => {
    expect(assessCoverage([], []).complete).toBe(true)
  })

  test("more changed files unread than read, or an unknown number past a provider's limits, is incomplete", () => {
    expect(assessCoverage(six, [], { read: 3, unread: 2 }).complete).toBe(true)
    expect(assessCoverage(six, [], { read: 1, unread: 2 })).toEqual({
      complete: false,
      reasons: ["2 changed files could not be read, against 1 reviewed"],
    })
    expect(assessCoverage(six, [], { read: 1_000, unread: null }).reasons).toEqual([
      "an unknown number of changed files could not be read, against 1,000 reviewed",
    ])
    expect(assessCoverage([], [], { read: 0, unread: 1 }).complete).toBe(false)
  })
})

describe("capForCoverage", () => {
  const incomplete = { complete: false, reasons: ["6 of 6 planned reviewers did not finish (…)"] }

  test("an approval of an incomplete review becomes minor_issues, the reason first", () => {
    for (const decision of ["approved", "approved_with_comments"] as const) {
      const capped = capForCoverage(decision, ["no findings"], incomplete)
      expect(capped.decision).toBe("minor_issues")
      expect(capped.reasons[0]).toMatch(/^the review is incomplete: 6 of 6 planned reviewers did not finish/)
      expect(capped.reasons[0]).toContain("not approved")
      expect(capped.reasons[1]).toBe("no findings")
    }
  })

  test("a worse decision from the findings that did arrive stands", () => {
    const capped = capForCoverage("significant_concerns", ["1 critical finding: SQL"], incomplete)
    expect(capped).toEqual({
      decision: "significant_concerns",
      reasons: ["1 critical finding: SQL", "the review is incomplete: 6 of 6 planned reviewers did not finish (…)"],
    })
  })

  test("a complete review is left alone", () => {
    expect(capForCoverage("approved", ["no findings"], { complete: true, reasons: [] })).toEqual({
      decision: "approved",
      reasons: ["no findings"],
    })
  })
})
