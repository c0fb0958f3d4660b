import { type Finding, parseFindings, renderReviewXml } from "@opencode-reviewer/core"
import {
  findingsReply,
  lengthReply,
  type RecordedRequest,
  type Reply,
  statusReply,
  text,
  toolCall,
  toolCalls,
} from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import {
  cleanUp,
  githubPull,
  githubRepo,
  githubScenario,
  gitlabScenario,
  judge,
  loginSource,
  specialists,
  sqlFinding,
  summaryNotes,
  threads,
} from "./harness"

// When the bot approves (docs/contracts.md, "When the bot approves"), end to end on GitLab and on
// GitHub: the real opencode binary, the scripted model, the platform fakes. An approval is a
// promise that the change was fully reviewed and nothing serious stands; each test here is one way
// that promise used to bend: a verifier that says nothing usable, evidence from another file, a
// disputed blocker, half a review, a stranger's "won't fix" or "break glass".

afterEach(cleanUp)

// The verifier runs on the top tier's other model; every scenario here turns it on.
const verifierConfig = {
  verify: "critical",
  models: { top: ["fake/coordinator", "fake/verifier"], standard: ["fake/coordinator"], light: ["fake/coordinator"] },
}

// package.json on the target branch: a file the verifier may read, which is not the finding's.
const packageJson = '{\n  "name": "app",\n  "scripts": { "users": "psql -c \\"SELECT * FROM users WHERE name\\"" }\n}\n'

interface AskedFinding {
  number: number
  title: string
  file: string
  line: number | null
}

/** The findings a verifier request lists, as verify.ts numbers them. */
function askedFindings(request: RecordedRequest): AskedFinding[] {
  return [
    ...request.lastUser.matchAll(/<finding number="(\d+)"[^>]*file="([^"]*)" line="(\d*)">\n<title>([^<]*)<\/title>/g),
  ].map(([, number, file, line, title]) => ({
    number: Number(number),
    file: file!,
    line: line ? Number(line) : null,
    title: title!,
  }))
}

/** The numbered lines of a file as OpenCode's read tool returned them. */
function readLines(content: string): Map<number, string> {
  const lines = new Map<number, string>()
  for (const match of content.matchAll(/^\s*0*(\d+)[|:\t] ?(.*)$/gm)) lines.set(Number(match[1]), match[2]!)
  return lines
}

/**
 * A verifier that really reads: its first turn asks OpenCode's read tool for every file it needs (the
 * findings' files, and `also`), its second answers with `verdict` for each finding, given the lines
 * it read. The checkout is the one named in its instructions.
 */
function readingVerifier(
  verdict: (finding: AskedFinding, read: (file: string) => Map<number, string>) => object,
  also: string[] = [],
) {
  return (request: RecordedRequest): Reply => {
    const checkout = /checked out at the\s+change under review in (\S+?);/.exec(request.system)?.[1]
    const findings = askedFindings(request)
    const files = [...new Set([...findings.map((finding) => finding.file), ...also])]
    if (request.toolResults.length === 0)
      return toolCalls(files.map((file) => ({ name: "read", args: { filePath: `${checkout}/${file}` } })))
    const contents = new Map(files.map((file, index) => [file, readLines(request.toolResults[index]?.content ?? "")]))
    const read = (file: string) => contents.get(file) ?? new Map<number, string>()
    return text(
      `I read ${files.join(", ")}.\n${JSON.stringify({ verdicts: findings.map((finding) => verdict(finding, read)) })}`,
    )
  }
}

/** The line of `file` holding `needle`, as the verifier read it: `[number, text]`. */
function lineWith(lines: Map<number, string>, needle: string): [number, string] {
  const found = [...lines].find(([, line]) => line.includes(needle))
  if (!found) throw new Error(`the verifier read no line with ${needle}: ${JSON.stringify([...lines])}`)
  return found
}

// Disputes every finding, with a reason that cites the line it read.
const disputing = readingVerifier((finding, read) => {
  const [number] = lineWith(read(finding.file), "SELECT")
  return {
    finding: finding.number,
    confirmed: false,
    reason: `line ${number} runs only behind the admin check, and the name is an enum there`,
  }
})

// "Confirms" the SQL finding with a real quote, but from package.json, not from the finding's code.
const borrowing = readingVerifier(
  (finding, read) => {
    const [number, line] = lineWith(read("package.json"), "SELECT")
    return {
      finding: finding.number,
      confirmed: true,
      reason: "the query is built from the name",
      evidence: [{ file: "package.json", start_line: number, end_line: number, quote: line.trim() }],
    }
  },
  ["package.json"],
)

const garbage = () => text("All of these look fine to me, nothing to worry about here!")
const cutOff = () => lengthReply('I read the file.\n{"verdicts": [{"finding": 1, "confirmed": false, "reason": "the na')

const clean = Object.fromEntries(specialists.map((name) => [`fake/${name}`, findingsReply([])]))

describe("a verifier cannot bend the decision", () => {
  test("GitLab: a blocker it disputes with a reason withdraws the approval without approving; garbage from it lowers nothing", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: { config: verifierConfig, replies: { ...clean, "fake/verifier": disputing } },
    })
    // The bot had approved an earlier version (as GitLab holds it: an approval by the bot's user).
    await approveAsBot(fake)
    expect(fake.state.approvals).toHaveLength(1)
    scenario.setReply("fake/security", findingsReply([sqlFinding]))

    const disputed = await scenario.run({ env })
    expect(disputed.code, disputed.stderr).toBe(0)
    const record = disputed.record!
    expect(record.decision).toBe("minor_issues")
    expect(record.findings[0]).toMatchObject({
      severity: "warning",
      verification: { status: "not_confirmed", originalSeverity: "critical", by: "fake/verifier" },
    })
    expect(record.findings[0]!.verification!.reason).toMatch(/^line 2 runs only behind the admin check/)
    expect(record.reasons[0]).toMatch(
      /^a critical finding disputed by the verifier: SQL built from the request \(src\/auth\/login\.ts:2\): line 2 runs only/,
    )
    // The verifier read the file through OpenCode before it answered.
    const asked = scenario.server.requests.filter((request) => request.model === "verifier")
    expect(asked.map((request) => request.toolResults.length)).toEqual([0, 1])
    expect(asked[1]!.toolResults[0]!.content).toContain("SELECT * FROM users WHERE name")
    expect(fake.state.approvals).toEqual([])
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("AI code review: ⚠️ minor issues")
    expect(summary).toContain("**Disputed blocker:** the verifier disputed the critical `src/auth/login.ts:2`")
    expect(summary).not.toContain("✅")

    scenario.setReply("fake/verifier", garbage)
    const unusable = await scenario.run({ env })
    expect(unusable.code, unusable.stderr).toBe(2)
    expect(unusable.record!.decision).toBe("significant_concerns")
    expect(unusable.record!.findings[0]).toMatchObject({
      severity: "critical",
      verification: {
        status: "unverified",
        reason: "the verifier's answer held no verdicts (it was not the JSON it was asked for)",
      },
    })
    expect(unusable.record!.findings[0]!.body).toContain("Not verified (")
    expect(fake.state.approvals).toEqual([])
    expect(summaryNotes(fake)[0]!.body).toContain("**Unverified:**")
  }, 150_000)

  test("GitHub: evidence quoted from package.json confirms nothing, and a verifier cut off mid-answer lowers nothing", async () => {
    const { scenario, fake, env } = await githubScenario({
      actionsCanApprove: true,
      scenario: {
        baseFiles: { "package.json": packageJson },
        config: verifierConfig,
        replies: { "fake/verifier": borrowing },
      },
    })
    const borrowed = await scenario.run({ env })
    expect(borrowed.code, borrowed.stderr).toBe(2)
    expect(borrowed.record!.findings[0]).toMatchObject({
      severity: "critical",
      verification: {
        status: "unverified",
        evidence: [],
        reason: "the verifier confirmed it without evidence from the finding's code that checks out",
      },
    })
    expect(borrowed.record!.notes).toContainEqual(
      expect.stringMatching(
        /^verifier: evidence for "SQL built from the request" \(src\/auth\/login\.ts:2\) ignored: package\.json:3-3: not the finding's file/,
      ),
    )
    expect(decisions(fake)).toEqual(["CHANGES_REQUESTED"])

    scenario.setReply("fake/verifier", cutOff)
    const truncated = await scenario.run({ env })
    expect(truncated.code, truncated.stderr).toBe(2)
    expect(truncated.record!.findings[0]).toMatchObject({
      severity: "critical",
      verification: { status: "unverified", reason: "the verifier's answer was cut off at its output limit" },
    })
    expect(decisions(fake)).not.toContain("APPROVED")
  }, 150_000)

  test("GitHub: a blocker the verifier disputes dismisses the bot's approval and is never approved over", async () => {
    const { scenario, fake, env } = await githubScenario({
      actionsCanApprove: true,
      scenario: { config: verifierConfig, replies: { ...clean, "fake/verifier": disputing } },
    })
    await approveOnGithub(fake)
    scenario.setReply("fake/security", findingsReply([sqlFinding]))
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(0)
    expect(run.record!.decision).toBe("minor_issues")
    expect(run.record!.reasons[0]).toContain("a critical finding disputed by the verifier")
    expect(decisions(fake)).toEqual(["DISMISSED"])
    const summary = githubSummary(fake)
    expect(summary).toContain("**Disputed blocker:**")
    expect(summary).not.toContain("✅")
  })
})

describe("half a review is never approved", () => {
  test("GitLab: a full review with three of six reviewers failed, and a binary file nobody could read", async () => {
    const failing = ["performance", "documentation", "agents-md"]
    const { scenario, fake, env } = await gitlabScenario({
      scenario: {
        files: { "src/auth/login.ts": loginSource, "assets/logo.png": "\u0089PNG\r\n\u001a\n\u0000\u0000binary" },
        replies: {
          ...clean,
          ...Object.fromEntries(failing.map((name) => [`fake/${name}`, statusReply(400, { message: "bad request" })])),
        },
      },
    })
    await approveAsBot(fake)
    const run = await scenario.run({ env, args: ["--json"] })
    expect(run.code, run.stderr).toBe(1)
    const record = run.record!
    expect(record.tier).toBe("full")
    expect(record.findings).toEqual([])
    expect(record.decision).toBe("minor_issues")
    expect(record.coverage).toMatchObject({ complete: false, reviewedFiles: 1 })
    expect(record.coverage.failedReviewers.map((reviewer) => reviewer.name).sort()).toEqual([...failing].sort())
    expect(record.coverage.unreviewed).toEqual([
      { path: "assets/logo.png", reason: "binary file: there is no text diff to review" },
    ])
    expect(record.reasons[0]).toMatch(/^the review is incomplete: 3 of 6 planned reviewers did not finish/)
    expect(JSON.parse(run.stdout)).toEqual(record)
    expect(fake.state.approvals).toEqual([])
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toMatch(
      /^### AI code review: ⚠️ incomplete, not approved: \S+, \S+ and \S+ did not finish; 1 file not read\n/,
    )
    expect(summary).toContain("`assets/logo.png` — binary file: there is no text diff to review")
    expect(summary).not.toContain("✅")
  })

  test("GitHub: a lite review whose generalist failed, the other two finished", async () => {
    // Fifteen lines of ordinary code: the lite tier (code-quality, documentation, compliance).
    const strings = Array.from({ length: 15 }, (_, index) => `export const word${index} = "w${index}"`).join("\n")
    const { scenario, fake, env } = await githubScenario({
      actionsCanApprove: true,
      scenario: {
        files: { "src/util/strings.ts": `${strings}\n` },
        replies: { ...clean, "fake/code-quality": statusReply(400, { message: "bad request" }) },
      },
    })
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(1)
    expect(run.record!.tier).toBe("lite")
    expect(run.record!.coverage).toMatchObject({ complete: false })
    expect(run.record!.coverage.failedReviewers.map((reviewer) => reviewer.name)).toEqual(["code-quality"])
    expect(run.record!.decision).toBe("minor_issues")
    expect(run.record!.reasons[0]).toMatch(/^the review is incomplete: 1 of 3 planned reviewers did not finish/)
    expect(decisions(fake)).not.toContain("APPROVED")
    expect(githubSummary(fake)).toMatch(
      /^### AI code review: ⚠️ incomplete, not approved: code-quality did not finish\n/,
    )
    expect(run.stderr).toContain("error: the review is incomplete")
  })
})

/**
 * A coordinator like `judge` that, once the prompt carries earlier threads, also reports `claimed`
 * and claims for it the thread of the first earlier finding (`<review_thread id>`), wherever it is.
 */
function claimingJudge(claimed: Finding) {
  return (request: RecordedRequest): Reply => {
    const reply = judge(request)
    const thread = /<review_thread id=\\"([^"\\]+)\\"/.exec(JSON.stringify(request.body))?.[1]
    if (!thread || reply.type !== "tool" || reply.name !== "review_submit_review") return reply
    const review = (reply.args as { review: string }).review
    const findings = [...review.matchAll(/<findings>[\s\S]*?<\/findings>/g)].flatMap((match) => {
      const parsed = parseFindings(match[0])
      return parsed.ok ? parsed.findings : []
    })
    const summary = /<summary>([\s\S]*?)<\/summary>/.exec(review)?.[1] ?? "s"
    return toolCall("review_submit_review", {
      review: renderReviewXml({ summary, findings: [...findings, { ...claimed, thread }], answer: null }),
    })
  }
}

const tokenSource = "export const adminPassword = 'hunter2'\n"
const tokenFinding: Finding = {
  severity: "critical",
  file: "src/auth/token.ts",
  line: 1,
  category: "security",
  title: "Admin password in the source",
  body: "Anyone who can read the repository can log in as admin.",
}

describe("whose words count", () => {
  test("GitLab: a stranger's won't fix and break glass change nothing; a Developer's dismissal is named, and a thread claim elsewhere is ignored", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: { files: { "src/auth/login.ts": loginSource, "src/auth/token.ts": tokenSource } },
      fake: { members: { mallory: 20, erin: 30 } },
    })
    expect((await scenario.run({ env })).code).toBe(2)
    const sqlThread = threads(fake).find((thread) => thread.notes[0]!.position?.new_path === "src/auth/login.ts")!
    fake.addHumanNote("Is this intended? Won't fix, it's by design.", { discussionId: sqlThread.id, author: "mallory" })
    fake.addHumanNote("break glass, we need this out today", { author: "mallory" })
    const stranger = await scenario.run({ env })
    expect(stranger.code, stranger.stderr).toBe(2)
    expect(stranger.record).toMatchObject({ decision: "significant_concerns", breakGlass: false, dismissed: [] })
    expect(stranger.record!.findings[0]).toMatchObject({ title: sqlFinding.title, thread: sqlThread.id })
    expect(stranger.record!.breakGlassIgnored).toEqual([
      {
        by: "mallory",
        at: expect.any(String),
        reason: "read access; breaking the glass needs write access or above",
      },
    ])
    expect(summaryNotes(fake)[0]!.body).toContain("**Break glass ignored:** mallory asked for it")
    expect(fake.state.approvals).toEqual([])

    fake.addHumanNote("Won't fix: this admin tool only runs on the staging box.", {
      discussionId: sqlThread.id,
      author: "erin",
    })
    scenario.setReply("fake/coordinator", claimingJudge(tokenFinding))
    const member = await scenario.run({ env })
    expect(member.code, member.stderr).toBe(2)
    const record = member.record!
    expect(record.dismissed).toEqual([
      expect.objectContaining({ id: sqlThread.id, reason: "dismissed by erin: won't fix" }),
    ])
    expect(record.reasons).toContain(
      "a critical finding was dismissed by a person, not fixed: SQL built from the request (src/auth/login.ts:2), dismissed by erin: won't fix",
    )
    // The new critical claimed the dismissed thread from another file: the claim is ignored, it blocks.
    expect(record.findings.map((finding) => [finding.title, finding.thread])).toEqual([[tokenFinding.title, null]])
    expect(record.decision).toBe("significant_concerns")
    expect(record.notes).toContainEqual(
      expect.stringMatching(
        /^the coordinator tied "Admin password in the source" \(src\/auth\/token\.ts:1\) to the earlier thread/,
      ),
    )
    expect(fake.state.approvals).toEqual([])
  }, 150_000)

  test("GitHub: a reader's won't fix and break glass change nothing; a writer's dismissal is named, and a writer's break glass approves", async () => {
    const { scenario, fake, env } = await githubScenario({
      actionsCanApprove: true,
      fake: {
        actors: [
          { login: "github-actions[bot]" },
          { login: "mallory", permission: "read" },
          { login: "erin", permission: "write" },
        ],
      },
    })
    expect((await scenario.run({ env })).code).toBe(2)
    const root = fake.state.reviewComments.find((comment) => comment.path === sqlFinding.file)!
    const reply = async (login: string, body: string) => {
      const answer = await fetch(`${fake.url}/repos/${githubRepo}/pulls/${githubPull}/comments/${root.id}/replies`, {
        method: "POST",
        headers: { authorization: `token ${fake.tokens[login]}`, "content-type": "application/json" },
        body: JSON.stringify({ body }),
      })
      expect(answer.status).toBe(201)
    }
    await reply("mallory", "Won't fix, this is intended.")
    fake.addIssueComment(githubRepo, githubPull, "mallory", "break glass")
    const stranger = await scenario.run({ env })
    expect(stranger.code, stranger.stderr).toBe(2)
    expect(stranger.record).toMatchObject({ decision: "significant_concerns", breakGlass: false, dismissed: [] })
    expect(stranger.record!.breakGlassIgnored).toEqual([
      { by: "mallory", at: expect.any(String), reason: "read access; breaking the glass needs write access or above" },
    ])
    expect(githubSummary(fake)).toContain("**Break glass ignored:** mallory asked for it")

    // A writer's "won't fix" dismisses the SQL finding, named in the reasons; their break glass
    // approves the new critical too, and says what it overrode.
    await reply("erin", "Won't fix: internal tool.")
    fake.addIssueComment(githubRepo, githubPull, "erin", "Break glass: release blocker, I take responsibility.")
    const another = { ...sqlFinding, file: "src/app.ts", line: 1, title: "Another problem" }
    scenario.setReply("fake/security", findingsReply([sqlFinding, another]))
    const member = await scenario.run({ env })
    expect(member.code, member.stderr).toBe(0)
    const record = member.record!
    expect(record).toMatchObject({ decision: "approved", breakGlass: true })
    expect(record.dismissed).toEqual([expect.objectContaining({ reason: "dismissed by erin: won't fix" })])
    expect(record.findings.map((finding) => finding.title)).toEqual(["Another problem"])
    expect(record.reasons).toEqual([
      "break glass: a human asked to approve this change whatever the review found",
      expect.stringMatching(
        /^without break glass the decision would be significant_concerns: 1 critical finding: Another problem/,
      ),
      "a critical finding was dismissed by a person, not fixed: SQL built from the request (src/auth/login.ts:2), dismissed by erin: won't fix",
    ])
    expect(record.breakGlassIgnored.map((entry) => entry.by)).toEqual(["mallory"])
    expect(decisions(fake).at(-1)).toBe("APPROVED")
    expect(githubSummary(fake)).toContain("approved because erin asked for it")
  }, 150_000)
})

/** The bot approves the merge request as GitLab would hold it after an earlier review. */
async function approveAsBot(fake: Awaited<ReturnType<typeof gitlabScenario>>["fake"]): Promise<void> {
  const answer = await fetch(`${fake.apiUrl}/projects/${fake.projectId}/merge_requests/${fake.iid}/approve`, {
    method: "POST",
    headers: { "private-token": fake.tokens.bot, "content-type": "application/json" },
    body: "{}",
  })
  expect(answer.status).toBe(201)
}

/** The Actions bot approves the pull request's head, as an earlier review would have. */
async function approveOnGithub(fake: Awaited<ReturnType<typeof githubScenario>>["fake"]): Promise<void> {
  const answer = await fetch(`${fake.url}/repos/${githubRepo}/pulls/${githubPull}/reviews`, {
    method: "POST",
    headers: { authorization: `token ${fake.tokens["github-actions[bot]"]}`, "content-type": "application/json" },
    body: JSON.stringify({ event: "APPROVE", commit_id: fake.head(githubRepo, githubPull).headSha, body: "" }),
  })
  expect(answer.status).toBe(200)
}

/** The states of the bot's decision reviews (not the COMMENTED ones that carry replies), oldest first. */
function decisions(fake: Awaited<ReturnType<typeof githubScenario>>["fake"]): string[] {
  return fake.state.reviews
    .filter((review) => review.user.login === "github-actions[bot]" && review.state !== "COMMENTED")
    .map((review) => review.state)
}

function githubSummary(fake: Awaited<ReturnType<typeof githubScenario>>["fake"]): string {
  return fake.state.issueComments.find((comment) => comment.body.includes("opencode-reviewer:summary"))!.body
}
