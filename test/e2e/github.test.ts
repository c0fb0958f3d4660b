import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { findingsReply } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import {
  answeringJudge,
  cleanUp,
  githubActionsEnv,
  githubPull,
  githubRepo,
  githubScenario,
  loginSource,
  specialists,
  sqlFinding,
} from "./harness"

// `opencode-reviewer review` in a GitHub Actions pull request run: the real opencode binary, the
// scripted model, and the GitHub fake built to the REST and GraphQL contract. No --vcs: the
// Actions environment alone makes the CLI pick GitHub.

afterEach(cleanUp)

const botLogin = "github-actions[bot]"
const ours = (user: { login: string }) => user.login === botLogin

function posted(fake: Awaited<ReturnType<typeof githubScenario>>["fake"]) {
  return {
    summaries: fake.state.issueComments.filter(
      (comment) => ours(comment.user) && comment.body.includes("opencode-reviewer:summary"),
    ),
    reviews: fake.state.reviews.filter((review) => ours(review.user)),
    inline: fake.state.reviewComments.filter((comment) => ours(comment.user)),
  }
}

describe("opencode-reviewer review on GitHub", () => {
  // One pull request through three runs: a critical finding (with a suggestion that applies), a
  // re-run of the same head, a fixing push.
  test("a critical finding: one summary comment, one inline comment at the line with GitHub's suggestion block, REQUEST_CHANGES, exit 2; a re-run on the same head posts nothing new; a fixing push: the thread is answered and resolved, and the new head is approved", async () => {
    const { scenario, fake, env } = await githubScenario({ actionsCanApprove: true })
    const fix = "  return db.query('SELECT * FROM users WHERE name = $1', [name])"
    scenario.setReply("fake/security", findingsReply([{ ...sqlFinding, suggestion: { startLine: 2, lines: [fix] } }]))
    const run = await scenario.run({ env, args: ["--json"] })
    expect(run.code, run.stderr).toBe(2)
    expect(run.record!.decision).toBe("significant_concerns")
    // --json in an Actions run: the record alone on stdout (`| jq` parses it), the report on stderr.
    expect(JSON.parse(run.stdout)).toEqual(run.record)
    expect(run.stderr).toContain("Decision: significant_concerns")
    const { summaries, reviews, inline } = posted(fake)
    expect(summaries).toHaveLength(1)
    expect(summaries[0]!.body).toContain("significant concerns")
    expect(reviews).toHaveLength(1)
    expect(reviews[0]).toMatchObject({
      state: "CHANGES_REQUESTED",
      commitId: fake.head(githubRepo, githubPull).headSha,
    })
    expect(inline).toHaveLength(1)
    expect(inline[0]).toMatchObject({ path: "src/auth/login.ts", line: 2, side: "RIGHT" })
    expect(inline[0]!.body).toContain("SQL")
    expect(inline[0]!.body).toContain(`\`\`\`suggestion\n${fix}\n\`\`\``)
    expect(run.stderr).toContain("GitHub: requested changes")
    expect(fake.state.fakeErrors).toEqual([])
    // review.sarif for code scanning (the action's upload-sarif), beside review.json.
    const sarif = JSON.parse(await readFile(join(scenario.outputDir, "review.sarif"), "utf8")) as {
      version: string
      runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[]
    }
    expect(sarif.version).toBe("2.1.0")
    expect(sarif.runs[0]!.results.map((result) => result.locations[0]!.physicalLocation.artifactLocation.uri)).toEqual([
      "src/auth/login.ts",
    ])

    // A re-run on the same head posts nothing new.
    const writes = fake.requests({ method: "POST" }).length
    const again = await scenario.run({ env })
    expect(again.code, again.stderr).toBe(2)
    const after = posted(fake)
    expect(after.summaries.map((comment) => comment.id)).toEqual(summaries.map((comment) => comment.id))
    expect(after.reviews).toHaveLength(1)
    expect(after.inline).toHaveLength(1)
    // Nothing created: the summary was edited in place, the standing change request left alone.
    expect(
      fake
        .requests({ method: "POST" })
        .slice(writes)
        .filter((request) => request.path !== "/graphql"),
    ).toEqual([])

    // A fixing push: the thread is answered and resolved, and the new head is approved.
    await scenario.repo.write({
      "src/auth/login.ts": loginSource.replace(
        "db.query(`SELECT * FROM users WHERE name = '${name}'`)",
        "db.query('SELECT * FROM users WHERE name = $1', [name])",
      ),
    })
    scenario.repo.commit("Bind the name")
    fake.push(githubRepo, githubPull, { git: { dir: scenario.repo.dir, base: "main", head: "feature" } })
    for (const name of specialists) scenario.setReply(`fake/${name}`, findingsReply([]))
    const fixed = await scenario.run({ env })
    expect(fixed.code, fixed.stderr).toBe(0)
    expect(fixed.record!.decision).toBe("approved")
    const thread = fake.state.threads.find((candidate) => candidate.path === "src/auth/login.ts")!
    expect(thread.isResolved).toBe(true)
    const replies = fake.state.reviewComments.filter((comment) => comment.inReplyToId !== null && ours(comment.user))
    expect(replies.map((comment) => comment.body)).toEqual([expect.stringContaining("Fixed in")])
    const final = posted(fake)
    // The reply came with a COMMENTED review of its own, as on GitHub; the decisions are these two.
    const decisions = final.reviews.filter((review) => review.state !== "COMMENTED")
    expect(decisions.map((review) => review.state)).toEqual(["CHANGES_REQUESTED", "APPROVED"])
    expect(decisions[1]!.commitId).toBe(fake.head(githubRepo, githubPull).headSha)
    expect(final.summaries).toHaveLength(1)
    expect(final.summaries[0]!.body).toContain("approved")
  }, 150_000)

  test("a 502 after the store and a secondary rate limit: nothing is posted twice", async () => {
    const { scenario, fake, env } = await githubScenario()
    fake.failNext({ method: "POST", path: /\/issues\/\d+\/comments$/ }, { status: 502, afterStore: true })
    fake.failNext({ method: "POST", path: /\/pulls\/\d+\/reviews$/ }, { status: 502, afterStore: true })
    fake.secondaryRateLimit({ method: "GET", path: /\/pulls\/\d+\/files$|\/issues\/\d+\/comments$/ }, { retryAfter: 1 })
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(2)
    const { summaries, reviews, inline } = posted(fake)
    expect(summaries).toHaveLength(1)
    expect(reviews).toHaveLength(1)
    expect(inline).toHaveLength(1)
    expect(
      fake
        .requests()
        .filter((request) => request.injected)
        .map((request) => request.injected),
    ).toEqual(expect.arrayContaining(["502-after-store", "secondary-rate-limit"]))
  })

  // Also GitHub refusing the Actions bot's approval (the repository's default): the review comments
  // instead and says why.
  test("a warning after a change request, and Actions may not approve: the change request is dismissed, nothing blocks", async () => {
    const { scenario, fake, env } = await githubScenario()
    expect((await scenario.run({ env })).code).toBe(2)
    scenario.setReply("fake/security", findingsReply([{ ...sqlFinding, severity: "warning" }]))
    const run = await scenario.run({ env })
    expect(run.record!.decision).toBe("approved_with_comments")
    expect(run.code, run.stderr).toBe(0)
    const decisions = posted(fake).reviews.filter((review) => review.state !== "COMMENTED")
    expect(decisions.map((review) => review.state)).toEqual(["DISMISSED"])
    expect(run.stderr).toContain("GitHub refused the approval")
  })

  test("a fork's pull_request run has a read-only token: the review is done, nothing is posted, the exit code says it", async () => {
    const { scenario, fake } = await githubScenario()
    const env = await githubActionsEnv(fake, "pull_request", undefined, "mallory/widgets")
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(2)
    expect(run.record!.decision).toBe("significant_concerns")
    expect(fake.requests().filter((request) => request.method !== "GET" && request.path !== "/graphql")).toEqual([])
    expect(run.stderr).toContain("GITHUB_TOKEN is read-only in this run")
  })

  test("replies in the bot's thread: an argument is answered once, a won't fix is dismissed and resolved", async () => {
    const { scenario, fake, env } = await githubScenario()
    expect((await scenario.run({ env })).code).toBe(2)
    const root = posted(fake).inline[0]!
    const reply = async (body: string) => {
      const answer = await fetch(`${fake.url}/repos/${githubRepo}/pulls/${githubPull}/comments/${root.id}/replies`, {
        method: "POST",
        headers: { authorization: `token ${fake.tokens.alice}`, "content-type": "application/json" },
        body: JSON.stringify({ body }),
      })
      expect(answer.status).toBe(201)
    }
    const botReplies = () =>
      fake.state.reviewComments.filter((comment) => ours(comment.user) && comment.inReplyToId === root.id)

    // The finding is still reported: the argument gets the finding's body as the answer, once.
    await reply("I disagree: the name is validated upstream.")
    expect((await scenario.run({ env })).code).toBe(2)
    expect(botReplies()).toHaveLength(1)
    expect(botReplies()[0]!.body).toContain(sqlFinding.body)
    expect((await scenario.run({ env })).code).toBe(2)
    expect(botReplies()).toHaveLength(1)

    // "won't fix", and the coordinator leaves it out: dismissed, not fixed, and the thread resolved.
    await reply("Won't fix, this path is internal only.")
    scenario.setReply("fake/security", findingsReply([]))
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(0)
    expect(run.record!.dismissed).toHaveLength(1)
    expect(botReplies().at(-1)!.body).toContain("Dismissed, not fixed")
    expect(fake.state.threads.find((thread) => thread.path === sqlFinding.file)!.isResolved).toBe(true)
  }, 150_000)
})

describe("talking to the bot on GitHub", () => {
  // One small pull request: reviewed on its push, then on `/review`, then on `/review full`.
  test("`/review` from someone with write access re-reviews the pull request; `/review full` forces the full tier on a change that would get less", async () => {
    const { scenario, fake, env } = await githubScenario({
      scenario: {
        files: { "src/util/strings.ts": "export const shout = (s: string) => s.toUpperCase()\n" },
        replies: Object.fromEntries(specialists.map((name) => [`fake/${name}`, findingsReply([])])),
      },
    })
    const normal = await scenario.run({ env })
    expect(normal.code, normal.stderr).toBe(0)
    expect(normal.record!.tier).not.toBe("full")

    const requestsBefore = scenario.server.requests.length
    const review = fake.addIssueComment(githubRepo, githubPull, "alice", "/review")
    const again = await scenario.run({
      env: await githubActionsEnv(fake, "issue_comment", { id: review.id, body: "/review", login: "alice" }),
    })
    expect(again.code, again.stderr).toBe(0)
    expect(scenario.server.requests.length).toBeGreaterThan(requestsBefore)
    expect(again.record!.tier).toBe(normal.record!.tier)
    expect(review.reactions.map((reaction) => reaction.content)).toEqual(["eyes"])
    expect(posted(fake).summaries).toHaveLength(1)

    const comment = fake.addIssueComment(githubRepo, githubPull, "alice", "/review full")
    const full = await scenario.run({
      env: await githubActionsEnv(fake, "issue_comment", { id: comment.id, body: comment.body, login: "alice" }),
    })
    expect(full.code, full.stderr).toBe(0)
    expect(full.record!.tier).toBe("full")
    const plan = await readFile(join(scenario.outputDir, "work", "plan.json"), "utf8")
    expect(plan).toContain("alice asked for the full review")
    expect(posted(fake).summaries).toHaveLength(1)
  }, 150_000)

  test("a question to the bot gets one answer, in its thread, and a re-run does not answer twice", async () => {
    const { scenario, fake, env } = await githubScenario()
    scenario.setReply("fake/coordinator", answeringJudge)
    expect((await scenario.run({ env })).code).toBe(2)
    const root = posted(fake).inline[0]!
    const question = "Is the name parameterised anywhere?"
    // alice replies through the API, as she would on github.com.
    const answer = await fetch(`${fake.url}/repos/${githubRepo}/pulls/${githubPull}/comments/${root.id}/replies`, {
      method: "POST",
      headers: { authorization: `token ${fake.tokens.alice}`, "content-type": "application/json" },
      body: JSON.stringify({ body: question }),
    })
    expect(answer.status).toBe(201)
    const asked = (await answer.json()) as { id: number }
    const askEnv = await githubActionsEnv(fake, "pull_request_review_comment", {
      id: asked.id,
      body: question,
      login: "alice",
      inReplyToId: root.id,
    })
    const run = await scenario.run({ env: askEnv })
    expect(run.code, run.stderr).toBe(2)
    const answers = () =>
      fake.state.reviewComments.filter(
        (comment) => ours(comment.user) && comment.body.includes("opencode-reviewer:reply=answer:"),
      )
    expect(answers()).toHaveLength(1)
    expect(answers()[0]).toMatchObject({ inReplyToId: root.id })
    expect(answers()[0]!.body).toContain("Is the name parameterised anywhere?")
    expect((await scenario.run({ env: askEnv })).code).toBe(2)
    expect(answers()).toHaveLength(1)
  }, 150_000)

  test("an outside contributor's `/review`, a bot's, and a comment that asks nothing: nothing runs", async () => {
    const { scenario, fake } = await githubScenario({
      fake: { actors: [{ login: "github-actions[bot]" }, { login: "mallory", permission: "read" }] },
    })
    const cases = [
      { login: "mallory", body: "/review full", why: "mallory has read access" },
      { login: "renovate[bot]", type: "Bot" as const, body: "/review", why: "renovate[bot] is a bot" },
      { login: "alice", body: "Looks fine to me.", why: "asks nothing of the bot" },
    ]
    for (const { login, type, body, why } of cases) {
      const env = await githubActionsEnv(fake, "issue_comment", { id: 9000 + cases.length, body, login, type })
      const run = await scenario.run({ env })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toContain(why)
    }
    expect(scenario.server.requests).toEqual([])
    expect(fake.requests({ method: "POST" })).toEqual([])
  })
})
