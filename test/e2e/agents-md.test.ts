import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { findingsReply, type ModelServer } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { cleanUp, cleanups, createScenario } from "./harness"

// AGENTS.md support end to end with the real opencode binary: code findings on the AGENTS.md the
// change edits land in review.json without any model reporting them, the agents-md reviewer starts
// from the computed project-mechanics facts, and the template from a URL reaches every agent.

afterEach(cleanUp)

const baseAgentsMd = "# AGENTS.md\n\n## Commands\n\n- `npm ci` then `npm test`.\n"
const basePackageJson =
  '{\n  "name": "app",\n  "packageManager": "npm@10.8.0",\n  "scripts": {\n    "test": "vitest run"\n  }\n}\n'

// The AGENTS.md the change writes: tools without commands on line 3, filler from line 7.
const fillerAgentsMd = [
  "# AGENTS.md",
  "",
  "We use Vitest for tests and Biome for linting.",
  "",
  "## Guidelines",
  "",
  "- Write clean code.",
  "- Follow best practices.",
  "- Keep it simple.",
  "",
].join("\n")

const templateMarker = "TEMPLATE-7f3a: every command in a code block"

function serveTemplate(): { url: string; requests: () => number } {
  let requests = 0
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch() {
      requests += 1
      return new Response(`# AGENTS.md — <project>\n\n${templateMarker}\n\n\`\`\`sh\nmake test\n\`\`\`\n`, {
        headers: { "content-type": "text/markdown" },
      })
    },
  })
  cleanups.push(async () => void server.stop(true))
  return { url: `http://127.0.0.1:${server.port}/AGENTS.md.template`, requests: () => requests }
}

const suggestion = (line: number, title: string) => ({
  severity: "suggestion" as const,
  file: "src/app.ts",
  line,
  category: "code-quality",
  title,
  body: "A small thing.",
})
const systemOf = (server: ModelServer, model: string) =>
  server.requests.find((request) => request.model === model && !request.isTitle)?.system ?? ""

describe("AGENTS.md reviewer support", () => {
  test("a filler AGENTS.md and a package-manager switch: code findings in review.json, facts and template in the prompts", async () => {
    const template = serveTemplate()
    const scenario = await createScenario({
      baseFiles: {
        "AGENTS.md": baseAgentsMd,
        "package.json": basePackageJson,
        "package-lock.json": '{\n  "lockfileVersion": 3\n}\n',
      },
      files: {
        "AGENTS.md": fillerAgentsMd,
        "package.json": basePackageJson.replace("npm@10.8.0", "bun@1.3.14"),
        "bun.lock": '{\n  "lockfileVersion": 1\n}\n',
        "src/app.ts": "export const a = 2\nexport const b = 3\n",
      },
      // The model reviewers never mention AGENTS.md; code-quality has two suggestions of its own.
      replies: { "fake/code-quality": findingsReply([suggestion(1, "Name a"), suggestion(2, "Name b")]) },
      config: { agentsMdTemplateUrl: template.url },
    })
    scenario.repo.git("rm", "-q", "package-lock.json")
    scenario.repo.commit("Switch to bun")

    const run = await scenario.run()
    expect(run.record, run.stderr).not.toBeNull()
    expect(run.stderr).not.toContain("warning")
    const record = run.record!

    const agentsFindings = record.findings.filter((finding) => finding.file === "AGENTS.md")
    expect(
      agentsFindings.map(({ reviewer, category, severity, line, title }) => ({
        reviewer,
        category,
        severity,
        line,
        title,
      })),
    ).toEqual([
      {
        reviewer: "agents-md",
        category: "agents-md",
        severity: "suggestion",
        line: 3,
        title: "Tools named with no command to run them: Vitest and Biome",
      },
      {
        reviewer: "agents-md",
        category: "agents-md",
        severity: "suggestion",
        line: 7,
        title: "Generic filler an agent cannot act on (3 lines)",
      },
    ])
    expect(agentsFindings[1]!.body).toContain('- line 8: "Follow best practices."')
    // Two model suggestions alone would be approved; with the two code findings it is four.
    expect(record.decision).toBe("approved_with_comments")
    expect(record.reasons).toEqual(["4 suggestions only"])
    expect(run.stdout).toContain("Generic filler an agent cannot act on")
    expect(await readFile(join(scenario.outputDir, "review.md"), "utf8")).toContain(
      "Tools named with no command to run them",
    )

    // The agents-md reviewer ran, started from the facts, and was told what code already reported.
    const agentsMd = systemOf(scenario.server, "agents-md")
    expect(agentsMd).toContain("## Project mechanics this change touches (computed by code)")
    expect(agentsMd).toContain(
      "package-manager: lockfile switch (package manager changed): package-lock.json deleted, bun.lock added [AGENTS.md covering it changed here: AGENTS.md]",
    )
    expect(agentsMd).toContain("package-manager: packageManager in package.json set to bun@1.3.14")
    expect(agentsMd).toContain("## AGENTS.md findings already reported by code")
    expect(agentsMd).toContain("- AGENTS.md:7 (suggestion) Generic filler an agent cannot act on (3 lines)")
    // The template (fetched once) and the target branch's AGENTS.md reach every agent, the coordinator included.
    expect(template.requests()).toBe(1)
    for (const model of ["agents-md", "code-quality", "coordinator"]) {
      const system = systemOf(scenario.server, model)
      expect(system, model).toContain("## AGENTS.md template (reference, not this repository's rules)")
      expect(system, model).toContain(templateMarker)
      expect(system, model).toContain(
        '<agents_md source="target branch">\n# AGENTS.md\n\n## Commands\n\n- `npm ci` then `npm test`.',
      )
    }
    const plan = JSON.parse(await readFile(join(scenario.outputDir, "work", "plan.json"), "utf8")) as {
      findings: unknown[]
    }
    expect(plan.findings).toHaveLength(2)
  })

  test("with the template URL down the review still completes, with a warning", async () => {
    const down = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("gone", { status: 503 }) })
    const port = down.port
    const url = `http://127.0.0.1:${port}/AGENTS.md.template?private_token=do-not-print`
    await down.stop(true)
    const scenario = await createScenario({
      files: { "src/app.ts": "export const a = 2\n" },
      config: { agentsMdTemplateUrl: url },
    })
    const run = await scenario.run()
    expect(run.code, run.stderr).toBe(0)
    expect(run.record!.decision).toBe("approved")
    expect(run.stderr).toMatch(
      new RegExp(
        `warning: plugin "agents-md" failed in bootstrap: AGENTS\\.md template http://127\\.0\\.0\\.1:${port}/AGENTS\\.md\\.template not used: `,
      ),
    )
    expect(run.stderr).not.toContain("do-not-print")
    expect(systemOf(scenario.server, "coordinator")).not.toContain("AGENTS.md template")
  })
})
