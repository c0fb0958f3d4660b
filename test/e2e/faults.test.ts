import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { statusReply, toolCall } from "@opencode-reviewer/testkit"
import { cleanUp, gitlabScenario, specialists, summaryNotes } from "./harness"

// The faults a pipeline really meets, each end to end: the real opencode binary, the scripted
// model and the GitLab fake. Each test names the behaviour it proves.

afterEach(cleanUp)

const unavailable = statusReply(503, { message: "Service unavailable (scripted)", headers: { "retry-after-ms": "0" } })

describe("a review nobody ran", () => {
  test("every reviewer failing: no approval, an incomplete summary, exit 1", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    for (const name of specialists) scenario.setReply(`fake/${name}`, unavailable)
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toMatch(/error: the review is incomplete: the security review did not run/)
    expect(run.record).toMatchObject({ decision: "minor_issues", coverage: { complete: false } })
    expect(run.record!.findings).toEqual([])
    // Every reviewer the plan chose is listed as failed, each with the provider's error.
    const plan = JSON.parse(await readFile(join(scenario.outputDir, "work", "plan.json"), "utf8")) as { agents: { name: string; role: string }[] }
    const planned = plan.agents.filter((agent) => agent.role === "reviewer").map((agent) => agent.name)
    expect(planned.length).toBeGreaterThanOrEqual(6)
    expect(run.record!.coverage.failedReviewers.map((reviewer) => reviewer.name).sort()).toEqual([...planned].sort())
    for (const reviewer of run.record!.coverage.failedReviewers) expect(reviewer.error).toMatch(/503/)
    expect(fake.state.approvals).toEqual([])
    const [summary, ...more] = summaryNotes(fake)
    expect(more).toEqual([])
    expect(summary!.body).toContain("AI code review: ⚠️ incomplete, not approved")
    expect(summary!.body).not.toContain("✅")
    expect(summary!.body).toMatch(/Incomplete review\.\*\* .*security/)
    const markdown = await readFile(join(scenario.outputDir, "review.md"), "utf8")
    expect(markdown).toContain("# Code review: incomplete, not approved")
  })

  test("a coordinator that never calls spawn_reviewers: every planned reviewer is listed as not run, nothing approved", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    scenario.setReply("fake/coordinator", (request) =>
      request.toolResults.length === 0
        ? toolCall("review_submit_review", { review: "<review><summary>Looks good to me.</summary><findings/></review>" })
        : { type: "text", text: "Submitted." },
    )
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(1)
    expect(run.record!.decision).toBe("minor_issues")
    expect(run.record!.coverage.failedReviewers.every((reviewer) => reviewer.error === "did not run")).toBe(true)
    expect(run.stderr).toMatch(/hint: the coordinator did not run every planned reviewer/)
    expect(fake.state.approvals).toEqual([])
    const summary = summaryNotes(fake)[0]!.body
    // The model's "looks good" is shown as its words, under a headline and warning that say what did not run.
    expect(summary.indexOf("Incomplete review.")).toBeLessThan(summary.indexOf("Looks good to me."))
    expect(summary).not.toContain("✅")
  })
})
