import { GitbeakerRequestError, GitbeakerRetryError, Gitlab } from "@gitbeaker/rest"
import {
  createTempRepo,
  type GitlabFake,
  type GitlabFakeOptions,
  startGitlabFake,
  type TempRepo,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, onTestFinished, test, vi } from "vitest"

// The GitLab fake (packages/testkit/src/gitlab-fake.ts) proven THROUGH @gitbeaker/rest, so that the
// fake cannot drift from what the client sends and expects. Facts and the fake's contract: docs/gitlab.md.

const lines = (count: number, edit: (n: number) => string | string[] = (n) => `export const v${n} = ${n}`) =>
  Array.from({ length: count }, (_, i) => edit(i + 1))
    .flat()
    .join("\n") + "\n"

let repo: TempRepo
let base: string

beforeAll(async () => {
  repo = await createTempRepo("gitlab-fake-contract-")
  await repo.write({
    "src/app.ts": lines(30),
    "docs/old-name.md": lines(12, (n) => `Paragraph ${n} of a document that gets renamed.`),
    "docs/a & b.md": "alpha\nbeta\ngamma\n",
    "lib/gone.ts": "export const gone = true\n",
  })
  base = repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({
    // line 5 changed (old 5 removed, new 5 added), a line added after 25 → two hunks
    "src/app.ts": lines(30, (n) =>
      n === 5
        ? "export const v5 = 500"
        : n === 25
          ? ["export const v25 = 25", "export const added = true"]
          : `export const v${n} = ${n}`,
    ),
    "docs/new-name.md": lines(12, (n) =>
      n === 12 ? "Paragraph 12, reworded." : `Paragraph ${n} of a document that gets renamed.`,
    ),
    "docs/a & b.md": "alpha\nBETA\ngamma\n",
    "src/new.ts": "export const fresh = 1\nexport const second = 2\n",
  })
  repo.git("rm", "-q", "docs/old-name.md", "lib/gone.ts")
  repo.commit("feature work")
  repo.git("checkout", "-q", "main")
  await repo.write({ "README.md": "target moved on\n" })
  repo.commit("target branch moves after the fork point")
})

afterAll(() => repo?.remove())

async function start(options: Partial<GitlabFakeOptions> = {}): Promise<GitlabFake> {
  const fake = await startGitlabFake({
    repoDir: repo.dir,
    sourceBranch: "feature",
    targetBranch: "main",
    projectPath: "group/project",
    projectId: 42,
    iid: 7,
    ...options,
  })
  onTestFinished(() => fake.close())
  return fake
}

const client = (fake: GitlabFake, token = fake.tokens.bot) => new Gitlab({ host: fake.url, token })

function refs(fake: GitlabFake) {
  const version = fake.state.versions[fake.state.versions.length - 1]!
  return { baseSha: version.baseSha, startSha: version.startSha, headSha: version.headSha }
}

async function rejection(promise: Promise<unknown>): Promise<GitbeakerRequestError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(GitbeakerRequestError)
  return error as GitbeakerRequestError
}

const lineCodeError = `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}`

describe("merge request and diffs", () => {
  test("MergeRequests.show answers by numeric id and by URL-encoded path, with diff_refs from git", async () => {
    const fake = await start()
    const api = client(fake)
    const byId = await api.MergeRequests.show(42, 7)
    const byPath = await api.MergeRequests.show("group/project", 7)

    const head = repo.git("rev-parse", "feature").trim()
    const target = repo.git("rev-parse", "main").trim()
    expect(byId.diff_refs).toEqual({ base_sha: base, head_sha: head, start_sha: target })
    expect(byPath.diff_refs).toEqual(byId.diff_refs)
    expect(byId).toMatchObject({
      iid: 7,
      project_id: 42,
      sha: head,
      state: "opened",
      changes_count: "5",
      detailed_merge_status: "mergeable",
      references: { full: "group/project!7" },
    })
    // gitbeaker encodes the path with encodeURIComponent (docs/gitlab.md#gitbeakers-retry-and-our-requester)
    expect(fake.state.requests.map((request) => request.path)).toContain(
      "/api/v4/projects/group%2Fproject/merge_requests/7",
    )
  })

  test("allDiffs with perPage 2 follows the Link header through three pages to every file", async () => {
    const fake = await start()
    const diffs = await client(fake).MergeRequests.allDiffs(42, 7, { perPage: 2 })

    expect(diffs.map((file) => file.new_path)).toEqual([
      "docs/a & b.md",
      "docs/new-name.md",
      "lib/gone.ts",
      "src/app.ts",
      "src/new.ts",
    ])
    const pages = fake.state.requests.filter((request) => request.path.endsWith("/diffs"))
    expect(pages.map((request) => request.query.page)).toEqual([undefined, "2", "3"])
    // the next-page query is GitLab's: route params and defaults included, keys sorted
    expect(pages[1]!.query).toEqual({ id: "42", merge_request_iid: "7", page: "2", per_page: "2", unidiff: "false" })

    const byPath = Object.fromEntries(
      diffs.map((file) => [file.new_path, file as typeof file & Record<string, unknown>]),
    )
    expect(byPath["docs/new-name.md"]).toMatchObject({
      old_path: "docs/old-name.md",
      renamed_file: true,
      new_file: false,
    })
    expect(byPath["src/new.ts"]).toMatchObject({
      a_mode: "0",
      b_mode: "100644",
      new_file: true,
      diff: "@@ -0,0 +1,2 @@\n+export const fresh = 1\n+export const second = 2\n",
    })
    expect(byPath["lib/gone.ts"]).toMatchObject({ deleted_file: true, b_mode: "0" })
    expect(byPath["src/app.ts"]).toMatchObject({ generated_file: false, collapsed: false, too_large: false })
    // the hunk text is git's, without the diff --git/---/+++ header
    const gitDiff = repo.git("diff", `${base}`, "feature", "--", "src/app.ts")
    expect(byPath["src/app.ts"]!.diff).toBe(gitDiff.slice(gitDiff.indexOf("@@")))
  })

  test("a raw /diffs page carries GitLab's pagination headers", async () => {
    const fake = await start()
    const response = await fetch(`${fake.apiUrl}/projects/42/merge_requests/7/diffs?per_page=2&page=2`, {
      headers: { "PRIVATE-TOKEN": fake.tokens.bot },
    })
    expect(response.status).toBe(200)
    expect(
      Object.fromEntries(
        ["x-page", "x-per-page", "x-total", "x-total-pages", "x-next-page", "x-prev-page"].map((name) => [
          name,
          response.headers.get(name),
        ]),
      ),
    ).toEqual({
      "x-page": "2",
      "x-per-page": "2",
      "x-total": "5",
      "x-total-pages": "3",
      "x-next-page": "3",
      "x-prev-page": "1",
    })
    expect(response.headers.get("link")).toContain(
      `<${fake.apiUrl}/projects/42/merge_requests/7/diffs?id=42&merge_request_iid=7&page=3&per_page=2&unidiff=false>; rel="next"`,
    )
  })

  test("past diff_max_files GitLab stores only the first files: /diffs lists them, changes_count and real_size say N+", async () => {
    const fake = await start({ maxDiffFiles: 3 })
    const api = client(fake)
    const diffs = await api.MergeRequests.allDiffs(42, 7, { perPage: 2 })
    expect(diffs.map((file) => file.new_path)).toEqual(["docs/a & b.md", "docs/new-name.md", "lib/gone.ts"])
    expect(
      fake.state.requests.filter((request) => request.path.endsWith("/diffs")).map((request) => request.query.page),
    ).toEqual([undefined, "2"])
    expect((await api.MergeRequests.show(42, 7)).changes_count).toBe("3+")
    expect((await api.MergeRequests.allDiffVersions(42, 7))[0]).toMatchObject({ state: "overflow", real_size: "3+" })
    const warning = vi.spyOn(process, "emitWarning").mockImplementation(() => {})
    onTestFinished(() => warning.mockRestore())
    const changes = await api.MergeRequests.showChanges(42, 7)
    expect(changes.changes).toHaveLength(3)
    expect(changes.overflow).toBe(true)
    // A DiffNote on a file past the limit is still accepted: GitLab diffs the position's paths from the repository.
    const position = {
      baseSha: refs(fake).baseSha,
      startSha: refs(fake).startSha,
      headSha: refs(fake).headSha,
      positionType: "text" as const,
      newPath: "src/new.ts",
      oldPath: "src/new.ts",
      newLine: "1",
    }
    const thread = await api.MergeRequestDiscussions.create(42, 7, "on a file /diffs does not list", { position })
    expect(thread.notes?.[0]).toMatchObject({ type: "DiffNote" })
  })

  test('the default diff_max_files is 1000: a 1,005-file change lists 1,000 files and changes_count is "1000+"', async () => {
    const many = await createTempRepo("gitlab-fake-many-")
    onTestFinished(() => many.remove())
    await many.write({ "README.md": "many\n" })
    many.commit("base")
    many.git("checkout", "-q", "-b", "feature")
    await many.write(
      Object.fromEntries(
        Array.from({ length: 1005 }, (_, index) => [
          `src/f${String(index).padStart(4, "0")}.ts`,
          `export const v = ${index}\n`,
        ]),
      ),
    )
    many.commit("many files")
    const fake = await startGitlabFake({ repoDir: many.dir, sourceBranch: "feature", targetBranch: "main" })
    onTestFinished(() => fake.close())
    const api = client(fake)
    expect((await api.MergeRequests.show(42, 7)).changes_count).toBe("1000+")
    const diffs = await api.MergeRequests.allDiffs(42, 7, { perPage: 100 })
    expect(diffs).toHaveLength(1000)
    expect(diffs.at(-1)!.new_path).toBe("src/f0999.ts")
  })

  test("versions are newest first and the deprecated /changes is still served", async () => {
    const fake = await start()
    const api = client(fake)
    const versions = await api.MergeRequests.allDiffVersions(42, 7)
    expect(versions).toHaveLength(1)
    expect(versions[0]).toMatchObject({
      head_commit_sha: refs(fake).headSha,
      base_commit_sha: base,
      start_commit_sha: refs(fake).startSha,
      state: "collected",
      real_size: "5",
    })
    const warning = vi.spyOn(process, "emitWarning").mockImplementation(() => {})
    onTestFinished(() => warning.mockRestore())
    const changes = await api.MergeRequests.showChanges(42, 7)
    expect(changes.changes).toHaveLength(5)
    expect(warning).toHaveBeenCalledWith(expect.stringContaining("deprecated in GitLab API 15.7"), "DeprecationWarning")
  })
})

describe("inline threads (DiffNotes)", () => {
  test("an added line takes new_line only and comes back as a resolvable DiffNote (sent as multipart)", async () => {
    const fake = await start()
    const discussion = await client(fake).MergeRequestDiscussions.create(42, 7, "added line", {
      position: { positionType: "text", ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts", newLine: "26" },
    })

    const note = discussion.notes![0]!
    expect(discussion.individual_note).toBe(false)
    expect(discussion.id).toMatch(/^[0-9a-f]{40}$/)
    expect(note).toMatchObject({ type: "DiffNote", body: "added line", resolvable: true, resolved: false })
    expect(note.position).toMatchObject({
      new_line: 26,
      old_line: null,
      new_path: "src/app.ts",
      position_type: "text",
      head_sha: refs(fake).headSha,
    })
    const sent = fake.state.requests.find(
      (request) => request.method === "POST" && request.path.endsWith("/discussions"),
    )!
    expect(sent.bodyKind).toBe("multipart")
    expect(sent.form).toMatchObject({
      body: "added line",
      "position[new_line]": "26",
      "position[position_type]": "text",
    })
    expect(fake.state.discussions[0]!.notes[0]!.lineCode).toMatch(/^[0-9a-f]{40}_26_26$/)
  })

  test("gitbeaker sends oldLine: null as an empty position[old_line], which Grape treats as absent", async () => {
    const fake = await start()
    const position = {
      positionType: "text" as const,
      ...refs(fake),
      oldPath: "src/app.ts",
      newPath: "src/app.ts",
      newLine: "26",
      oldLine: null as unknown as string,
    }
    const discussion = await client(fake).MergeRequestDiscussions.create(42, 7, "null old line", { position })
    expect(fake.state.requests[0]!.form!["position[old_line]"]).toBe("")
    expect(discussion.notes![0]!.position).toMatchObject({ old_line: null, new_line: 26 })
  })

  test("a renamed file needs both paths: new_path twice makes GitLab diff it as an added file", async () => {
    const fake = await start()
    const api = client(fake)
    const position = {
      positionType: "text" as const,
      ...refs(fake),
      oldPath: "docs/old-name.md",
      newPath: "docs/new-name.md",
    }
    await api.MergeRequestDiscussions.create(42, 7, "renamed, context", {
      position: { ...position, oldLine: "3", newLine: "3" },
    })
    // GitLab limits the diff to [old_path, new_path]; without the old path the rename is not detected
    const sameName = { ...position, oldPath: "docs/new-name.md" }
    expect(
      (
        await rejection(
          api.MergeRequestDiscussions.create(42, 7, "x", { position: { ...sameName, oldLine: "3", newLine: "3" } }),
        )
      ).message,
    ).toBe(lineCodeError)
    await api.MergeRequestDiscussions.create(42, 7, "accepted as an added line", {
      position: { ...sameName, newLine: "3" },
    })
  })

  test("a removed line takes old_line only; a context line takes both", async () => {
    const fake = await start()
    const api = client(fake)
    const position = { positionType: "text" as const, ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts" }
    const removed = await api.MergeRequestDiscussions.create(42, 7, "removed", {
      position: { ...position, oldLine: "5" },
    })
    const context = await api.MergeRequestDiscussions.create(42, 7, "context", {
      position: { ...position, oldLine: "4", newLine: "4" },
    })
    expect(removed.notes![0]!.position).toMatchObject({ old_line: 5, new_line: null })
    expect(context.notes![0]!.position).toMatchObject({ old_line: 4, new_line: 4 })
    // old_line on an added line is the classic mistake → 400
    const wrong = await rejection(
      api.MergeRequestDiscussions.create(42, 7, "wrong", { position: { ...position, oldLine: "26", newLine: "26" } }),
    )
    expect(wrong.cause?.response.status).toBe(400)
  })

  test("a line outside the diff is a 400 with GitLab's exact line_code message", async () => {
    const fake = await start()
    const api = client(fake)
    const position = { positionType: "text" as const, ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts" }
    const error = await rejection(
      api.MergeRequestDiscussions.create(42, 7, "nope", { position: { ...position, newLine: "15" } }),
    )
    expect(error.message).toBe(lineCodeError)
    expect(error.cause?.response.status).toBe(400)
    expect(fake.state.notes).toHaveLength(0)

    // No line at all adds :position=>["is incomplete"]
    const incomplete = await rejection(api.MergeRequestDiscussions.create(42, 7, "no line", { position }))
    expect(incomplete.message).toBe(
      `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"], :position=>["is incomplete"]}`,
    )
    // A stale head SHA is refused under the default positionShas: "current"
    const stale = await rejection(
      api.MergeRequestDiscussions.create(42, 7, "stale", { position: { ...position, headSha: base, newLine: "26" } }),
    )
    expect(stale.message).toBe(lineCodeError)
    // Grape parameter validation uses `error`, not `message`
    const badType = await rejection(
      api.MergeRequestDiscussions.create(42, 7, "bad", {
        position: { ...position, positionType: "code" as "text", newLine: "26" },
      }),
    )
    expect(badType.message).toBe("position[position_type] does not have a valid value")
  })

  test("an unchanged line outside the hunks is accepted with both lines, as GitLab unfolds it", async () => {
    const fake = await start()
    const api = client(fake)
    const position = { positionType: "text" as const, ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts" }
    const unfolded = await api.MergeRequestDiscussions.create(42, 7, "unfolded", {
      position: { ...position, oldLine: "15", newLine: "15" },
    })
    expect(unfolded.notes![0]!.type).toBe("DiffNote")
    // below the last hunk the offset is +1 (one line was added)
    await api.MergeRequestDiscussions.create(42, 7, "bottom", {
      position: { ...position, oldLine: "29", newLine: "30" },
    })
    const inconsistent = await rejection(
      api.MergeRequestDiscussions.create(42, 7, "off by one", {
        position: { ...position, oldLine: "15", newLine: "16" },
      }),
    )
    expect(inconsistent.message).toBe(lineCodeError)
  })

  test("gitbeaker truncates a path containing &, so GitLab answers 400; a JSON body keeps it", async () => {
    const fake = await start()
    const api = client(fake)
    const position = {
      positionType: "text" as const,
      ...refs(fake),
      oldPath: "docs/a & b.md",
      newPath: "docs/a & b.md",
      newLine: "2",
    }
    const error = await rejection(api.MergeRequestDiscussions.create(42, 7, "on a&b", { position }))
    expect(error.message).toBe(lineCodeError)
    const sent = fake.state.requests.find(
      (request) => request.method === "POST" && request.path.endsWith("/discussions"),
    )!
    expect(sent.form!["position[new_path]"]).toBe("docs/a ")
    expect(sent.form!["position[old_path]"]).toBe("docs/a ")

    // The work-around (docs/gitlab.md#multipart-and-decamelised-bodies): post the position as JSON
    // through the same requester (whose prefixUrl already ends in projects/).
    const created = await api.MergeRequestDiscussions.requester.post("42/merge_requests/7/discussions", {
      body: {
        body: "on a&b",
        position: {
          position_type: "text",
          base_sha: refs(fake).baseSha,
          start_sha: refs(fake).startSha,
          head_sha: refs(fake).headSha,
          old_path: "docs/a & b.md",
          new_path: "docs/a & b.md",
          new_line: 2,
        },
      },
    })
    expect(created.status).toBe(201)
    expect(fake.state.notes[0]!.position).toMatchObject({ new_path: "docs/a & b.md", new_line: 2 })
  })

  test("replies, resolve via query parameter, and resolving one note", async () => {
    const fake = await start()
    const api = client(fake)
    const thread = await api.MergeRequestDiscussions.create(42, 7, "please rename", {
      position: { positionType: "text", ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts", newLine: "26" },
    })
    const replied = await api.MergeRequestDiscussions.addNote(42, 7, thread.id, "done in the next push")
    // replies in a DiffNote thread carry the thread's position (DiffDiscussion#reply_attributes)
    expect(replied).toMatchObject({ type: "DiffNote", body: "done in the next push", resolvable: true })

    const resolved = await api.MergeRequestDiscussions.resolve(42, 7, thread.id, true)
    expect(resolved.notes!.every((note) => note.resolved)).toBe(true)
    expect(resolved.notes![0]!.resolved_by).toMatchObject({ username: "project_42_bot" })
    const resolveRequest = fake.state.requests.find((request) => request.method === "PUT")!
    expect(resolveRequest.query).toEqual({ resolved: "true" })
    expect(fake.state.discussions[0]!.resolved).toBe(true)

    const reopened = await api.MergeRequestDiscussions.editNote(42, 7, thread.id, replied.id, { resolved: false })
    expect(reopened.resolved).toBe(false)
    expect(fake.state.discussions[0]!.resolved).toBe(false)

    const human = fake.addHumanNote("I disagree", { discussionId: thread.id })
    expect(human.author.username).toBe("alice")
    fake.resolveAsHuman(thread.id)
    const listed = await api.MergeRequestDiscussions.all(42, 7)
    expect(listed[0]!.notes!.map((note) => note.body)).toEqual(["please rename", "done in the next push", "I disagree"])
    expect(listed[0]!.notes!.every((note) => note.resolved)).toBe(true)
  })
})

describe("notes", () => {
  test("create (201), edit (200) and list with system notes, newest first by default", async () => {
    const fake = await start()
    const api = client(fake)
    const note = await api.MergeRequestNotes.create(42, 7, "<!-- ai-review:summary -->\nSummary v1")
    expect(note).toMatchObject({ type: null, system: false, author: { username: "project_42_bot" }, noteable_iid: 7 })
    const edited = await api.MergeRequestNotes.edit(42, 7, note.id, { body: "<!-- ai-review:summary -->\nSummary v2" })
    expect(edited.body).toBe("<!-- ai-review:summary -->\nSummary v2")
    fake.addSystemNote("changed the description")

    const listed = await api.MergeRequestNotes.all(42, 7, { perPage: 100 })
    expect(listed.map((item) => [item.system, item.body])).toEqual([
      [true, "changed the description"],
      [false, "<!-- ai-review:summary -->\nSummary v2"],
    ])
    const ascending = await api.MergeRequestNotes.all(42, 7, { sort: "asc" })
    expect(ascending[0]!.id).toBe(note.id)
    expect(fake.state.requests.filter((request) => request.method === "POST").map((request) => request.status)).toEqual(
      [201],
    )
  })

  test("the bot cannot edit a human's note (403); a reply to a plain comment turns it into a thread", async () => {
    const fake = await start()
    const api = client(fake)
    const human = fake.addHumanNote("why is v5 500?")
    const error = await rejection(api.MergeRequestNotes.edit(42, 7, human.id, { body: "hijacked" }))
    expect(error.cause?.response.status).toBe(403)
    await api.MergeRequestDiscussions.addNote(42, 7, human.discussionId, "because of the spec")
    const [discussion] = await api.MergeRequestDiscussions.all(42, 7)
    expect(discussion).toMatchObject({ individual_note: false })
    expect(discussion!.notes!.map((note) => note.type)).toEqual(["DiscussionNote", "DiscussionNote"])
  })

  test("a job token is refused on writes with 401, as GitLab does", async () => {
    const fake = await start()
    const job = new Gitlab({ host: fake.url, jobToken: fake.tokens.job })
    const error = await rejection(job.MergeRequestNotes.create(42, 7, "from CI_JOB_TOKEN"))
    expect(error.message).toBe("401 Unauthorized")
    expect(error.cause?.response.status).toBe(401)
    expect(fake.state.requests[0]!.headers["job-token"]).toBe(fake.tokens.job)
    await rejection(job.MergeRequestDiscussions.all(42, 7))
    await rejection(job.MergeRequestApprovals.approve(42, 7))
    expect(fake.state.requests.map((request) => request.status)).toEqual([401, 401, 401])
    const anonymous = await fetch(`${fake.apiUrl}/projects/42/merge_requests/7/notes`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    })
    expect([anonymous.status, await anonymous.json()]).toEqual([401, { message: "401 Unauthorized" }])
    // Reads too, unless the instance has 18.3's fine-grained job-token permissions (jobTokenReads)
    expect(await rejection(job.MergeRequests.show(42, 7))).toMatchObject({ message: "404 Project Not Found" })
    const newer = await start({ jobTokenReads: true })
    const newerJob = new Gitlab({ host: newer.url, jobToken: newer.tokens.job })
    expect((await newerJob.MergeRequestNotes.all(42, 7)).length).toBe(0)
    await rejection(newerJob.MergeRequestNotes.create(42, 7, "still refused"))
  })
})

describe("project members", () => {
  test("ProjectMembers.show with includeInherited reads a member's access level; a non-member is 404 Not found", async () => {
    const fake = await start({ members: { carol: 40, dave: 10 } })
    const api = client(fake)
    const carol = fake.state.users.find((user) => user.username === "carol")!
    const member = await api.ProjectMembers.show(42, carol.id, { includeInherited: true })
    expect(member).toMatchObject({
      id: carol.id,
      username: "carol",
      name: "Carol",
      state: "active",
      access_level: 40,
      expires_at: null,
    })
    expect(member.web_url).toBe(`${fake.url}/carol`)
    expect(fake.state.requests.at(-1)!.path).toBe(`/api/v4/projects/42/members/all/${carol.id}`)
    // by default the MR author and the bot are Developers
    const bot = await api.ProjectMembers.show("group/project", 9042, { includeInherited: true })
    expect([bot.username, bot.access_level]).toEqual(["project_42_bot", 30])
    expect(fake.state.requests.at(-1)!.path).toBe("/api/v4/projects/group%2Fproject/members/all/9042")

    const stranger = fake.setMember("mallory", null)
    const missing = await rejection(api.ProjectMembers.show(42, stranger.id, { includeInherited: true }))
    expect(missing.message).toBe("404 Not found")
    expect(missing.cause?.response.status).toBe(404)
    const raw = await fetch(`${fake.apiUrl}/projects/42/members/all/999999`, {
      headers: { "private-token": fake.tokens.bot },
    })
    expect([raw.status, await raw.json()]).toEqual([404, { message: "404 Not found" }])

    // a role changes, a membership ends; the direct route answers alike (the fake has no groups)
    expect((await api.ProjectMembers.show(42, fake.setMember("dave", 30).id)).access_level).toBe(30)
    fake.setMember("carol", null)
    expect((await rejection(api.ProjectMembers.show(42, carol.id, { includeInherited: true }))).message).toBe(
      "404 Not found",
    )
    const all = await api.ProjectMembers.all(42, { includeInherited: true })
    expect(all.map((item) => [item.username, item.access_level])).toEqual([
      ["alice", 30],
      ["project_42_bot", 30],
      ["dave", 30],
    ])
  })

  test("members need a token (401), an integer user_id (400) and a known project (404)", async () => {
    const fake = await start({ members: { alice: null } })
    const anonymous = await fetch(`${fake.apiUrl}/projects/42/members/all/101`)
    expect([anonymous.status, await anonymous.json()]).toEqual([401, { message: "401 Unauthorized" }])
    const job = new Gitlab({ host: fake.url, jobToken: fake.tokens.job })
    expect((await rejection(job.ProjectMembers.show(42, 101, { includeInherited: true }))).cause?.response.status).toBe(
      401,
    )
    const api = client(fake)
    const invalid = await fetch(`${fake.apiUrl}/projects/42/members/all/alice`, {
      headers: { "private-token": fake.tokens.bot },
    })
    expect([invalid.status, await invalid.json()]).toEqual([400, { error: "user_id is invalid" }])
    expect((await rejection(api.ProjectMembers.show(43, 101, { includeInherited: true }))).message).toBe(
      "404 Project Not Found",
    )
    // the MR author of a fork is no member of the target project
    expect((await rejection(api.ProjectMembers.show(42, 101, { includeInherited: true }))).message).toBe(
      "404 Not found",
    )
    expect(() => fake.setMember("eve", 35 as never)).toThrow(/not a project access level/)
  })
})

describe("note webhooks", () => {
  test("a note webhook's ids and texts are the ones gitbeaker reads back for the same note", async () => {
    const fake = await start()
    const api = client(fake)
    const thread = await api.MergeRequestDiscussions.create(42, 7, "v5 changed meaning", {
      position: { positionType: "text", ...refs(fake), oldPath: "src/app.ts", newPath: "src/app.ts", newLine: "5" },
    })
    const reply = fake.addHumanNote("@project_42_bot why?", { discussionId: thread.id })
    const payload = fake.noteWebhookPayload(reply.id)
    const [discussion] = await api.MergeRequestDiscussions.all(42, 7)
    const listed = discussion!.notes!.find((note) => note.id === reply.id)!
    expect(payload.object_attributes).toMatchObject({
      id: listed.id,
      note: listed.body,
      type: listed.type,
      discussion_id: discussion!.id,
      position: listed.position,
      noteable_id: (await api.MergeRequests.show(42, 7)).id,
    })
    expect(payload.user).toMatchObject({ id: listed.author.id, username: listed.author.username })
    const mr = await api.MergeRequests.show(42, 7)
    expect(payload.merge_request).toMatchObject({
      iid: mr.iid,
      id: mr.id,
      source_branch: mr.source_branch,
      target_branch: mr.target_branch,
      last_commit: { id: mr.sha },
      detailed_merge_status: mr.detailed_merge_status,
    })
    expect(payload.object_attributes.url).toBe(`${mr.web_url}#note_${reply.id}`)
  })
})

describe("approvals, reviewers and request changes", () => {
  test("unapprove without an approval is 404; approve with a wrong sha is 409, with the head sha 201, twice 401", async () => {
    const fake = await start()
    const api = client(fake)
    const notApproved = await rejection(api.MergeRequestApprovals.unapprove(42, 7))
    expect(notApproved.cause?.response.status).toBe(404)

    const conflict = await rejection(api.MergeRequestApprovals.approve(42, 7, { sha: base }))
    expect(conflict.cause?.response.status).toBe(409)
    expect(conflict.message).toBe(`SHA does not match HEAD of source branch: ${refs(fake).headSha}`)

    const approval = await api.MergeRequestApprovals.approve(42, 7, { sha: refs(fake).headSha })
    expect(approval).toMatchObject({
      user_has_approved: true,
      approved: true,
      approved_by: [{ user: { username: "project_42_bot" } }],
    })
    expect(fake.state.approvals).toMatchObject([{ user: { username: "project_42_bot" }, sha: refs(fake).headSha }])
    const again = await rejection(api.MergeRequestApprovals.approve(42, 7))
    expect(again.cause?.response.status).toBe(401)
    expect(fake.state.requests.map((request) => request.status)).toEqual([404, 409, 201, 401])
  })

  test("Users.showCurrentUser is the bot user", async () => {
    const fake = await start()
    const user = await client(fake).Users.showCurrentUser()
    expect(user).toMatchObject({ username: "project_42_bot", bot: true })
    const human = await client(fake, fake.tokens.human).Users.showCurrentUser()
    expect(human).toMatchObject({ username: "alice", bot: false })
  })

  test("request changes via GraphQL needs the bot to be a reviewer; gitbeaker's requester decamelizes variables", async () => {
    const fake = await start()
    const api = client(fake)
    const mutation = `mutation($project_path: ID!, $iid: String!) {
      mergeRequestRequestChanges(input: { projectPath: $project_path, iid: $iid }) { mergeRequest { iid detailedMergeStatus } errors }
    }`
    const post = (variables: Record<string, unknown>) =>
      api.MergeRequests.requester.post("../graphql", { body: { query: mutation, variables } })

    const notReviewer = await post({ project_path: "group/project", iid: "7" })
    expect(notReviewer.body).toEqual({
      data: {
        mergeRequestRequestChanges: {
          mergeRequest: { iid: "7", detailedMergeStatus: "MERGEABLE" },
          errors: ["Reviewer not found"],
        },
      },
    })

    const me = await api.Users.showCurrentUser()
    const edited = await api.MergeRequests.edit(42, 7, { reviewerIds: [me.id] })
    expect(edited.reviewers).toMatchObject([{ username: "project_42_bot" }])
    expect(await api.MergeRequests.showReviewers(42, 7)).toMatchObject([
      { user: { username: "project_42_bot" }, state: "unreviewed" },
    ])

    const requested = await post({ project_path: "group/project", iid: "7" })
    expect(requested.body).toMatchObject({ data: { mergeRequestRequestChanges: { errors: [] } } })
    expect((await api.MergeRequests.show(42, 7)).detailed_merge_status).toBe("requested_changes")
    expect(fake.state.requestChanges.map((call) => [call.via, call.applied])).toEqual([
      ["graphql", false],
      ["graphql", true],
    ])

    // camelCase variables are sent as project_path: the query's $projectPath is then unset
    // (docs/gitlab.md#multipart-and-decamelised-bodies)
    const decamelized = await api.MergeRequests.requester.post("../graphql", {
      body: {
        query: mutation.replaceAll("$project_path", "$projectPath"),
        variables: { projectPath: "group/project", iid: "7" },
      },
    })
    const sent = fake.state.requests[fake.state.requests.length - 1]!
    expect((sent.body as { variables: Record<string, unknown> }).variables).toEqual({
      project_path: "group/project",
      iid: "7",
    })
    expect(decamelized.body).toMatchObject({
      errors: [{ message: "Variable $projectPath of type ID! was provided invalid value" }],
    })
  })

  test("an instance without the mutation answers GraphQL's undefinedField error, and introspection agrees", async () => {
    const fake = await start({ requestChangesMutation: false })
    const ask = (query: string) =>
      fetch(`${fake.url}/api/graphql`, {
        method: "POST",
        headers: { authorization: `Bearer ${fake.tokens.bot}`, "content-type": "application/json" },
        body: JSON.stringify({ query }),
      }).then((response) => response.json() as Promise<any>)
    const fields = await ask(`{ __type(name: "Mutation") { fields { name } } }`)
    expect(fields.data.__type.fields.map((field: { name: string }) => field.name)).not.toContain(
      "mergeRequestRequestChanges",
    )
    const answer = await ask(
      `mutation { mergeRequestRequestChanges(input: { projectPath: "group/project", iid: "7" }) { errors } }`,
    )
    expect(answer.errors[0]).toMatchObject({
      message: "Field 'mergeRequestRequestChanges' doesn't exist on type 'Mutation'",
      extensions: { code: "undefinedField" },
    })
    expect(fake.state.requestChanges).toHaveLength(0)
    // A query that does not parse: HTTP 200, one error with where it went wrong, nothing run.
    const broken = await ask(`mutation { mergeRequestRequestChanges(input: { projectPath: "group/project" `)
    expect(broken.data).toBeUndefined()
    expect(broken.errors).toEqual([
      { message: expect.stringMatching(/^Syntax Error: /), locations: [{ line: 1, column: expect.any(Number) }] },
    ])
  })
})

describe("failure injection", () => {
  test("429 carries Retry-After and RateLimit-* headers with a text/plain body, and stores nothing", async () => {
    const fake = await start()
    fake.failNext({ method: "POST", path: /\/notes$/ }, { status: 429, retryAfter: 30 })
    const response = await fetch(`${fake.apiUrl}/projects/42/merge_requests/7/notes`, {
      method: "POST",
      headers: { "PRIVATE-TOKEN": fake.tokens.bot, "content-type": "application/json" },
      body: JSON.stringify({ body: "rate limited" }),
    })
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("30")
    expect(response.headers.get("content-type")).toBe("text/plain")
    expect(response.headers.get("ratelimit-remaining")).toBe("0")
    expect(Number(response.headers.get("ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000)
    expect(await response.text()).toBe("Retry later\n")
    expect(fake.state.notes).toHaveLength(0)

    // The application-level notes limit is JSON and carries no RateLimit-* headers (docs/gitlab.md#rate-limits)
    fake.failNext({ method: "POST" }, { status: 429, rateLimitHeaders: false })
    const limited = await fetch(`${fake.apiUrl}/projects/42/merge_requests/7/notes`, {
      method: "POST",
      headers: { "PRIVATE-TOKEN": fake.tokens.bot, "content-type": "application/json" },
      body: JSON.stringify({ body: "rate limited" }),
    })
    expect([limited.status, limited.headers.get("ratelimit-remaining"), await limited.json()]).toEqual([
      429,
      null,
      { message: { error: "This endpoint has been requested too many times. Try again later." } },
    ])
  })

  test("gitbeaker retries a 429 ten times in well under a second, ignoring Retry-After", async () => {
    const fake = await start()
    fake.failNext({ path: /\/notes$/ }, { status: 429, retryAfter: 30 }, 10)
    const startedAt = performance.now()
    const error = await client(fake)
      .MergeRequestNotes.create(42, 7, "x")
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(GitbeakerRetryError)
    expect(fake.state.requests).toHaveLength(10)
    expect(performance.now() - startedAt).toBeLessThan(5_000)
  })

  test("502 after store keeps the note, so gitbeaker's automatic retry of the POST duplicates it", async () => {
    const fake = await start()
    fake.failNext({ method: "POST", path: /\/notes$/ }, { status: 502, afterStore: true })
    const note = await client(fake).MergeRequestNotes.create(42, 7, "posted once")
    expect(fake.state.requests.map((request) => [request.status, request.injected])).toEqual([
      [502, "502-after-store"],
      [201, undefined],
    ])
    expect(fake.state.notes.map((stored) => stored.body)).toEqual(["posted once", "posted once"])
    expect(note.id).toBe(fake.state.notes[1]!.id)
  })
})

describe("quick actions and pushes", () => {
  test("a note line starting with /approve is executed and stripped; in a code block or mid-line it is not", async () => {
    const fake = await start()
    const api = client(fake)
    await api.MergeRequestNotes.create(42, 7, "Quote: use `/approve` when done.\n```\n/approve\n```")
    expect(fake.state.executedQuickActions).toEqual([])

    const note = await api.MergeRequestNotes.create(42, 7, "Looks fine\n/approve")
    expect(note.body).toBe("Looks fine")
    expect(fake.state.executedQuickActions).toMatchObject([
      { name: "approve", applied: true, user: { username: "project_42_bot" }, noteId: note.id },
    ])
    expect(fake.state.approvals).toHaveLength(1)

    // only commands: GitLab stores nothing and answers 202
    const response = await fetch(`${fake.apiUrl}/projects/42/merge_requests/7/notes`, {
      method: "POST",
      headers: { "PRIVATE-TOKEN": fake.tokens.bot, "content-type": "application/json" },
      body: JSON.stringify({ body: "/request_changes" }),
    })
    // the bot is not a reviewer, so /request_changes cannot apply
    expect([response.status, await response.json()]).toEqual([
      400,
      { message: "400 Bad request - Could not apply request_changes command." },
    ])
    expect(fake.state.executedQuickActions.map((action) => [action.name, action.applied])).toEqual([
      ["approve", true],
      ["request_changes", false],
    ])
  })

  test("push() makes a new version and head sha, resets approvals, and moves DiffNote positions", async () => {
    const fake = await start()
    const api = client(fake)
    const before = refs(fake)
    await api.MergeRequestDiscussions.create(42, 7, "on the added line", {
      position: { positionType: "text", ...before, oldPath: "src/app.ts", newPath: "src/app.ts", newLine: "26" },
    })
    await api.MergeRequestApprovals.approve(42, 7, { sha: before.headSha })

    repo.git("checkout", "-q", "feature")
    onTestFinished(() => {
      repo.git("reset", "-q", "--hard", "HEAD~1")
      repo.git("checkout", "-q", "main")
    })
    await repo.write({ "src/top.ts": "export const top = 1\n" })
    const pushed = repo.commit("second push")
    await fake.push()

    const mergeRequest = await api.MergeRequests.show(42, 7)
    expect(mergeRequest.sha).toBe(pushed)
    expect(mergeRequest.diff_refs).toMatchObject({ head_sha: pushed, base_sha: before.baseSha })
    const versions = await api.MergeRequests.allDiffVersions(42, 7)
    expect(versions.map((version) => version.head_commit_sha)).toEqual([pushed, before.headSha])
    expect(fake.state.approvals).toEqual([])
    expect(fake.state.approvalEvents.map((event) => event.action)).toEqual(["approve", "reset"])
    expect((await api.MergeRequestApprovals.showConfiguration(42, { mergerequestIId: 7 })).approved).toBe(false)
    const [thread] = await api.MergeRequestDiscussions.all(42, 7)
    expect(thread!.notes![0]!.position).toMatchObject({ head_sha: pushed, new_line: 26 })

    // the new head must be approved again, and old SHAs are now stale
    const stale = await rejection(api.MergeRequestApprovals.approve(42, 7, { sha: before.headSha }))
    expect(stale.cause?.response.status).toBe(409)
    await api.MergeRequestApprovals.approve(42, 7, { sha: pushed })
    const systemNotes = (await api.MergeRequestNotes.all(42, 7, { sort: "asc" }))
      .filter((note) => note.system)
      .map((note) => note.body.split("\n")[0])
    expect(systemNotes).toEqual([
      "approved this merge request",
      "added 1 commit",
      "reset approvals from @project_42_bot by pushing to the branch",
      "approved this merge request",
    ])
  })
})

describe("repository tree", () => {
  test("allRepositoryTrees lists a folder at a ref recursively, trees first, across Link pages; 404s carry GitLab's messages", async () => {
    const own = await createTempRepo("gitlab-fake-tree-")
    onTestFinished(() => own.remove())
    await own.write({
      "README.md": "# r\n",
      "rules/ENG-001.md": "one\n",
      "rules/http/ENG-002.md": "two\n",
      "rules/http/ENG-003.md": "three\n",
    })
    own.commit("rules")
    own.git("checkout", "-q", "-b", "feature")
    await own.write({ "rules/ENG-004.md": "four, from the change\n" })
    own.commit("change")
    own.git("checkout", "-q", "main")
    const fake = await start({ repoDir: own.dir })
    const api = client(fake)

    const entries = await api.Repositories.allRepositoryTrees(42, {
      path: "rules",
      ref: "main",
      recursive: true,
      perPage: 2,
    })
    const blob = (path: string) => ({
      id: own.git("rev-parse", `main:${path}`).trim(),
      name: path.split("/").pop(),
      type: "blob",
      path,
      mode: "100644",
    })
    expect(entries).toEqual([
      {
        id: own.git("rev-parse", "main:rules/http").trim(),
        name: "http",
        type: "tree",
        path: "rules/http",
        mode: "040000",
      },
      blob("rules/ENG-001.md"),
      blob("rules/http/ENG-002.md"),
      blob("rules/http/ENG-003.md"),
    ])
    const pages = fake.state.requests.filter((request) => request.path.endsWith("/repository/tree"))
    expect(pages.map((request) => request.query.page)).toEqual([undefined, "2"])
    expect(pages[1]!.query).toEqual({
      id: "42",
      page: "2",
      pagination: "legacy",
      path: "rules",
      per_page: "2",
      recursive: "true",
      ref: "main",
    })

    // Not recursive: the folder's own entries only; the source branch has its own tree.
    expect(
      (await api.Repositories.allRepositoryTrees(42, { path: "rules", ref: "main" })).map((entry) => entry.path),
    ).toEqual(["rules/http", "rules/ENG-001.md"])
    expect(
      (await api.Repositories.allRepositoryTrees(42, { path: "rules", ref: "feature" })).map((entry) => entry.path),
    ).toContain("rules/ENG-004.md")

    const missingPath = await rejection(api.Repositories.allRepositoryTrees(42, { path: "nope", ref: "main" }))
    expect(missingPath.cause?.response.status).toBe(404)
    expect(missingPath.cause?.description).toBe("404 invalid revision or path Not Found")
    const fileAsPath = await rejection(api.Repositories.allRepositoryTrees(42, { path: "README.md", ref: "main" }))
    expect(fileAsPath.cause?.description).toBe("404 invalid revision or path Not Found")
    const unknownRef = await rejection(
      api.Repositories.allRepositoryTrees(42, { path: "rules", ref: "no-such-branch" }),
    )
    expect(unknownRef.cause?.description).toBe("404 Tree Not Found")
    expect(fake.state.fakeErrors).toEqual([])
  })
})
