import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gitEnv, startGitlabFake } from "@opencode-reviewer/testkit"
import { afterEach, expect, test } from "vitest"
import { cleanUp, cleanups, createScenario, mergeRequestPipeline } from "../e2e/harness"
import { renderComponent } from "./render"

// The component's job as a runner would run it, end to end: the rendered script in bash, the real
// CLI of this workspace on PATH (the image's pre-installed copy), the real opencode binary, the
// scripted model and the GitLab fake. component.test.ts covers the same script with stubs, fast.

afterEach(cleanUp)

const root = fileURLToPath(new URL("../../", import.meta.url))

function bash(
  script: string,
  options: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the scripted model server answers from this process.
    const child = spawn("bash", [script], { cwd: options.cwd, env: options.env })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
}

test("the rendered job reviews a merge request: token from token-variable, --config, exit 2, every artifact in place", async () => {
  const scenario = await createScenario()
  const fake = await startGitlabFake({
    repoDir: scenario.repo.dir,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Add login",
  })
  cleanups.push(() => fake.close())
  const scratch = await mkdtemp(join(tmpdir(), "component-job-"))
  cleanups.push(() => rm(scratch, { recursive: true, force: true }))
  // Only the CLI and Bun on PATH, as in the image.
  const bin = join(scratch, "bin")
  await mkdir(bin)
  await symlink(join(root, "node_modules/.bin/opencode-reviewer"), join(bin, "opencode-reviewer"))
  // The runtime running this test, named `bun` as in the image (its own file may be bun.exe).
  await symlink(process.execPath, join(bin, "bun"))

  const config = renderComponent(readFileSync(join(root, "templates/review/template.yml"), "utf8"), {
    "token-variable": "REVIEW_BOT_TOKEN",
    config: scenario.configFile,
    "output-dir": "ci-out/review",
  })
  const job = config["opencode-review"] as {
    script: string[]
    variables: Record<string, string>
    artifacts: { paths: string[]; reports: { codequality: string } }
  }
  const script = join(scratch, "job.sh")
  await writeFile(script, ["set -eo pipefail", ...job.script].join("\n"))
  const result = await bash(script, {
    cwd: scenario.repo.dir,
    env: {
      ...gitEnv(scenario.repo.dir),
      PATH: `${bin}:/usr/bin:/bin`,
      ...mergeRequestPipeline(fake),
      REVIEW_BOT_TOKEN: fake.tokens.bot,
      ...job.variables,
    },
  })

  expect(result.code, result.stderr).toBe(2)
  const summaries = fake.state.notes.filter((note) => note.body.includes("opencode-reviewer:summary"))
  expect(summaries).toHaveLength(1)
  expect(summaries[0]!.author.username).not.toBe("alice")
  for (const path of job.artifacts.paths)
    expect(await readFile(join(scenario.repo.dir, path), "utf8"), path).toBeTruthy()
  const report = JSON.parse(await readFile(join(scenario.repo.dir, job.artifacts.reports.codequality), "utf8")) as {
    location: { path: string }
  }[]
  expect(report.map((entry) => entry.location.path)).toContain("src/auth/login.ts")
}, 120_000)
