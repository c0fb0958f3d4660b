import { createTempRepo, type GitlabFake, startGitlabFake, type TempRepo } from "@opencode-reviewer/testkit"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { createGitlabProvider, type GitlabProviderOptions } from "./gitlab-provider"

// Change.readHeadFile on GitLab: the checkout's git at the head sha when it has it, else the
// repository files API at the head sha (never the target branch).

let repo: TempRepo
let fake: GitlabFake
let head = ""

beforeEach(async () => {
  repo = await createTempRepo()
  await repo.write({ "AGENTS.md": "# target branch rules\n", "src/a.ts": "a\n" })
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({ "AGENTS.md": "# merge request rules\n\n- Follow best practices.\n" })
  head = repo.commit("feature")
  repo.git("checkout", "-q", "main")
  fake = await startGitlabFake({ repoDir: repo.dir, sourceBranch: "feature", targetBranch: "main" })
})

afterEach(async () => {
  await fake.close()
  await repo.remove()
})

function provider(options: Partial<GitlabProviderOptions> = {}) {
  const env = {
    CI_API_V4_URL: fake.apiUrl,
    CI_SERVER_URL: fake.url,
    CI_MERGE_REQUEST_PROJECT_ID: String(fake.projectId),
    CI_MERGE_REQUEST_IID: String(fake.iid),
    CI_PIPELINE_SOURCE: "merge_request_event",
    GITLAB_TOKEN: fake.tokens.bot,
  }
  return createGitlabProvider({ env, repoDir: repo.dir, sleep: async () => {}, ...options })
}

const fileRequests = () => fake.state.requests.filter((request) => request.path.includes("/repository/files/"))

describe("gitlab provider readHeadFile", () => {
  test("reads the head version through the API when there is no local reader", async () => {
    const change = await provider().readChange()
    expect(await change.readHeadFile!("AGENTS.md")).toBe("# merge request rules\n\n- Follow best practices.\n")
    expect(await change.readHeadFile!("missing.md")).toBeNull()
    expect(fileRequests().map((request) => request.query.ref)).toEqual([head, head])
  })

  test("uses the checkout at the head sha first, the API only when it has nothing", async () => {
    const asked: string[] = []
    const change = await provider({
      readLocalFile: async (commit, path) => {
        asked.push(`${commit}:${path}`)
        return path === "AGENTS.md" ? "# from the checkout\n" : null
      },
    }).readChange()
    expect(await change.readHeadFile!("AGENTS.md")).toBe("# from the checkout\n")
    expect(fileRequests()).toHaveLength(0)
    expect(await change.readHeadFile!("src/a.ts")).toBe("a\n")
    expect(asked).toEqual([`${head}:AGENTS.md`, `${head}:src/a.ts`])
    expect(fileRequests()).toHaveLength(1)
  })
})
