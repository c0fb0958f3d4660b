import { writeFileSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { renderReviewXml } from "@opencode-reviewer/core"
import { findingsReply, statusReply, toolCall } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { cleanUp, gitlabScenario, judge, specialists, sqlFinding, summaryNotes, threads } from "./harness"

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
    const plan = JSON.parse(await readFile(join(scenario.outputDir, "work", "plan.json"), "utf8")) as {
      agents: { name: string; role: string }[]
    }
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

  test("reviewer findings cut to fit OpenCode's tool output are counted and disclosed, not silently dropped", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    const many = Array.from({ length: 160 }, (_, index) => ({
      severity: "suggestion" as const,
      file: "src/auth/login.ts",
      line: 1,
      category: "code-quality",
      title: `Naming nit number ${index + 1}`,
      body: `Consider a clearer name here (${index + 1}). `.repeat(12),
    }))
    scenario.setReply("fake/code-quality", findingsReply(many))
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(2)
    const cut = run.record!.coverage.unjudgedFindings
    expect(cut).toBeGreaterThan(0)
    expect(run.record!.notes).toContain(
      `${cut} less severe reviewer findings were left out of the coordinator's input to fit OpenCode's tool output limit and not judged`,
    )
    // The critical finding survived the cut (the most severe are kept first).
    expect(run.record!.findings.some((finding) => finding.severity === "critical")).toBe(true)
    expect(summaryNotes(fake)[0]!.body).toContain(`${cut} less severe reviewer findings were left out`)
  })

  test("a coordinator that never calls spawn_reviewers: every planned reviewer is listed as not run, nothing approved", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    scenario.setReply("fake/coordinator", (request) =>
      request.toolResults.length === 0
        ? toolCall("review_submit_review", {
            review: "<review><summary>Looks good to me.</summary><findings/></review>",
          })
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

describe("findings across pushes", () => {
  // A push that leaves the finding's code alone: a new file elsewhere.
  async function pushElsewhere(
    scenario: Awaited<ReturnType<typeof gitlabScenario>>["scenario"],
    fake: Awaited<ReturnType<typeof gitlabScenario>>["fake"],
    retries: number,
  ) {
    await scenario.repo.write({ "src/util.ts": `export const retries = ${retries}\n` })
    scenario.repo.commit("Add a constant")
    await fake.push()
  }

  // Two pushes that leave the finding's code alone, each reviewed: the second push's finding is
  // reworded (matched by its place and meaning), the third's re-categorised and renamed too, which
  // only the coordinator's own thread claim can carry.
  test("a reworded finding on unchanged code continues its thread (no duplicate, never resolved as fixed), and the coordinator's thread claim carries a re-categorised one", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    await scenario.run({ env })
    const [thread] = threads(fake)
    await pushElsewhere(scenario, fake, 3)
    scenario.setReply(
      "fake/security",
      findingsReply([{ ...sqlFinding, title: "User name concatenated into the SQL string" }]),
    )
    const reworded = await scenario.run({ env })
    expect(reworded.code, reworded.stderr).toBe(2)
    expect(threads(fake)).toHaveLength(1)
    expect(thread!.resolved).toBe(false)
    expect(thread!.notes.some((note) => /fixed in/i.test(note.body))).toBe(false)
    expect(reworded.record!.findings[0]).toMatchObject({ status: "persisting", thread: thread!.id })
    expect(reworded.record!.resolved).toEqual([])

    await pushElsewhere(scenario, fake, 4)
    // The coordinator names the thread it continues, as its prompt asks, for a finding nothing else would match.
    scenario.setReply("fake/coordinator", (request) => {
      if (request.toolResults.length === 0) return toolCall("spawn_reviewers", {})
      if (request.toolResults.length > 1) return { type: "text", text: "Submitted." }
      const id = /<review_thread id="([^"]+)"/.exec(request.lastUser)?.[1]
      const finding = {
        ...sqlFinding,
        category: "code-quality",
        title: "Unparameterised query",
        ...(id ? { thread: id } : {}),
      }
      return toolCall("review_submit_review", {
        review: renderReviewXml({ summary: "Still unfixed.", findings: [finding], answer: null }),
      })
    })
    const claimed = await scenario.run({ env })
    expect(claimed.code, claimed.stderr).toBe(2)
    expect(claimed.record!.findings[0]).toMatchObject({
      thread: thread!.id,
      status: "persisting",
      category: "code-quality",
    })
    expect(threads(fake)).toHaveLength(1)
    expect(thread!.resolved).toBe(false)
  }, 150_000)
})

describe("GitLab moving or refusing under the review", () => {
  test("the head moves while the review runs: the older sha is never approved, and the summary says what was reviewed", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    for (const name of specialists) scenario.setReply(`fake/${name}`, findingsReply([]))
    const reviewed = fake.state.versions.at(-1)!.headSha
    // A push lands after the reviewers ran and before the review is submitted.
    scenario.setReply("fake/coordinator", (request) => {
      if (request.toolResults.length === 1) {
        writeFileSync(join(scenario.repo.dir, "src/late.ts"), "export const late = true\n")
        scenario.repo.commit("A late push")
        void fake.push()
      }
      return judge(request)
    })
    const run = await scenario.run({ env })
    const moved = fake.state.versions.at(-1)!.headSha
    expect(moved).not.toBe(reviewed)
    // The decision stands for what was reviewed and the exit code follows it; nothing is approved.
    expect(run.record!.decision).toBe("approved")
    expect(run.code, run.stderr).toBe(0)
    expect(fake.state.approvals).toEqual([])
    expect(fake.state.requests.filter((request) => request.path.endsWith("/approve"))).toEqual([])
    expect(run.stderr).toContain(
      `GitLab: not approved — the merge request moved from ${reviewed.slice(0, 8)} to ${moved.slice(0, 8)}`,
    )
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain(`this review covers ${reviewed.slice(0, 8)} only`)
    expect(summary).toContain(`head \`${reviewed.slice(0, 8)}\``)
  })

  // GitLab's three known refusals of a DiffNote position, one per finding of one review: each
  // finding goes into the summary, and the review says so.
  test("GitLab refusing the DiffNote position (line_code can't be blank, position is incomplete, an outdated position): each finding goes into the summary, and the review says so", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    const refusals = [
      `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`,
      `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"], :position=>["is incomplete"]}`,
      `400 Bad request - Note {:position=>["is outdated"]}`,
    ]
    for (const message of refusals)
      fake.failNext({ method: "POST", path: /\/discussions$/ }, { status: 400, body: { message } })
    const findings = [1, 2, 3].map((line) => ({ ...sqlFinding, line, title: `${sqlFinding.title} (line ${line})` }))
    scenario.setReply("fake/security", findingsReply(findings))
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(2)
    expect(run.record!.findings).toHaveLength(3)
    expect(threads(fake)).toEqual([])
    expect(
      fake.state.requests.filter((request) => request.method === "POST" && /\/discussions$/.test(request.path)),
    ).toHaveLength(3)
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("Not on a diff line, so listed here (3)")
    for (const finding of findings) expect(summary).toContain(finding.title)
    expect(summary).toContain(sqlFinding.body)
    expect(summary).toContain("GitLab refused the line position")
    expect(run.stderr).toContain("3 in the summary")
  })
})

describe("two pipelines at once", () => {
  test("two quick pushes reviewed at the same time: one summary note, no duplicate thread, the newer head's summary", async () => {
    // GitLab itself stores a thread on an older version's SHAs (shown as outdated): "repository".
    const { scenario, fake, env } = await gitlabScenario({ fake: { positionShas: "repository" } })
    const firstHead = fake.state.versions.at(-1)!.headSha
    // Both reviews reach thread creation, then summary creation, at the same moment: each lists
    // the merge request, finds nothing of the other's, and creates.
    const threadsHeld = fake.holdTogether({ method: "POST", path: /\/merge_requests\/\d+\/discussions$/ }, 2)
    const summariesHeld = fake.holdTogether({ method: "POST", path: /\/merge_requests\/\d+\/notes$/ }, 2)
    const older = scenario.run({ env, outputDir: join(scenario.outputDir, "..", "pipeline-1") })
    // The second push lands once the first pipeline has read its change and is running the model.
    await scenario.server.wait(1, { match: (request) => request.model === "coordinator" && !request.isTitle })
    writeFileSync(join(scenario.repo.dir, "src/util.ts"), "export const retries = 3\n")
    scenario.repo.commit("A quick second push")
    await fake.push()
    const secondHead = fake.state.versions.at(-1)!.headSha
    const newer = scenario.run({ env, outputDir: join(scenario.outputDir, "..", "pipeline-2") })
    const [first, second] = await Promise.all([older, newer])
    await Promise.all([threadsHeld.arrived, summariesHeld.arrived])

    expect(first.code, first.stderr).toBe(2)
    expect(second.code, second.stderr).toBe(2)
    const [summary, ...duplicates] = summaryNotes(fake)
    expect(duplicates).toEqual([])
    expect(summary!.body).toContain(`head \`${secondHead.slice(0, 8)}\``)
    expect(threads(fake)).toHaveLength(1)
    // Two were created; the younger gave way (deleted), and nothing is approved.
    expect(fake.state.requests.filter((request) => request.method === "DELETE").length).toBeGreaterThanOrEqual(2)
    expect(fake.state.approvals).toEqual([])
    expect(first.stderr).toContain(`moved from ${firstHead.slice(0, 8)}`)
  })
})

describe("a review that cannot run", () => {
  // The scripted provider's key comes from FAKE_API_KEY, as a real provider block's would.
  async function keyedScenario() {
    const setup = await gitlabScenario()
    const config = JSON.parse(await readFile(setup.scenario.configFile, "utf8")) as {
      provider: { fake: { options: { apiKey: string } } }
    }
    config.provider.fake.options.apiKey = "{env:FAKE_API_KEY}"
    await writeFile(setup.scenario.configFile, JSON.stringify(config))
    return { ...setup, env: { ...setup.env, FAKE_API_KEY: "sk-test" } }
  }

  test("every model answering 401: exit 1 in seconds, the provider and the key to set named, a could-not-run note edited on the next run", async () => {
    const { scenario, fake, env } = await keyedScenario()
    const refused = statusReply(401, {
      message: "Incorrect API key provided",
      type: "invalid_request_error",
      code: "invalid_api_key",
    })
    for (const model of ["coordinator", ...specialists]) scenario.setReply(`fake/${model}`, refused)
    const started = performance.now()
    const run = await scenario.run({ env })
    const seconds = (performance.now() - started) / 1000
    expect(run.code, run.stderr).toBe(1)
    // Seconds, not the minute and more of retries or failbacks; the bound leaves room for a busy machine.
    expect(seconds).toBeLessThan(40)
    expect(run.stderr).toMatch(
      /error: an authentication problem stopped the review: provider fake at \S+ refused the credentials \(HTTP 401\)/,
    )
    expect(run.stderr).toContain("hint: set FAKE_API_KEY to a valid key for provider fake")
    expect(run.record).toBeNull()
    expect(JSON.parse(await readFile(join(scenario.outputDir, "review-error.json"), "utf8"))).toMatchObject({
      error: "ReviewRunError",
      hint: expect.stringContaining("FAKE_API_KEY"),
    })
    expect(await readFile(join(scenario.outputDir, "review.md"), "utf8")).toContain("# Code review: could not run")
    expect(fake.state.approvals).toEqual([])
    const [note, ...more] = summaryNotes(fake)
    expect(more).toEqual([])
    expect(note!.body).toContain("AI code review: could not run")
    expect(note!.body).not.toMatch(/✅|approved with|no findings/i)
    // A second failing run edits the same note.
    const again = await scenario.run({ env })
    expect(again.code).toBe(1)
    expect(summaryNotes(fake).map((candidate) => candidate.id)).toEqual([note!.id])
    expect(threads(fake)).toEqual([])
  })

  test("a key that is not set stops the review before OpenCode starts, naming the variable", async () => {
    const { scenario, fake, env } = await keyedScenario()
    const { FAKE_API_KEY: _unset, ...withoutKey } = env
    const run = await scenario.run({ env: withoutKey })
    expect(run.code, run.stderr).toBe(1)
    expect(run.stderr).toContain(
      "error: an authentication problem stops the review before it starts: provider fake (for review_coordinator",
    )
    expect(run.stderr).toContain("the config's apiKey is {env:FAKE_API_KEY}, and FAKE_API_KEY is not set")
    expect(run.stderr).toMatch(/hint: set FAKE_API_KEY/)
    expect(scenario.server.requests).toEqual([])
    expect(summaryNotes(fake)[0]!.body).toContain("FAKE_API_KEY is not set")
    expect(fake.state.approvals).toEqual([])
  })

  // Stand-in opencode binaries for the ways it fails to start, as a broken install or a crash would.
  async function brokenOpencode(
    scenario: Awaited<ReturnType<typeof gitlabScenario>>["scenario"],
    script: string,
  ): Promise<string> {
    const binary = join(scenario.outputDir, "..", `opencode-${Math.random().toString(36).slice(2)}`)
    await writeFile(binary, `#!/bin/sh\n${script}\n`, { mode: 0o755 })
    return binary
  }

  for (const [name, make, expected] of [
    [
      "the binary is missing",
      async () => "/nonexistent/opencode",
      /cannot start opencode at \/nonexistent\/opencode: ENOENT/,
    ],
    [
      "it exits at once",
      (scenario: Parameters<typeof brokenOpencode>[0]) =>
        brokenOpencode(scenario, 'echo "error: failed to load: libstdc++.so.6 not found" >&2\nexit 127'),
      /opencode exited with code 127 before printing anything: error: failed to load: libstdc\+\+/,
    ],
    [
      "it crashes after its first event",
      (scenario: Parameters<typeof brokenOpencode>[0]) =>
        brokenOpencode(
          scenario,
          'cat > /dev/null\necho \'{"type":"step_start","timestamp":1,"sessionID":"ses_1","part":{"type":"step-start"}}\'\necho "Segmentation fault (core dumped)" >&2\nexit 139',
        ),
      /opencode exited with code 139 after 1 event: Segmentation fault/,
    ],
  ] as const) {
    test(`OpenCode cannot start (${name}): exit 1, an error naming opencode, nothing approved, local outputs say what happened`, async () => {
      const { scenario, fake, env } = await gitlabScenario()
      const binary = await make(scenario)
      const run = await scenario.run({ env: { ...env, OPENCODE_BIN: binary } })
      expect(run.code, run.stderr).toBe(1)
      expect(run.stderr).toMatch(expected)
      expect(run.record).toBeNull()
      const error = JSON.parse(await readFile(join(scenario.outputDir, "review-error.json"), "utf8")) as {
        message: string
      }
      expect(error.message).toMatch(expected)
      expect(await readFile(join(scenario.outputDir, "review.md"), "utf8")).toMatch(expected)
      expect(fake.state.approvals).toEqual([])
      expect(summaryNotes(fake)[0]!.body).toContain("AI code review: could not run")
    })
  }
})
