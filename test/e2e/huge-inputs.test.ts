import { readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Decision } from "@opencode-reviewer/core"
import {
  findingsReply,
  type GitlabFake,
  gitEnv,
  type RecordedRequest,
  type Reply,
  toolCall,
} from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import {
  type CliRun,
  cleanUp,
  descendantsOf,
  gitlabScenario,
  runCli as harnessRunCli,
  judge,
  loginSource,
  type Scenario,
  summaryNotes,
  threads,
} from "./harness"

// "Huge inputs: a 1 MB description, a 12,000-character line, a 5,000-file MR through the GitLab
// provider: no E2BIG, peak memory of the CLI and OpenCode under 1 GB, prompts stay well-formed, and
// the coverage note says exactly what was clipped." The real opencode binary, the scripted model,
// the GitLab fake, and the CLI as a real child process whose process tree is sampled from /proc.

afterEach(cleanUp)

// fast-xml-parser is core's dependency, not the workspace root's.
const { XMLValidator } = createRequire(fileURLToPath(new URL("../../packages/core/package.json", import.meta.url)))(
  "fast-xml-parser",
) as {
  XMLValidator: { validate(xml: string): true | { err: { code: string; msg: string; line: number } } }
}

const gigabyteKb = 1024 * 1024

/** Peak resident memory (VmHWM, kB) per role: the CLI, opencode, the comment server, anything else below the CLI. */
type Peaks = Record<string, number>

/**
 * Samples `/proc/<pid>/status` VmHWM of `root` and every descendant every 100 ms (and whenever
 * `sample()` is called). VmHWM only grows, so a process's last sample before it exits is its peak.
 */
function memorySampler(root: number) {
  const peaks = new Map<number, { role: string; hwmKb: number }>()
  const sample = () => {
    for (const pid of [root, ...descendantsOf(root).map((entry) => entry.pid)]) {
      try {
        const hwmKb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1] ?? 0)
        // The role is read again until it is a known one: a child sampled between fork and exec
        // still shows its parent's command line.
        const known = peaks.get(pid)
        const role =
          known && known.role !== "other"
            ? known.role
            : pid === root
              ? "cli"
              : roleOf(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0"))
        // After exec the peak starts again: what was sampled before it was the parent's copy.
        const before = known && known.role === role ? known.hwmKb : 0
        peaks.set(pid, { role, hwmKb: Math.max(before, hwmKb) })
      } catch {
        // exited between the listing and the read
      }
    }
  }
  const timer = setInterval(sample, 100)
  return {
    sample,
    stop(): Peaks {
      clearInterval(timer)
      const byRole: Peaks = {}
      for (const { role, hwmKb } of peaks.values()) byRole[role] = Math.max(byRole[role] ?? 0, hwmKb)
      return byRole
    },
  }
}

function roleOf(command: string[]): string {
  if (command.some((part) => part.includes("comment-server"))) return "comment-server"
  if (command[0]?.endsWith("/opencode")) return "opencode"
  if (command[0] === "git" || command[0]?.endsWith("/git")) return "git"
  return "other"
}

// The sampler of the run in progress, so the scripted coordinator can sample as it answers.
let running: ReturnType<typeof memorySampler> | null = null

/** The harness's child-process run, with the peak memory of its process tree. */
async function runCli(
  scenario: Scenario,
  env: Record<string, string>,
  repoDir = scenario.repo.dir,
): Promise<CliRun & { peaks: Peaks }> {
  const run = await harnessRunCli(scenario, env, { repoDir, onStart: (pid) => (running = memorySampler(pid)) })
  const peaks = running!.stop()
  running = null
  return { ...run, peaks }
}

/** The harness's coordinator, sampling the process tree on every request (the last one included). */
function sampledJudge(request: RecordedRequest): Reply {
  running?.sample()
  return judge(request)
}

async function workFiles(scenario: Scenario) {
  const dir = join(scenario.outputDir, "work")
  return {
    dir,
    prompt: await readFile(join(dir, "coordinator-prompt.xml"), "utf8"),
    context: await readFile(join(dir, "shared-mr-context.txt"), "utf8"),
    plan: JSON.parse(await readFile(join(dir, "plan.json"), "utf8")) as {
      files: unknown[]
      clipped: { what: string; detail: string }[]
      fileListFile: string | null
    },
  }
}

/** What every huge input must give: a finished review, well-formed prompts, the note everywhere it belongs, memory under 1 GB. */
async function expectSound(
  name: string,
  run: CliRun & { peaks: Peaks },
  scenario: Scenario,
  fake: GitlabFake,
  notes: string[],
) {
  const files = await workFiles(scenario)
  console.log(
    `${name}: exit ${run.code} in ${run.ms} ms; peak RSS MB ${Object.entries(run.peaks)
      .map(([role, kb]) => `${role} ${Math.round(kb / 1024)}`)
      .join(
        ", ",
      )}; coordinator prompt ${Buffer.byteLength(files.prompt)} bytes, shared context ${Buffer.byteLength(files.context)} bytes`,
  )
  expect(run.record, run.stderr).not.toBeNull()
  // Exit 2 at or above the default --fail-on (significant_concerns), else 0.
  const decisions = Decision.options
  expect(run.code, run.stderr).toBe(
    decisions.indexOf(run.record!.decision) >= decisions.indexOf("significant_concerns") ? 2 : 0,
  )
  expect(run.stderr).not.toMatch(/E2BIG|error:|panic|Segmentation|ContextOverflow|context window/i)
  // Well-formed, and what the coordinator's model got on stdin whole.
  expect(XMLValidator.validate(files.prompt)).toBe(true)
  expect(XMLValidator.validate(files.context)).toBe(true)
  const first = scenario.server.requests.find((request) => request.model === "coordinator" && !request.isTitle)!
  expect(first.lastUser).toContain(files.prompt.trim())
  for (const note of notes) {
    expect(run.record!.notes).toContain(note)
    expect(summaryNotes(fake)[0]!.body).toContain(`- Note: ${note}`)
    expect(await readFile(join(scenario.outputDir, "review.md"), "utf8")).toContain(`- Note: ${note}`)
  }
  expect(run.peaks.cli).toBeGreaterThan(0)
  expect(run.peaks.opencode).toBeGreaterThan(0)
  for (const [role, kb] of Object.entries(run.peaks)) expect(kb, role).toBeLessThan(gigabyteKb)
  return files
}

/** Markdown-ish prose of exactly `bytes` bytes, in lines. */
function description(bytes: number): string {
  const line = "This paragraph explains the change in plain words, and it goes on for a while. ".repeat(3)
  return `${line}\n`.repeat(Math.ceil(bytes / (line.length + 1))).slice(0, bytes - 1) + "\n"
}

describe("huge inputs through the GitLab provider", () => {
  test("a 1 MB description: the prompts carry its first 64 KiB and the review says so", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      description: description(1_048_576),
      scenario: { replies: { "fake/coordinator": sampledJudge } },
    })
    const run = await runCli(scenario, env)
    const files = await expectSound("1 MB description", run, scenario, fake, [
      "description: 1,048,576 bytes, the first 65,536 reached the reviewers",
    ])
    expect(run.record!.decision).toBe("significant_concerns")
    expect(threads(fake)).toHaveLength(1)
    expect(files.prompt).toContain(`<mr_description truncated="true" bytes="1048576" shown_bytes="65536">`)
    expect(files.context).toContain(`<mr_description truncated="true" bytes="1048576" shown_bytes="65536">`)
    expect(Buffer.byteLength(files.prompt)).toBeLessThan(70_000)
    expect(files.plan.clipped).toEqual([
      { what: "description", detail: "1,048,576 bytes, the first 65,536 reached the reviewers" },
    ])
  }, 120_000)

  // One review for two huge inputs (each opencode process costs seconds of CPU to start): the whole
  // 1 MB description under a raised cap, and a 12,000-character line. Neither blocks approval. The
  // login change keeps the full tier (six reviewers, each sent the whole description); its security
  // reviewer finds nothing here.
  test("limits.descriptionBytes raises the cap: the whole 1 MB description reaches the coordinator over stdin, and nothing is noted; a 12,000-character line: patches stay byte-exact and the review names the line the reviewers saw in part", async () => {
    const whole = description(1_048_576).slice(0, -19) + "END-OF-DESCRIPTION\n"
    const long = `export const c = "${"x".repeat(12_000 - 19)}"`
    const source = `export const a = 1\nexport const b = 2\n${long}\nexport const d = 4\n`
    let workDir = ""
    let readResult = ""
    // The code-quality reviewer reads the patch with OpenCode's own read tool.
    const reader = (request: RecordedRequest): Reply => {
      if (request.toolResults.length === 0)
        return toolCall("read", { filePath: join(workDir, "diff", "src__big.ts.patch") })
      readResult = request.toolResults[0]!.content
      return findingsReply([])
    }
    const { scenario, fake, env } = await gitlabScenario({
      description: whole,
      scenario: {
        files: { "src/auth/login.ts": loginSource, "src/big.ts": source },
        replies: {
          "fake/coordinator": sampledJudge,
          "fake/code-quality": reader,
          "fake/security": findingsReply([]),
        },
        contextLimit: 2_000_000,
        config: { limits: { heartbeatSeconds: 30, descriptionBytes: 2_097_152 } },
      },
    })
    workDir = join(scenario.outputDir, "work")
    const run = await runCli(scenario, env)
    const note = "src/big.ts line 3: 12,000 characters, reviewers saw the first 1,999"
    const files = await expectSound(
      "1 MB description with the cap raised to 2 MiB, 12,000-character line",
      run,
      scenario,
      fake,
      [note],
    )
    expect(run.record!.decision).toBe("approved")
    expect(run.record!.tier).toBe("full")
    // The description: whole in the coordinator's prompt, not clipped, no note about it.
    expect(files.prompt).toMatch(/<mr_description>\nThis paragraph[\s\S]*END-OF-DESCRIPTION\n+<\/mr_description>/)
    expect(run.record!.notes.filter((note) => note.startsWith("description:"))).toEqual([])
    // The line: the only thing clipped.
    expect(files.plan.clipped).toEqual([
      { what: "src/big.ts line 3", detail: "12,000 characters, reviewers saw the first 1,999" },
    ])
    // What the read tool gave the reviewer: the patch line ("+" and the first 1,999 characters), cut where the note says.
    expect(readResult).toContain(
      `\n9: +${long.slice(0, 1_999)}... (line truncated to 2000 chars)\n10: +export const d = 4\n`,
    )
    // The patch itself is whole: git takes it back off the head.
    const patch = join(workDir, "diff", "src__big.ts.patch")
    expect(readFileSync(patch, "utf8")).toContain(`+${long}\n`)
    const check = Bun.spawnSync(["git", "apply", "--check", "--reverse", patch], {
      cwd: scenario.repo.dir,
      env: gitEnv(scenario.repo.dir),
      stderr: "pipe",
    })
    expect(check.exitCode, check.stderr.toString()).toBe(0)
  }, 120_000)

  // 5,000 small files (one commit) plus the login change the security reviewer flags.
  const manyFiles = () => ({
    "src/auth/login.ts": loginSource,
    ...Object.fromEntries(
      Array.from({ length: 5000 }, (_, index) => [
        `src/gen/f${String(index).padStart(4, "0")}.ts`,
        `export const v${index} = ${index}\n`,
      ]),
    ),
  })

  test("a 5,000-file merge request read with local git: the prompts list 300 files, changed-files.xml all of them", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: { files: manyFiles(), replies: { "fake/coordinator": sampledJudge } },
    })
    const run = await runCli(scenario, env)
    const note =
      "file list: 5,001 changed files, the prompts list 300 (security-sensitive and largest first); every file is in changed-files.xml in the work dir"
    const files = await expectSound("5,000 files, local git", run, scenario, fake, [note])
    expect(fake.state.requests.filter((request) => request.path.endsWith("/diffs"))).toHaveLength(0)
    expect(run.record!.coverage.reviewedFiles).toBe(5001)
    expect(files.plan.files).toHaveLength(5001)
    expect(run.record!.decision).toBe("significant_concerns")
    expect(threads(fake).map((thread) => thread.notes[0]!.position?.new_path)).toEqual(["src/auth/login.ts"])
    expect(files.prompt).toContain(
      `<changed_files tier="full" count="5001" listed="300" full_list="changed-files.xml">`,
    )
    expect(files.prompt.match(/<changed_file /g)).toHaveLength(300)
    expect(files.prompt).toContain(`path="src/auth/login.ts"`)
    expect(Buffer.byteLength(files.prompt)).toBeLessThan(50_000)
    const list = await readFile(join(files.dir, "changed-files.xml"), "utf8")
    expect(XMLValidator.validate(list)).toBe(true)
    expect(list.match(/<changed_file /g)).toHaveLength(5001)
    expect(files.plan.fileListFile).toBe(join(files.dir, "changed-files.xml"))
  }, 120_000)

  test("a 5,000-file merge request through GitLab's /diffs: 1,000 files arrive, and the rest are named as not reviewed", async () => {
    const { scenario, fake, env } = await gitlabScenario({
      scenario: { files: manyFiles(), replies: { "fake/coordinator": sampledJudge } },
    })
    // A shallow CI checkout: the head is there, the base is not, so git cannot diff and the provider asks GitLab.
    const checkout = `${scenario.repo.dir}-shallow`
    Bun.spawnSync(
      ["git", "clone", "-q", "--depth", "1", "--branch", "feature", `file://${scenario.repo.dir}`, checkout],
      { env: gitEnv(scenario.repo.dir) },
    )
    scenario.repo.git("-C", checkout, "rev-parse", "HEAD") // throws if the clone failed
    const run = await runCli(scenario, env, checkout)
    const pages = fake.state.requests.filter((request) => request.path.endsWith("/diffs"))
    console.log(`/diffs: ${pages.length} pages of 100 requested over ${Math.round(pages.at(-1)!.at - pages[0]!.at)} ms`)
    const notes = [
      "file list: 1,000 changed files, the prompts list 300 (security-sensitive and largest first); every file is in changed-files.xml in the work dir",
    ]
    const files = await expectSound("5,000 files, GitLab /diffs", run, scenario, fake, notes)
    expect(pages).toHaveLength(10)
    expect(files.plan.files).toHaveLength(1000)
    expect(run.record!.coverage.reviewedFiles).toBe(1000)
    expect(run.record!.decision).toBe("significant_concerns")
    // How many files GitLab left out is unknown: the review cannot vouch for the change.
    const reason = `GitLab's /diffs stops at its diff limits, listing 1,000 of more than 1,000 changed files, changes_count "1000+"; fetch the merge request's commits, GIT_DEPTH: 0, so git reads the whole diff`
    expect(run.record!.notes).toContain(`not reviewed: every changed file after the first 1,000 (${reason})`)
    expect(run.record!.coverage.complete).toBe(false)
    expect(run.record!.reasons).toContain(
      "the review is incomplete: an unknown number of changed files could not be read, against 1,000 reviewed",
    )
    const summary = summaryNotes(fake)[0]!.body
    expect(summary).toContain("GitLab sent no content for an unknown number of files past its diff limits:")
    expect(summary).toContain(`\`every changed file after the first 1,000\` — ${reason}`)
    expect(threads(fake).map((thread) => thread.notes[0]!.position?.new_path)).toEqual(["src/auth/login.ts"])
  }, 120_000)
})
