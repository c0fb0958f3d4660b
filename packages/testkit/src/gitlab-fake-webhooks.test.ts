import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest"
import { startGitlabFake } from "./gitlab-fake"
import type { GitlabFake, GitlabFakeOptions } from "./gitlab-fake-types"
import { createTempRepo, type TempRepo } from "./repo"

// The note webhook body (GitlabFake.noteWebhookPayload) and TRIGGER_PAYLOAD (triggerPayload) are
// built from the fake's own state: every id, text and SHA in them must be the stored note's and
// merge request's. The shape and its sources: docs/gitlab.md, "Note webhooks and triggered pipelines".

let repo: TempRepo

beforeAll(async () => {
  repo = await createTempRepo("gitlab-fake-webhooks-")
  await repo.write({ "src/app.ts": "export const a = 1\nexport const b = 2\nexport const c = 3\n" })
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({ "src/app.ts": "export const a = 1\nexport const b = 20\nexport const c = 3\n" })
  repo.commit("Change b\n\nIt was too small.")
  repo.git("checkout", "-q", "main")
})

afterAll(() => repo?.remove())

async function start(options: Partial<GitlabFakeOptions> = {}): Promise<GitlabFake> {
  const fake = await startGitlabFake({
    repoDir: repo.dir,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Make b bigger",
    description: "Fixes the limit",
    labels: ["backend"],
    reviewers: ["project_42_bot"],
    ...options,
  })
  onTestFinished(() => fake.close())
  return fake
}

const webhookTime = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/

describe("note webhook payloads", () => {
  test("a human's comment: object_attributes are the stored note, merge_request the stored MR and its head commit", async () => {
    const fake = await start()
    const note = fake.addHumanNote("@project_42_bot please review again", { author: "carol" })
    const payload = fake.noteWebhookPayload(note.id)
    const mr = fake.state.mergeRequest
    const head = fake.state.versions.at(-1)!

    expect(payload).toMatchObject({ object_kind: "note", event_type: "note", project_id: 42 })
    expect(payload.user).toEqual({
      id: note.author.id,
      name: "Carol",
      username: "carol",
      avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
      email: "[REDACTED]",
    })
    expect(payload.object_attributes).toMatchObject({
      id: note.id,
      note: "@project_42_bot please review again",
      description: "@project_42_bot please review again",
      noteable_type: "MergeRequest",
      noteable_id: mr.id,
      author_id: note.author.id,
      discussion_id: note.discussionId,
      type: null,
      position: null,
      original_position: null,
      line_code: null,
      system: false,
      internal: false,
      project_id: 42,
      action: "create",
      url: `${fake.url}/group/project/-/merge_requests/7#note_${note.id}`,
    })
    expect(payload.object_attributes.created_at).toMatch(webhookTime)
    expect(new Date(payload.object_attributes.created_at).getTime()).toBe(
      Math.floor(new Date(note.createdAt).getTime() / 1000) * 1000,
    )
    expect(payload.merge_request).toMatchObject({
      id: mr.id,
      iid: 7,
      title: "Make b bigger",
      description: "Fixes the limit",
      source_branch: "feature",
      target_branch: "main",
      source_project_id: 42,
      target_project_id: 42,
      author_id: mr.author.id,
      state: "opened",
      state_id: 1,
      draft: false,
      work_in_progress: false,
      reviewer_ids: [fake.state.users.find((user) => user.username === "project_42_bot")!.id],
      labels: [{ title: "backend", type: "ProjectLabel" }],
      detailed_merge_status: "mergeable",
      url: `${fake.url}/group/project/-/merge_requests/7`,
      last_commit: {
        id: head.headSha,
        message: "Change b\n\nIt was too small.\n",
        title: "Change b",
        timestamp: "2026-01-01T00:00:00+00:00",
        author: { name: "Test Author", email: "author@example.test" },
        url: `${fake.url}/group/project/-/commit/${head.headSha}`,
      },
    })
    expect(payload.project).toMatchObject({
      id: 42,
      name: "project",
      namespace: "Group",
      path_with_namespace: "group/project",
      default_branch: "main",
      web_url: `${fake.url}/group/project`,
      git_http_url: `${fake.url}/group/project.git`,
      git_ssh_url: "git@127.0.0.1:group/project.git",
      visibility_level: 0,
    })
    expect(payload.merge_request.source).toEqual(payload.project)
    expect(payload.repository).toEqual({
      name: "project",
      url: "git@127.0.0.1:group/project.git",
      description: null,
      homepage: `${fake.url}/group/project`,
    })
    // the order GitLab sends the top-level keys in
    expect(Object.keys(payload)).toEqual([
      "object_kind",
      "event_type",
      "user",
      "project_id",
      "project",
      "object_attributes",
      "repository",
      "merge_request",
    ])
  })

  test("a reply in a DiffNote thread is a DiffNote with the thread's discussion_id, position and line_code", async () => {
    const fake = await start()
    const head = fake.state.versions.at(-1)!
    const thread = fake.addHumanNote("b should stay 2", {
      author: "dave",
      position: { newPath: "src/app.ts", newLine: 2 },
    })
    const reply = fake.addHumanNote("/approve\nNo, 20 is right", { discussionId: thread.discussionId })
    for (const note of [thread, reply]) {
      const attributes = fake.noteWebhookPayload(note.id).object_attributes
      expect(attributes).toMatchObject({
        id: note.id,
        type: "DiffNote",
        discussion_id: thread.discussionId,
        line_code: thread.lineCode,
        author_id: note.author.id,
      })
      expect(attributes.position).toEqual(note.position)
      expect(attributes.position).toMatchObject({
        base_sha: head.baseSha,
        start_sha: head.startSha,
        head_sha: head.headSha,
        old_path: "src/app.ts",
        new_path: "src/app.ts",
        position_type: "text",
        new_line: 2,
        old_line: null,
      })
    }
    expect(thread.lineCode).toMatch(/^[0-9a-f]{40}_\d+_2$/)
    // the quick action line is not part of the stored note, nor of the webhook's
    expect(fake.noteWebhookPayload(reply.id).object_attributes.note).toBe("No, 20 is right")
    expect(() => fake.addHumanNote("off the diff", { position: { newPath: "src/app.ts", newLine: 40 } })).toThrow(
      /line_code/,
    )
  })

  test("an internal note is a confidential_note; an edit says update; system notes and unknown ids throw", async () => {
    const fake = await start()
    const internal = fake.addHumanNote("between us", { internal: true })
    const payload = fake.noteWebhookPayload(internal.id, { action: "update" })
    expect(payload.event_type).toBe("confidential_note")
    expect(payload.object_attributes).toMatchObject({ internal: true, action: "update" })
    const system = fake.addSystemNote("changed the description")
    expect(() => fake.noteWebhookPayload(system.id)).toThrow(/system note/)
    expect(() => fake.noteWebhookPayload(424242)).toThrow(/no note 424242/)
  })

  test("the merge request part follows the fake: draft, a push's new head, resolved threads", async () => {
    const fake = await start({ draft: true, onlyAllowMergeIfAllDiscussionsAreResolved: true })
    const note = fake.addHumanNote("please look", { position: { newPath: "src/app.ts", newLine: 2 } })
    const before = fake.noteWebhookPayload(note.id).merge_request
    expect(before).toMatchObject({ draft: true, work_in_progress: true, detailed_merge_status: "draft_status" })
    expect(before.blocking_discussions_resolved).toBe(false)
    fake.resolveAsHuman(note.discussionId)
    const resolved = fake.noteWebhookPayload(note.id)
    expect(resolved.merge_request.blocking_discussions_resolved).toBe(true)
    expect(resolved.object_attributes.resolved_by_id).toBe(fake.state.mergeRequest.author.id)
    expect(resolved.object_attributes.resolved_at).toMatch(webhookTime)

    repo.git("checkout", "-q", "feature")
    await repo.write({ "src/app.ts": "export const a = 1\nexport const b = 20\nexport const c = 30\n" })
    const next = repo.commit("Change c too")
    repo.git("checkout", "-q", "main")
    onTestFinished(() => {
      repo.git("branch", "-q", "-f", "feature", "feature~1")
    })
    await fake.push()
    expect(fake.noteWebhookPayload(note.id).merge_request.last_commit).toMatchObject({
      id: next,
      title: "Change c too",
    })
  })

  test("TRIGGER_PAYLOAD is the webhook body with the route's id and ref and empty variables, without the token", async () => {
    const fake = await start()
    const note = fake.addHumanNote("@project_42_bot review")
    const text = fake.triggerPayload(note.id)
    const parsed = JSON.parse(text)
    expect(parsed).toEqual({ ...fake.noteWebhookPayload(note.id), id: "42", ref: "main", variables: {} })
    expect(Object.keys(parsed).slice(-3)).toEqual(["id", "ref", "variables"])
    expect(parsed).not.toHaveProperty("token")
    expect(JSON.parse(fake.triggerPayload(note.id, { ref: "feature" })).ref).toBe("feature")
  })
})
