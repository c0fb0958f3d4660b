import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type GitlabFake, toolCall } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { answeringJudge, botNotes, cleanUp, cleanups, gitlabScenario, judge, summaryNotes, threads } from "./harness"

// Talking to the bot on GitLab without a server of ours: a project webhook for comment events posts
// to the pipeline trigger API, and the triggered pipeline reads the note from TRIGGER_PAYLOAD. The
// real opencode binary, the scripted model and the GitLab fake, whose payload follows GitLab's own.

afterEach(cleanUp)

/** The variables of a pipeline the note's webhook triggered: no CI_MERGE_REQUEST_*, the payload in a file. */
async function triggeredBy(fake: GitlabFake, noteId: number): Promise<Record<string, string>> {
  const scratch = await mkdtemp(join(tmpdir(), "ocr-trigger-"))
  cleanups.push(() => rm(scratch, { recursive: true, force: true }))
  const payload = join(scratch, "TRIGGER_PAYLOAD")
  await writeFile(payload, fake.triggerPayload(noteId))
  return {
    CI: "true",
    CI_PIPELINE_SOURCE: "trigger",
    CI_SERVER_URL: fake.url,
    CI_API_V4_URL: fake.apiUrl,
    CI_PROJECT_ID: String(fake.projectId),
    CI_JOB_TOKEN: fake.tokens.job,
    TRIGGER_PAYLOAD: payload,
    GITLAB_TOKEN: fake.tokens.bot,
  }
}

describe("talking to the bot on GitLab through TRIGGER_PAYLOAD", () => {
  // One merge request, four reviews (each opencode process costs seconds of CPU to start): the
  // pipeline's, the question's, the question's pipeline run again, then a Developer's `/review`.
  test("a question in the bot's thread gets one answer there, and a re-run does not answer twice; `/review` from a Developer re-reviews the merge request", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    scenario.setReply("fake/coordinator", answeringJudge)
    expect((await scenario.run({ env })).code).toBe(2)
    fake.setMember("alice", 30)
    const thread = threads(fake)[0]!
    const question = "Is the name parameterised anywhere?"
    const note = fake.addHumanNote(question, { author: "alice", discussionId: thread.id })
    const triggered = await triggeredBy(fake, note.id)
    const run = await scenario.run({ env: triggered })
    expect(run.code, run.stderr).toBe(2)
    // The answer itself, not the summary (whose "Answer" section repeats it).
    const answers = () =>
      botNotes(fake).filter((candidate) => candidate.body.includes("opencode-reviewer:reply=answer:"))
    expect(answers()).toHaveLength(1)
    expect(answers()[0]!.body).toContain(question)
    const inThread = fake.state.discussions.find((discussion) => discussion.id === thread.id)!
    expect(inThread.notes.map((candidate) => candidate.id)).toContain(answers()[0]!.id)
    expect((await scenario.run({ env: triggered })).code).toBe(2)
    expect(answers()).toHaveLength(1)

    // `/review` from a Developer (alice, level 30): a review runs again, and it keeps the one summary and thread.
    scenario.setReply("fake/coordinator", judge)
    const before = scenario.server.requests.length
    const review = fake.addHumanNote("/review", { author: "alice" })
    const reviewed = await scenario.run({ env: await triggeredBy(fake, review.id) })
    expect(reviewed.code, reviewed.stderr).toBe(2)
    expect(scenario.server.requests.length).toBeGreaterThan(before)
    expect(summaryNotes(fake)).toHaveLength(1)
    expect(threads(fake)).toHaveLength(1)
  }, 150_000)

  test("a Reporter's `/review`, the bot's own note and a note that asks nothing: nothing runs", async () => {
    const { scenario, fake } = await gitlabScenario()
    fake.setMember("alice", 20)
    const reporter = fake.addHumanNote("/review full", { author: "alice" })
    fake.setMember("bob", 30)
    const chatter = fake.addHumanNote("Thanks, will look tomorrow.", { author: "bob" })
    // A note the bot's own user wrote (its webhook fires too): never a request, even a command.
    const own = fake.addHumanNote("/review", { author: fake.state.users.find((user) => user.bot)!.username })
    for (const [noteId, why] of [
      [reporter.id, "alice is a member with access level 20"],
      [chatter.id, "asks nothing of the bot"],
      [own.id, "is a bot"],
    ] as const) {
      const run = await scenario.run({ env: await triggeredBy(fake, noteId) })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr).toContain(why)
    }
    // A pipeline another webhook triggered (a push event): not ours, and not a failure either.
    const push = await triggeredBy(fake, chatter.id)
    await writeFile(push.TRIGGER_PAYLOAD!, JSON.stringify({ object_kind: "push", ref: "refs/heads/main" }))
    const pushed = await scenario.run({ env: push })
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr).toContain("nothing to do: the trigger payload is a push event")
    expect(scenario.server.requests).toEqual([])
    expect(fake.state.notes.filter((candidate) => candidate.author.bot && candidate.id !== own.id)).toEqual([])
  })
})

describe("do not repeat humans", () => {
  test("a finding a person already raised on the same line gets no second thread, still counts, and the summary says who", async () => {
    const { scenario, fake, env } = await gitlabScenario()
    fake.addHumanNote("This concatenates the name into the SQL query.", {
      author: "alice",
      position: { newPath: "src/auth/login.ts", newLine: 2 },
    })
    // The coordinator keeps every finding and says which comment already raised it, as its prompt lets it.
    scenario.setReply("fake/coordinator", (request) => {
      const reply = judge(request)
      const id = /<mr_comment id=\\"(c\d+)\\"[^>]*file=\\"src\/auth\/login\.ts\\" line=\\"2\\"/.exec(
        JSON.stringify(request.body),
      )?.[1]
      if (!id || reply.type !== "tool" || reply.name !== "review_submit_review") return reply
      const review = (reply.args as { review: string }).review.replace('line="2"', `line="2" raised_by="${id}"`)
      return toolCall("review_submit_review", { review })
    })
    const run = await scenario.run({ env })
    expect(run.code, run.stderr).toBe(2)
    expect(run.record!.findings[0]!.alreadyRaised).toEqual({ author: "alice", file: "src/auth/login.ts", line: 2 })
    expect(threads(fake).filter((thread) => thread.notes[0]!.author.bot)).toEqual([])
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("Already raised by people, so not posted again (1):")
    expect(summary).toContain("raised by alice at `src/auth/login.ts:2`")
  })
})
