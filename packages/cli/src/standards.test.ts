import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createTempRepo, gitEnv, type TempRepo } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { main } from "./main"

// `plan` over real temp repositories: the standards the compliance reviewer gets are the target
// branch's, whatever the change under review does to them.

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

const baseRule =
  "# ENG-001: Timeouts on outbound calls\n\nEvery outbound HTTP call MUST set a timeout of at most 5 seconds.\n"
const weakenedRule = "# ENG-001: Timeouts on outbound calls\n\nOutbound calls MAY run without a timeout.\n"

async function repoWithStandards(): Promise<TempRepo> {
  const repo = await createTempRepo("standards-cli-")
  cleanups.push(() => repo.remove())
  await repo.write({
    "opencode-reviewer.json": JSON.stringify({ standards: "docs/standards" }),
    "docs/standards/ENG-001.md": baseRule,
    "src/app.ts": "export const app = 1\n",
  })
  repo.commit("base")
  repo.git("checkout", "-q", "-b", "feature")
  return repo
}

async function plan(repo: TempRepo, args: string[] = []) {
  let stdout = ""
  let stderr = ""
  const code = await main({
    argv: ["plan", "--json", "--repo", repo.dir, ...args],
    env: gitEnv(repo.dir),
    cwd: repo.dir,
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    stdin: async () => new Uint8Array(),
    execPath: process.execPath,
  })
  if (code !== 0) throw new Error(`plan failed (${code}): ${stderr}`)
  const { configFile } = JSON.parse(stdout) as { configFile: string }
  const config = JSON.parse(await readFile(configFile, "utf8")) as { agent: Record<string, { prompt?: string }> }
  return { config, stderr }
}

// Fifteen lines: a lite review, where the compliance reviewer runs (trivial changes skip it).
const clientLines = [
  "export async function get(url: string) {",
  "  return fetch(url)",
  "}",
  ...Array.from({ length: 12 }, (_, n) => `export const path${n} = "/v1/items/${n}"`),
]
const client = clientLines.join("\n") + "\n"

describe("standards in the plan", () => {
  test("a change that rewrites a standard is judged by the target branch's version", async () => {
    const repo = await repoWithStandards()
    await repo.write({
      "docs/standards/ENG-001.md": weakenedRule,
      "docs/standards/ENG-002.md": "# ENG-002: Written by the change\n\nAnything goes.\n",
      "src/client.ts": client,
    })
    repo.commit("add a client and relax the rule")

    const { config, stderr } = await plan(repo)
    const compliance = config.agent.compliance!.prompt!
    expect(compliance).toContain("## ENG-001: Timeouts on outbound calls")
    expect(compliance).toContain("MUST set a timeout of at most 5 seconds.")
    expect(compliance).not.toContain("MAY run without a timeout")
    expect(compliance).not.toContain("ENG-002")
    for (const [name, agent] of Object.entries(config.agent)) {
      if (name !== "compliance") expect(agent.prompt ?? "", name).not.toContain("ENG-001")
    }
    expect(stderr).not.toContain("warning: standards")
  })

  test("uncommitted edits to the standards do not count either (--working-tree)", async () => {
    const repo = await repoWithStandards()
    await repo.write({ "src/client.ts": client })
    repo.commit("add a client")
    await writeFile(join(repo.dir, "docs/standards/ENG-001.md"), weakenedRule)
    const { config } = await plan(repo, ["--working-tree"])
    expect(config.agent.compliance!.prompt).toContain("MUST set a timeout of at most 5 seconds.")
    expect(config.agent.compliance!.prompt).not.toContain("MAY run without a timeout")
  })

  test("with --patch the folder on disk is the trusted side, and a symlinked document is never read", async () => {
    const repo = await repoWithStandards()
    const outside = await mkdtemp(join(tmpdir(), "standards-outside-"))
    cleanups.push(() => rm(outside, { recursive: true, force: true }))
    await writeFile(join(outside, "secret.md"), "# ENG-666: Not a standard\n\nSECRET_VALUE=hunter2\n")
    await symlink(join(outside, "secret.md"), join(repo.dir, "docs/standards/ENG-666.md"))
    const patch = join(outside, "change.diff")
    await writeFile(
      patch,
      `diff --git a/src/client.ts b/src/client.ts\nnew file mode 100644\n--- /dev/null\n+++ b/src/client.ts\n@@ -0,0 +1,${clientLines.length} @@\n${clientLines.map((line) => `+${line}\n`).join("")}`,
    )
    const { config } = await plan(repo, ["--patch", patch])
    expect(config.agent.compliance!.prompt).toContain("MUST set a timeout of at most 5 seconds.")
    expect(config.agent.compliance!.prompt).not.toContain("hunter2")
  })

  test("a standards folder missing on the target branch warns on stderr and tells the coordinator", async () => {
    const repo = await createTempRepo("standards-cli-")
    cleanups.push(() => repo.remove())
    await repo.write({
      "opencode-reviewer.json": JSON.stringify({ standards: "docs/rules" }),
      "src/app.ts": "export const app = 1\n",
    })
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    await repo.write({ "docs/rules/ENG-001.md": baseRule, "src/client.ts": client })
    repo.commit("standards only on the change")
    const { config, stderr } = await plan(repo)
    expect(stderr).toContain(
      "warning: standards: standards from docs/rules on the target branch could not be loaded (docs/rules on the target branch: no such folder)",
    )
    expect(config.agent.compliance!.prompt).toContain("## Engineering standards: not available")
    expect(config.agent.compliance!.prompt).not.toContain("MUST set a timeout")
    expect(config.agent.review_coordinator!.prompt).toContain("## Engineering standards not checked")
  })
})
