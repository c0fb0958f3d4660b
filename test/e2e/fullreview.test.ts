import { existsSync } from "node:fs"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import type { ReviewRecord } from "@opencode-reviewer/core"
import {
  createOpencodeSandbox,
  gitEnv,
  type OpencodeSandbox,
  runOpencode,
  text,
  toolCall,
} from "@opencode-reviewer/testkit"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { cleanUp, createScenario, sqlFinding } from "./harness"

// /fullreview as a user runs it: the real opencode with the plugin loaded by path, the command the
// plugin registers, a scripted model in the user's session that calls the tool, and inside the tool
// a whole opencode-reviewer review (its own opencode child) against the same scripted model server.

const plugin = pathToFileURL(
  join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "../../packages/local/src/fullreview-plugin.ts"),
).href

interface JsonLine {
  type: string
  part?: {
    type: string
    tool?: string
    state?: {
      status: string
      input?: Record<string, unknown>
      output?: string
      error?: string
      metadata?: Record<string, unknown>
    }
  }
}

let sandbox: OpencodeSandbox
beforeAll(async () => {
  sandbox = await createOpencodeSandbox()
})
afterAll(async () => {
  await cleanUp()
  await sandbox.remove()
})

describe("/fullreview", () => {
  test("reviews the working tree through opencode run --command fullreview and shows findings, decision and cost", async () => {
    const scenario = await createScenario()
    // An uncommitted change too: /fullreview reviews the working tree, not only commits.
    await writeFile(join(scenario.repo.dir, "src/app.ts"), "export const a = 2\n")
    const { server, repo } = scenario
    // The user's key comes from `opencode auth login` (OpenCode's auth.json), not from the config.
    const reviewConfig = JSON.parse(await readFile(scenario.configFile, "utf8"))
    delete reviewConfig.provider.fake.options.apiKey
    await writeFile(scenario.configFile, JSON.stringify(reviewConfig))
    await mkdir(join(sandbox.root, "data/opencode"), { recursive: true })
    await writeFile(
      join(sandbox.root, "data/opencode/auth.json"),
      JSON.stringify({ fake: { type: "api", key: "key-from-auth-login" } }),
    )
    server.rule(
      (request) => request.model === "session",
      (request) => {
        if (request.isTitle) return text("Full review")
        if (request.toolResults.length === 0) {
          const typed = /arguments from the user: (.*)/.exec(request.lastUser)?.[1] ?? ""
          return toolCall("fullreview", { arguments: typed })
        }
        return text(`Here is the review:\n\n${request.toolResults[0]!.content}`)
      },
    )
    const config = {
      $schema: "https://opencode.ai/config.json",
      plugin: [plugin],
      provider: {
        fake: {
          npm: "@ai-sdk/openai-compatible",
          options: { baseURL: server.url, apiKey: "session-key" },
          models: { session: { limit: { context: 200_000, output: 8_000 } } },
        },
      },
      model: "fake/session",
      small_model: "fake/session",
    }
    const run = await runOpencode(sandbox, ["run", "--format", "json", "--command", "fullreview", "main"], {
      cwd: repo.dir,
      env: {
        ...gitEnv(repo.dir),
        OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
        OPENCODE_REVIEWER_CONFIG: scenario.configFile,
      },
      timeoutMs: 120_000,
    })
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as JsonLine)
    const call = lines.find((line) => line.part?.type === "tool" && line.part.tool === "fullreview")?.part
    expect(call?.state?.status, JSON.stringify(call)).toBe("completed")
    // The user's words reached the tool, and `main` became the base of the review.
    expect(call?.state?.input).toEqual({ arguments: "main" })
    const output = call!.state!.output!
    expect(output).toContain("# Code review: significant concerns")
    expect(output).toContain(`\`${sqlFinding.file}:${sqlFinding.line}\` — ${sqlFinding.title}`)
    expect(output).toMatch(/Cost \$\d+\.\d{2}/)
    expect(output).toContain("fails the review job with exit 2")
    expect(call?.state?.metadata).toMatchObject({ decision: "significant_concerns", exitCode: 2, findings: 1 })

    // The review read the working tree (the uncommitted src/app.ts) against main.
    const outputDir = join(repo.dir, ".opencode-reviewer")
    const plan = JSON.parse(await readFile(join(outputDir, "work/plan.json"), "utf8")) as { files: { path: string }[] }
    expect(plan.files.map((file) => file.path).sort()).toEqual(["src/app.ts", "src/auth/login.ts"])
    const record = JSON.parse(await readFile(join(outputDir, "review.json"), "utf8")) as ReviewRecord
    // The session's model got the review back to show it.
    const final = server.requests.filter((request) => request.model === "session" && !request.isTitle).at(-1)!
    expect(final.toolResults[0]!.content).toContain(sqlFinding.title)
    expect(record.usage.costUsd).toBeGreaterThan(0)
    // The review's own OpenCode used the borrowed key, and the copy did not outlive the run.
    const coordinatorRequest = server.requests.find((request) => request.model === "coordinator")!
    expect(coordinatorRequest.headers.authorization).toBe("Bearer key-from-auth-login")
    expect(existsSync(join(outputDir, "opencode-home/data/opencode/auth.json"))).toBe(false)

    // The same decision and findings as the CLI run a pipeline makes on this scenario (exit 2,
    // significant concerns, the one SQL finding: package.test.ts and review.test.ts run it), without
    // a third opencode process to show it again.
    expect(record.decision).toBe("significant_concerns")
    expect(record.findings.map((finding) => [finding.file, finding.line, finding.title])).toEqual([
      [sqlFinding.file, sqlFinding.line, sqlFinding.title],
    ])
  }, 180_000)
})
