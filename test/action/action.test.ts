import { spawnSync } from "node:child_process"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { applyModelEnv, resolveConfig } from "@opencode-reviewer/core"
import { createTempRepo, gitEnv } from "@opencode-reviewer/testkit"
import { main } from "opencode-reviewer"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { parse } from "yaml"
import { reviewOutputs } from "../../packages/cli/src/finish"
import { explicitTokenVariable } from "../../packages/github/src/context"
import { readComponent } from "../component/render"

// action.yml is checked three ways: as metadata (what GitHub reads), against the CLI (every input
// reaches a flag or variable the CLI really reads), and by running its shell steps in bash the way a
// runner does (`bash --noprofile --norc -eo pipefail`, the step's env evaluated from the inputs),
// with a stub `bunx` on PATH that records what it was given.

interface Input {
  description?: string
  required?: boolean
  default?: string
  deprecationMessage?: string
}
interface Step {
  name?: string
  id?: string
  if?: string
  uses?: string
  run?: string
  shell?: string
  env?: Record<string, string>
  with?: Record<string, string | boolean | number>
}
interface Action {
  name: string
  description: string
  inputs: Record<string, Input>
  outputs: Record<string, { description: string; value: string }>
  runs: { using: string; steps: Step[] }
}

const root = fileURLToPath(new URL("../../", import.meta.url))
const read = (path: string) => readFileSync(join(root, path), "utf8")
const actionText = read("action.yml")
const action = parse(actionText) as Action
const cliVersion = (JSON.parse(read("packages/cli/package.json")) as { version: string }).version
const steps = action.runs.steps
const stepNamed = (id: string) => {
  const step = steps.find((candidate) => candidate.id === id)
  if (!step) throw new Error(`action.yml has no step with id ${id}`)
  return step
}
const reviewStep = stepNamed("review")
const resultsStep = stepNamed("results")
const decisions = ["approved", "approved_with_comments", "minor_issues", "significant_concerns"]

// GitHub's expression syntax, only as far as an env value of this action may use it: the whole value
// is one `${{ inputs.<name> }}` or `${{ github.token }}`. Anything else fails the test, which keeps
// the mapping from inputs to variables plain enough to read.
const expression = /^\$\{\{\s*(inputs\.[a-z][a-z0-9-]*|github\.token)\s*\}\}$/

function evaluate(value: string, inputs: Record<string, string>, jobToken: string): string {
  const match = expression.exec(value)
  if (!match) throw new Error(`not a plain input or github.token expression: ${value}`)
  if (match[1] === "github.token") return jobToken
  const name = match[1]!.slice("inputs.".length)
  const input = action.inputs[name]
  if (!input) throw new Error(`unknown input ${name}`)
  const given = inputs[name] ?? input.default ?? ""
  return expression.test(given) ? evaluate(given, inputs, jobToken) : given
}

describe("action.yml as GitHub reads it", () => {
  test("is a composite action whose inputs are all optional, described strings with a default", () => {
    expect(action.runs.using).toBe("composite")
    expect(action.name).toBe("opencode-reviewer")
    expect(action.description.length).toBeGreaterThan(20)
    expect(Object.keys(action.inputs).length).toBeGreaterThanOrEqual(10)
    for (const [name, input] of Object.entries(action.inputs)) {
      expect(name).toMatch(/^[a-z][a-z0-9-]*$/)
      // GitHub's metadata knows only these keys; `type` is a workflow_call thing, not an action's.
      for (const key of Object.keys(input))
        expect(["description", "required", "default"], `${name}.${key}`).toContain(key)
      expect(input.description, name).toBeTruthy()
      expect(input.required, name).toBe(false)
      expect(typeof input.default, `${name}: a default as a string, as GitHub passes it`).toBe("string")
    }
    for (const step of steps) {
      expect(step.name, JSON.stringify(step)).toBeTruthy()
      if (step.run !== undefined) expect(step.shell, step.name).toBe("bash")
      else expect(step.uses, step.name).toBeTruthy()
    }
  })

  test("offers the GitLab component's inputs with the same defaults, plus the token and SARIF ones", () => {
    const component = readComponent(read("templates/review/template.yml")).inputs
    const gitlabOnly = ["job-name", "stage", "image", "allow-failure", "token-variable", "timeout"]
    const githubOnly = ["github-token", "upload-sarif"]
    const shared = Object.keys(component).filter((name) => !gitlabOnly.includes(name))
    expect(Object.keys(action.inputs).sort()).toEqual([...shared, ...githubOnly].sort())
    for (const name of shared) expect(action.inputs[name]!.default, name).toBe(String(component[name]!.default))
    expect(action.inputs.version!.default).toBe(cliVersion)
    expect(action.inputs["fail-on"]!.default).toBe("significant_concerns")
    expect(action.inputs["output-dir"]!.default).toBe(".opencode-reviewer")
    expect(action.inputs["github-token"]!.default).toMatch(expression)
    expect(evaluate(action.inputs["github-token"]!.default!, {}, "job-token")).toBe("job-token")
    expect(action.inputs["upload-sarif"]!.default).toBe("false")
  })

  test("uses every input, names no undeclared one, and never puts an expression into a script", () => {
    const body = actionText.slice(actionText.indexOf("\noutputs:"))
    const used = new Set([...body.matchAll(/\binputs\.([a-z][a-z0-9-]*)/g)].map((match) => match[1]!))
    expect([...used].sort()).toEqual(Object.keys(action.inputs).sort())
    const scripts = steps.filter((step) => step.run !== undefined)
    expect(scripts.length).toBeGreaterThanOrEqual(2)
    for (const step of scripts) {
      expect(step.run, step.name).not.toContain("${{")
      for (const value of Object.values(step.env ?? {})) expect(value, step.name).toMatch(expression)
    }
  })

  test("pins each action it uses to a major version or a commit, and sets up the Bun of .ci/run", () => {
    const uses = steps.flatMap((step) => (step.uses ? [step.uses] : []))
    expect(uses.map((ref) => ref.split("@")[0]).sort()).toEqual([
      "actions/upload-artifact",
      "github/codeql-action/upload-sarif",
      "oven-sh/setup-bun",
    ])
    for (const ref of uses) expect(ref).toMatch(/@(v\d+|[0-9a-f]{40})$/)
    const bun = steps.find((step) => step.uses?.startsWith("oven-sh/setup-bun@"))!
    expect(String(bun.with?.["bun-version"])).toBe(/^bun_version="([^"]+)"$/m.exec(read(".ci/run"))![1])
    expect(steps.indexOf(bun)).toBe(0)
  })

  test("uploads every output the CLI writes as an artifact, even after a failed review", () => {
    const upload = steps.find((step) => step.uses?.startsWith("actions/upload-artifact@"))!
    expect(upload.if).toBe("always()")
    const paths = String(upload.with!.path).trim().split("\n")
    for (const path of paths) expect(path).toMatch(/^\$\{\{ inputs\.output-dir \}\}\/[^/]+$/)
    expect(paths.map((path) => path.slice(path.lastIndexOf("/") + 1)).sort()).toEqual([...reviewOutputs].sort())
    // The default output dir starts with a dot: upload-artifact 4.4+ leaves hidden files out otherwise.
    expect(upload.with!["include-hidden-files"]).toBe(true)
    expect(upload.with!["if-no-files-found"]).toBe("ignore")
    expect(String(upload.with!.name)).not.toMatch(/[":<>|*?\\/]/)
  })

  test("uploads SARIF only when asked and when the review wrote one; reads outputs after a failure too", () => {
    const sarif = steps.find((step) => step.uses?.startsWith("github/codeql-action/upload-sarif@"))!
    const condition = sarif.if!.split("&&").map((part) => part.trim())
    expect(condition.sort()).toEqual(["always()", "inputs.upload-sarif == 'true'", "steps.results.outputs.sarif != ''"])
    expect(sarif.with!.sarif_file).toBe("${{ steps.results.outputs.sarif }}")
    expect(resultsStep.if).toBe("always()")
    expect(steps.indexOf(resultsStep)).toBe(steps.indexOf(reviewStep) + 1)
    expect(action.outputs).toEqual({
      decision: { description: expect.any(String), value: "${{ steps.results.outputs.decision }}" },
      "review-json": { description: expect.any(String), value: "${{ steps.results.outputs.review-json }}" },
    })
  })
})

// A stand-in for the runner: the step's env evaluated from the inputs, then its script in bash.
describe("the composite steps, run the way a runner runs them", () => {
  let dir: string
  let stubs: string
  const jobToken = "ghs_jobtoken0000000000000000000000000000"

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "action-steps-"))
    stubs = join(dir, "bin")
    mkdirSync(stubs)
    writeFileSync(
      join(stubs, "bunx"),
      [
        "#!/bin/sh",
        `for arg in "$@"; do printf '%s\\0' "$arg"; done > "$STUB_OUT/bunx.argv"`,
        'env -0 > "$STUB_OUT/bunx.env"',
        'exit "${STUB_EXIT:-0}"',
        "",
      ].join("\n"),
    )
    chmodSync(join(stubs, "bunx"), 0o755)
    // The results step reads review.json with bun: the runtime running this test, named bun.
    symlinkSync(process.execPath, join(stubs, "bun"))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  interface Run {
    code: number | null
    stdout: string
    stderr: string
    workspace: string
    home: string
    outputs: string
    bunx: { argv: string[]; env: Record<string, string> } | null
  }

  function runStep(
    step: Step,
    inputs: Record<string, string> = {},
    options: { env?: Record<string, string>; prepare?: (workspace: string) => void } = {},
  ): Run {
    const out = mkdtempSync(join(dir, "run-"))
    const workspace = join(out, "workspace")
    const home = join(out, "home")
    const temp = join(out, "runner-temp")
    for (const path of [workspace, home, temp]) mkdirSync(path)
    writeFileSync(join(home, "canary"), "still here")
    writeFileSync(join(out, "outputs"), "")
    options.prepare?.(workspace)
    const stepEnv = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([name, value]) => [name, evaluate(value, inputs, jobToken)]),
    )
    // As GitHub does: any expression in `run` is replaced by its value in the script's text.
    const text = step.run!.replace(/\$\{\{[^}]*\}\}/g, (block) => evaluate(block, inputs, jobToken))
    const script = join(temp, "step.sh")
    writeFileSync(script, text)
    const env: Record<string, string> = {
      PATH: `${stubs}:/usr/bin:/bin`,
      HOME: home,
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_EVENT_NAME: "pull_request",
      GITHUB_EVENT_PATH: join(temp, "event.json"),
      GITHUB_REPOSITORY: "octo-org/octo-repo",
      GITHUB_API_URL: "https://api.github.com",
      GITHUB_SERVER_URL: "https://github.com",
      GITHUB_GRAPHQL_URL: "https://api.github.com/graphql",
      GITHUB_WORKSPACE: workspace,
      GITHUB_OUTPUT: join(out, "outputs"),
      RUNNER_TEMP: temp,
      STUB_OUT: out,
      ...options.env,
      ...stepEnv,
    }
    const result = spawnSync("bash", ["--noprofile", "--norc", "-eo", "pipefail", script], {
      cwd: workspace,
      env,
      encoding: "utf8",
    })
    const recorded = existsSync(join(out, "bunx.argv"))
      ? {
          argv: readFileSync(join(out, "bunx.argv"), "utf8").split("\0").slice(0, -1),
          env: Object.fromEntries(
            readFileSync(join(out, "bunx.env"), "utf8")
              .split("\0")
              .filter(Boolean)
              .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
          ),
        }
      : null
    return {
      code: result.status,
      stdout: result.stdout,
      stderr: result.stderr,
      workspace,
      home,
      outputs: readFileSync(join(out, "outputs"), "utf8"),
      bunx: recorded,
    }
  }

  const review = (inputs: Record<string, string> = {}, env: Record<string, string> = {}) =>
    runStep(reviewStep, inputs, { env })

  test("every script is valid bash", () => {
    for (const step of steps.filter((candidate) => candidate.run !== undefined)) {
      const check = spawnSync("bash", ["-n"], { input: step.run, encoding: "utf8" })
      expect(check.stderr, step.name).toBe("")
      expect(check.status, step.name).toBe(0)
    }
  })

  test("with the defaults: bunx runs the pinned version with --vcs github and the job's token", () => {
    const result = review()
    expect(result.code, result.stderr).toBe(0)
    expect(result.bunx!.argv).toEqual([
      `opencode-reviewer@${cliVersion}`,
      "review",
      "--vcs",
      "github",
      "--output-dir",
      ".opencode-reviewer",
      "--fail-on",
      "significant_concerns",
    ])
    const env = result.bunx!.env
    expect(env.GITHUB_TOKEN).toBe(jobToken)
    expect(env).not.toHaveProperty(explicitTokenVariable)
    for (const name of Object.keys(env)) expect(name).not.toMatch(/^OPENCODE_REVIEWER_(MODELS_|MAX_COST)/)
    expect(env.GITHUB_EVENT_NAME).toBe("pull_request")
    // The step's own variables (one holds a copy of the token) stay behind.
    expect(Object.keys(env).filter((name) => name.startsWith("ACTION_"))).toEqual([])
    expect(result.stderr).toBe("")
  })

  test("a config path with a space is one --config argument; models and budget arrive as the CLI's variables", () => {
    const result = review({
      config: "ci/my review.json",
      "fail-on": "minor_issues",
      "models-top": "a/b, c/d",
      "models-light": "e/f",
      budget: "2.5",
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.bunx!.argv.slice(1)).toEqual([
      "review",
      "--vcs",
      "github",
      "--output-dir",
      ".opencode-reviewer",
      "--fail-on",
      "minor_issues",
      "--config",
      "ci/my review.json",
    ])
    const config = applyModelEnv(resolveConfig({}), result.bunx!.env)
    expect(config.models.top).toEqual(["a/b", "c/d"])
    expect(config.models.light).toEqual(["e/f"])
    expect(config.models.standard).toEqual(resolveConfig({}).models.standard)
    expect(config.maxCostUsd).toBe(2.5)
  })

  test("hostile input values reach the CLI as single arguments and variables, never as shell", () => {
    const hostile = {
      config: '"; rm -rf ~; "',
      "fail-on": "$(touch pwned-fail-on)",
      "output-dir": "out`touch pwned-backtick`; touch pwned-semicolon",
      "models-top": "a/b'; touch pwned-models; echo '",
      budget: "${IFS}1 && touch pwned-budget",
    }
    const result = review(hostile)
    expect(result.code, result.stderr).toBe(0)
    expect(result.bunx!.argv.slice(1)).toEqual([
      "review",
      "--vcs",
      "github",
      "--output-dir",
      hostile["output-dir"],
      "--fail-on",
      hostile["fail-on"],
      "--config",
      hostile.config,
    ])
    expect(result.bunx!.env.OPENCODE_REVIEWER_MODELS_TOP).toBe(hostile["models-top"])
    expect(result.bunx!.env.OPENCODE_REVIEWER_MAX_COST_USD).toBe(hostile.budget)
    expect(readFileSync(join(result.home, "canary"), "utf8")).toBe("still here")
    const created = spawnSync("find", [result.workspace, result.home, "-name", "pwned*"], { encoding: "utf8" })
    expect(created.stdout).toBe("")
    // And the CLI refuses what is not a valid value, naming it.
    expect(() => applyModelEnv(resolveConfig({}), result.bunx!.env)).toThrow("OPENCODE_REVIEWER_")
  })

  test("another token than the job's is handed over as OPENCODE_REVIEWER_GITHUB_TOKEN, which the CLI prefers", () => {
    const app = review({ "github-token": "ghs_apptoken" })
    expect(app.bunx!.env[explicitTokenVariable]).toBe("ghs_apptoken")
    expect(app.bunx!.env.GITHUB_TOKEN).toBe(jobToken)
    // The job's own token passed explicitly is still the job's token.
    expect(review({ "github-token": jobToken }).bunx!.env).not.toHaveProperty(explicitTokenVariable)
    // An app token the workflow set for the whole job is left alone.
    const jobLevel = review({}, { [explicitTokenVariable]: "ghs_fromjobenv" })
    expect(jobLevel.bunx!.env[explicitTokenVariable]).toBe("ghs_fromjobenv")
  })

  test("an empty model or budget input keeps what the workflow set for the job; a given one wins", () => {
    const job = { OPENCODE_REVIEWER_MODELS_STANDARD: "job/standard", OPENCODE_REVIEWER_MAX_COST_USD: "7" }
    const kept = review({}, job).bunx!.env
    expect(kept.OPENCODE_REVIEWER_MODELS_STANDARD).toBe("job/standard")
    expect(kept.OPENCODE_REVIEWER_MAX_COST_USD).toBe("7")
    const replaced = review({ "models-standard": "input/standard", budget: "1.5" }, job).bunx!.env
    expect(replaced.OPENCODE_REVIEWER_MODELS_STANDARD).toBe("input/standard")
    expect(replaced.OPENCODE_REVIEWER_MAX_COST_USD).toBe("1.5")
  })

  test.each([0, 1, 2, 3])("the CLI's exit code %i is the step's exit code", (code) => {
    const result = review({}, { STUB_EXIT: String(code) })
    expect(result.bunx).not.toBeNull()
    expect(result.code).toBe(code)
  })

  test.each([
    ["a dist-tag for version", { version: "latest" }, "the version input must be an exact npm version"],
    ["a command in version", { version: "1.0.0 && curl evil" }, "the version input must be an exact npm version"],
    ["a tarball URL for version", { version: "https://evil.example/x.tgz" }, "the version input must be"],
    ["a path spec for version", { version: "file:../evil" }, "the version input must be"],
    ["an empty output-dir", { "output-dir": "" }, "the output-dir input must not be empty"],
    ["a yes for upload-sarif", { "upload-sarif": "yes" }, "the upload-sarif input must be true or false"],
    ["an empty github-token", { "github-token": "" }, "the github-token input is empty"],
  ])("refuses %s before anything is fetched", (_, inputs, message) => {
    const result = review(inputs)
    expect(result.code).toBe(1)
    expect(result.bunx).toBeNull()
    expect(result.stdout).toContain(`::error title=opencode-reviewer::${message}`)
  })

  test("every input reaches a flag or a variable the CLI reads, except upload-sarif, which only gates a step", () => {
    const probes: Record<string, string> = {
      version: "9.8.7",
      config: "probe-config.json",
      "fail-on": "minor_issues",
      "models-top": "probe/top-model",
      "models-standard": "probe/standard-model",
      "models-light": "probe/light-model",
      budget: "4.25",
      "output-dir": "probe-out",
      "github-token": "probe-token",
      "upload-sarif": "true",
    }
    expect(Object.keys(probes).sort()).toEqual(Object.keys(action.inputs).sort())
    const flags = new Set(
      [
        .../const commonOptions = \{([\s\S]*?)\n\} as const/
          .exec(read("packages/cli/src/args.ts"))![1]!
          .matchAll(/^\s*"?([a-z][a-z-]*)"?: \{/gm),
      ].map((match) => match[1]!),
    )
    const baseline = resolveConfig({})
    const defaults = review().bunx!.env
    const reached: Record<string, string> = {}
    for (const [name, value] of Object.entries(probes)) {
      const { bunx } = review({ [name]: value })
      const argv = bunx!.argv
      const at = argv.indexOf(value)
      // A variable that holds the probe and did not already hold it with the defaults (CI=true does).
      const variable = Object.entries(bunx!.env).find(
        ([key, content]) => content === value && defaults[key] !== value,
      )?.[0]
      if (argv[0] === `opencode-reviewer@${value}`) reached[name] = "package version"
      else if (at > 0 && argv[at - 1]!.startsWith("--")) {
        const flag = argv[at - 1]!.slice(2)
        expect(flags, `--${flag}`).toContain(flag)
        reached[name] = `--${flag}`
      } else if (variable === explicitTokenVariable) reached[name] = variable
      else if (variable !== undefined) {
        // The variable is one the CLI applies: it changes the resolved configuration.
        expect(applyModelEnv(baseline, { [variable]: value }), variable).not.toEqual(baseline)
        reached[name] = variable
      }
    }
    expect(Object.keys(reached).sort()).toEqual(
      Object.keys(probes)
        .filter((name) => name !== "upload-sarif")
        .sort(),
    )
    expect(new Set(Object.values(reached)).size).toBe(Object.keys(reached).length)
    // `--vcs github` is the provider being written (issue 12); the flag itself is the CLI's.
    expect(reviewStep.run).toContain("--vcs github")
    expect(flags).toContain("vcs")
  })

  test("the budget a workflow gives reaches the CLI's plan as its spend cap", async () => {
    const repo = await createTempRepo("action-budget-")
    try {
      await repo.write({ "src/auth/session.ts": "export const ttl = 60\n" })
      const base = repo.commit("base")
      await repo.write({ "src/auth/session.ts": "export const ttl = 3600\nexport const secure = true\n" })
      const head = repo.commit("change")
      const configFile = join(repo.dir, "..", `action-budget-${Date.now()}.json`)
      writeFileSync(
        configFile,
        JSON.stringify({
          models: { top: ["p/top"], standard: ["p/std"], light: ["p/light"] },
          prices: {
            "p/top": { input: 15, output: 75 },
            "p/std": { input: 3, output: 15 },
            "p/light": { input: 0.5, output: 2 },
          },
        }),
      )
      const plan = async (budget: string) => {
        const env = review({ budget }).bunx!.env
        let stdout = ""
        let stderr = ""
        const code = await main({
          argv: ["plan", "--json", "--base", base, "--head", head, "--config", configFile],
          env: { ...gitEnv(repo.dir), OPENCODE_REVIEWER_MAX_COST_USD: env.OPENCODE_REVIEWER_MAX_COST_USD },
          cwd: repo.dir,
          stdout: (text) => void (stdout += text),
          stderr: (text) => void (stderr += text),
          stdin: async () => new Uint8Array(),
          execPath: process.execPath,
        })
        return {
          code,
          stderr,
          plan: code === 0 ? (JSON.parse(stdout) as { reasons: string[]; agents: unknown[] }) : null,
        }
      }
      const uncapped = await plan("")
      expect(uncapped.code, uncapped.stderr).toBe(0)
      expect(uncapped.plan!.reasons.join("\n")).not.toContain("spend cap")
      const capped = await plan("0.0001")
      expect(capped.code, capped.stderr).toBe(0)
      expect(capped.plan!.reasons.at(-1)).toMatch(/^spend cap \$0\.0001: /)
      expect(capped.plan!.agents.length).toBeLessThan(uncapped.plan!.agents.length)
      const refused = await plan("zero")
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain("$OPENCODE_REVIEWER_MAX_COST_USD is invalid")
      rmSync(configFile, { force: true })
    } finally {
      await repo.remove()
    }
  })

  describe("reading the decision back", () => {
    const withOutputs =
      (files: Record<string, string>, dir = ".opencode-reviewer") =>
      (workspace: string) => {
        mkdirSync(join(workspace, dir), { recursive: true })
        for (const [name, content] of Object.entries(files)) writeFileSync(join(workspace, dir, name), content)
      }
    const outputsOf = (text: string) =>
      Object.fromEntries(
        text
          .split("\n")
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      )

    test.each(decisions)(
      "a review.json with decision %s gives the decision, its path and the SARIF file",
      (decision) => {
        const record = JSON.stringify({ decision, tier: "full", findings: [{ title: '"decision": "approved"' }] })
        const result = runStep(
          resultsStep,
          {},
          { prepare: withOutputs({ "review.json": record, "review.sarif": "{}" }) },
        )
        expect(result.code, result.stderr).toBe(0)
        const dir = join(result.workspace, ".opencode-reviewer")
        expect(outputsOf(result.outputs)).toEqual({
          decision,
          "review-json": join(dir, "review.json"),
          sarif: join(dir, "review.sarif"),
        })
      },
    )

    test("follows the output-dir input, relative or absolute", () => {
      const record = JSON.stringify({ decision: "minor_issues" })
      const relative = runStep(
        resultsStep,
        { "output-dir": "build/review" },
        {
          prepare: withOutputs({ "review.json": record }, "build/review"),
        },
      )
      expect(outputsOf(relative.outputs)).toEqual({
        decision: "minor_issues",
        "review-json": join(relative.workspace, "build/review/review.json"),
      })
      const absoluteDir = mkdtempSync(join(dir, "absolute-"))
      writeFileSync(join(absoluteDir, "review.json"), record)
      const absolute = runStep(resultsStep, { "output-dir": absoluteDir })
      expect(outputsOf(absolute.outputs)["review-json"]).toBe(join(absoluteDir, "review.json"))
    })

    test.each([
      ["no review.json (no review could be done)", { "review-error.json": "{}" }],
      ["a review.json that is not JSON", { "review.json": "{ not json" }],
      ["a decision outside the four", { "review.json": JSON.stringify({ decision: "approved\nsarif=/etc/passwd" }) }],
      ["no decision", { "review.json": JSON.stringify({ tier: "full" }) }],
    ])("%s gives no outputs and still succeeds", (_, files) => {
      const result = runStep(resultsStep, {}, { prepare: withOutputs(files) })
      expect(result.code, result.stderr).toBe(0)
      expect(result.outputs).toBe("")
    })

    test("an output dir with a line break writes no outputs at all", () => {
      const result = runStep(resultsStep, { "output-dir": "a\nsarif=/etc/passwd" })
      expect(result.code).toBe(0)
      expect(result.outputs).toBe("")
    })

    test("never loads the checkout's bunfig.toml preload", () => {
      const result = runStep(
        resultsStep,
        {},
        {
          prepare: (workspace) => {
            withOutputs({ "review.json": JSON.stringify({ decision: "approved" }) })(workspace)
            writeFileSync(join(workspace, "preload.ts"), 'require("node:fs").writeFileSync("PRELOADED", "")\n')
            writeFileSync(join(workspace, "bunfig.toml"), 'preload = ["./preload.ts"]\n')
          },
        },
      )
      expect(outputsOf(result.outputs).decision).toBe("approved")
      expect(existsSync(join(result.workspace, "PRELOADED"))).toBe(false)
      // The control: bun started in the checkout does run it.
      spawnSync(join(stubs, "bun"), ["-e", "0"], { cwd: result.workspace })
      expect(existsSync(join(result.workspace, "PRELOADED"))).toBe(true)
    })
  })
})

// GitHub's expression language, as far as the documented workflows use it in `if:`: paths into the
// event, string literals, ! == != && || and parentheses, contains() and startsWith() (both ignore
// case, as GitHub's do). Enough to check a filter against the comments it must let through.
function evaluateIf(source: string, context: Record<string, unknown>): boolean {
  const tokens = [...source.matchAll(/\s*('(?:[^']|'')*'|&&|\|\||==|!=|!|\(|\)|,|[A-Za-z_][\w.-]*)/gy)].map(
    (match) => match[1]!,
  )
  expect(tokens.join("").replace(/\s/g, ""), "every character of the expression was read").toBe(
    source.replace(/\s/g, ""),
  )
  let at = 0
  const peek = () => tokens[at]
  const take = (expected?: string) => {
    const token = tokens[at++]
    if (expected !== undefined && token !== expected) throw new Error(`expected ${expected}, got ${token}`)
    return token!
  }
  const truthy = (value: unknown) =>
    value !== undefined && value !== null && value !== false && value !== "" && value !== 0
  const text = (value: unknown) => (typeof value === "string" ? value.toLowerCase() : String(value ?? "").toLowerCase())
  const primary = (): unknown => {
    const token = take()
    if (token === "(") {
      const value = or()
      take(")")
      return value
    }
    if (token === "!") return !truthy(primary())
    if (token.startsWith("'")) return token.slice(1, -1).replace(/''/g, "'")
    if (peek() === "(") {
      take("(")
      const first = or()
      take(",")
      const second = or()
      take(")")
      if (token === "contains") return text(first).includes(text(second))
      if (token === "startsWith") return text(first).startsWith(text(second))
      throw new Error(`function ${token} is not modelled`)
    }
    return token
      .split(".")
      .reduce<unknown>((value, key) => (value as Record<string, unknown> | undefined)?.[key], context)
  }
  const comparison = (): unknown => {
    const left = primary()
    if (peek() === "==" || peek() === "!=") {
      const operator = take()
      const equal = text(left) === text(primary())
      return operator === "==" ? equal : !equal
    }
    return left
  }
  const and = (): unknown => {
    let value = comparison()
    while (peek() === "&&") {
      take()
      const right = comparison()
      value = truthy(value) ? right : value
    }
    return value
  }
  const or = (): unknown => {
    let value = and()
    while (peek() === "||") {
      take()
      const right = and()
      value = truthy(value) ? value : right
    }
    return value
  }
  const result = or()
  expect(at, "the whole expression was evaluated").toBe(tokens.length)
  return truthy(result)
}

interface Workflow {
  on: Record<string, unknown>
  permissions: Record<string, string>
  concurrency?: unknown
  jobs: Record<
    string,
    {
      if?: string
      concurrency?: { group: string; "cancel-in-progress": boolean }
      "timeout-minutes"?: number
      steps: (Step & { id?: string })[]
    }
  >
}

describe("the documented workflows", () => {
  const guide = read("docs/github-actions.md")
  const readme = read("README.md")
  const githubSection = readme.split(/^### On GitHub$/m)[1]!.split(/^### /m)[0]!
  const yamlBlocks = (markdown: string) => [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!)
  const workflows = [...yamlBlocks(guide), ...yamlBlocks(githubSection)]
    .map((block) => parse(block) as Workflow)
    .filter((document) => document && typeof document === "object" && "jobs" in document)
  const ours = /^opencode-reviewer\/opencode-reviewer@v\d+$/

  test("the guide's inputs and outputs tables are action.yml's, row for row", () => {
    const rows = (heading: string) =>
      guide
        .split(new RegExp(`^## ${heading}$`, "m"))[1]!
        .split(/^## /m)[0]!
        .split("\n")
        .filter((line) => line.startsWith("| `"))
        .map((line) => line.slice(2, -2).split(" | "))
    expect(rows("Inputs")).toEqual(
      Object.entries(action.inputs).map(([name, input]) => [
        `\`${name}\``,
        input.default === "" ? '`""`' : `\`${input.default}\``,
        input.description,
      ]),
    )
    expect(rows("Outputs")).toEqual(
      Object.entries(action.outputs).map(([name, output]) => [`\`${name}\``, output.description]),
    )
  })

  test("the README has the copy-paste workflow and links the guide", () => {
    expect(yamlBlocks(githubSection)).toHaveLength(1)
    expect(githubSection).toContain("(docs/github-actions.md)")
    expect(githubSection).toContain("`.github/workflows/review.yml`")
    // The README's workflow is the guide's quick start.
    expect(yamlBlocks(guide)[0]).toBe(yamlBlocks(githubSection)[0])
  })

  test("each workflow uses the action with known inputs, the least permissions and a per-PR group on the job", () => {
    expect(workflows.length).toBeGreaterThanOrEqual(3)
    for (const workflow of workflows) {
      expect(workflow.permissions).toEqual({ contents: "read", "pull-requests": "write" })
      expect(workflow.concurrency, "concurrency belongs on the job").toBeUndefined()
      for (const job of Object.values(workflow.jobs)) {
        const step = job.steps.find((candidate) => candidate.uses !== undefined && ours.test(candidate.uses))!
        expect(step).toBeDefined()
        for (const name of Object.keys(step.with ?? {})) expect(Object.keys(action.inputs)).toContain(name)
        for (const value of Object.values(step.env ?? {})) expect(value).toMatch(/^\$\{\{ secrets\.[A-Z_]+ \}\}$/)
        expect(job.concurrency?.["cancel-in-progress"]).toBe(true)
        expect(job.concurrency?.group).toBe(
          "opencode-reviewer-${{ github.event.pull_request.number || github.event.issue.number }}",
        )
        expect(job["timeout-minutes"]).toBeGreaterThanOrEqual(45)
        const checkout = job.steps.find((candidate) => candidate.uses?.startsWith("actions/checkout@"))!
        expect(checkout.with).toEqual({ "persist-credentials": false })
      }
    }
  })

  test("privileged workflows run nothing but the checkout of trusted code and the action", () => {
    const privileged = workflows.filter(
      (workflow) => "pull_request_target" in workflow.on || "issue_comment" in workflow.on,
    )
    expect(privileged).toHaveLength(2)
    for (const workflow of privileged) {
      for (const job of Object.values(workflow.jobs)) {
        expect(job.steps.map((step) => step.uses?.split("@")[0])).toEqual([
          "actions/checkout",
          "opencode-reviewer/opencode-reviewer",
        ])
        expect(job.steps.every((step) => step.run === undefined)).toBe(true)
      }
    }
  })

  test("the comment workflow's filter lets through every comment the CLI answers, and no plain issue", () => {
    const workflow = workflows.find((candidate) => "issue_comment" in candidate.on)!
    expect(Object.keys(workflow.on).sort()).toEqual(["issue_comment", "pull_request_review_comment"])
    const filter = Object.values(workflow.jobs)[0]!.if!
    const onPullRequest = (body: string, extra: Record<string, unknown> = {}) => ({
      github: {
        event_name: "issue_comment",
        event: {
          issue: { number: 7, pull_request: { url: "https://api.github.com/…/pulls/7" } },
          comment: { body, ...extra },
        },
      },
    })
    const onDiff = (body: string, extra: Record<string, unknown> = {}) => ({
      github: {
        event_name: "pull_request_review_comment",
        event: { pull_request: { number: 7 }, comment: { body, ...extra } },
      },
    })
    // The forms docs/github-actions.md says the CLI answers.
    for (const body of ["/review", "/review full", "/REVIEW\nplease", "@opencode-reviewer is this safe?"]) {
      expect(evaluateIf(filter, onPullRequest(body)), body).toBe(true)
      expect(evaluateIf(filter, onDiff(body)), body).toBe(true)
    }
    expect(evaluateIf(filter, onDiff("does this still leak on retry?", { in_reply_to_id: 123 }))).toBe(true)
    // Ordinary conversation does not start a run (and cannot cancel a review in progress).
    for (const body of ["LGTM", "Thanks, fixed in the next push.", "why?"]) {
      expect(evaluateIf(filter, onPullRequest(body)), body).toBe(false)
      expect(evaluateIf(filter, onDiff(body)), body).toBe(false)
    }
    const onIssue = {
      github: { event_name: "issue_comment", event: { issue: { number: 8 }, comment: { body: "/review" } } },
    }
    expect(evaluateIf(filter, onIssue)).toBe(false)
  })

  test("the quick start skips drafts and the fork-safe workflow triggers on pull_request_target", () => {
    const [quickStart] = workflows
    expect(Object.keys(quickStart!.on)).toEqual(["pull_request"])
    const job = Object.values(quickStart!.jobs)[0]!
    const event = (draft: boolean) => ({ github: { event: { pull_request: { number: 3, draft } } } })
    const condition = job.if!.replace(/^\$\{\{\s*|\s*\}\}$/g, "")
    expect(evaluateIf(condition, event(false))).toBe(true)
    expect(evaluateIf(condition, event(true))).toBe(false)
    expect(workflows.some((workflow) => Object.keys(workflow.on).join() === "pull_request_target")).toBe(true)
  })
})
