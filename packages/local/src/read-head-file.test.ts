import { symlink } from "node:fs/promises"
import { join } from "node:path"
import { createTempRepo, gitEnv, type TempRepo } from "@opencode-reviewer/testkit"
import { afterEach, beforeEach, describe, expect, test } from "vitest"
import { createLocalProvider } from "./local-provider"
import { createPatchProvider } from "./patch-provider"

// Change.readHeadFile: the whole file as the change under review has it.

let repo: TempRepo

beforeEach(async () => {
  repo = await createTempRepo()
  await repo.write({ "AGENTS.md": "# base rules\n", "src/a.ts": "a\n" })
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  await repo.write({ "AGENTS.md": "# feature rules\n\n- Write clean code.\n", "docs/CLAUDE.md": "# new\n" })
  repo.commit("feature")
})

afterEach(() => repo.remove())

describe("local provider readHeadFile", () => {
  test("committed: the file at the head commit, not the working tree, null when absent", async () => {
    await repo.write({ "AGENTS.md": "# uncommitted edit\n" })
    const change = await createLocalProvider({ repoDir: repo.dir, base: "main", env: gitEnv(repo.dir) }).readChange()
    expect(await change.readHeadFile!("AGENTS.md")).toBe("# feature rules\n\n- Write clean code.\n")
    expect(await change.readHeadFile!("docs/CLAUDE.md")).toBe("# new\n")
    expect(await change.readHeadFile!("missing.md")).toBeNull()
  })

  test("working tree: the file on disk; paths leaving the checkout and symlinks are not followed", async () => {
    await repo.write({ "AGENTS.md": "# uncommitted edit\n" })
    await symlink("/etc/hostname", join(repo.dir, "LINK.md"))
    const change = await createLocalProvider({
      repoDir: repo.dir,
      base: "main",
      workingTree: true,
      env: gitEnv(repo.dir),
    }).readChange()
    expect(await change.readHeadFile!("AGENTS.md")).toBe("# uncommitted edit\n")
    expect(await change.readHeadFile!("../outside.md")).toBeNull()
    expect(await change.readHeadFile!("LINK.md")).toBeNull()
    expect(await change.readHeadFile!("missing.md")).toBeNull()
  })
})

describe("patch provider readHeadFile", () => {
  test("knows nothing beyond the diff: always null", async () => {
    const change = await createPatchProvider({
      patch: new TextEncoder().encode(repo.git("diff", "main", "feature")),
      source: "patch",
      trustedDir: repo.dir,
    }).readChange()
    expect(await change.readHeadFile!("AGENTS.md")).toBeNull()
  })
})
