import { spawnSync } from "node:child_process"
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { applyModelEnv, resolveConfig } from "@opencode-reviewer/core"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { parse } from "yaml"
import {
  ComponentError,
  type InputValue,
  mergeIncluded,
  readComponent,
  renderComponent,
  resolveInputs,
  yamlOptions,
} from "./render"

const root = fileURLToPath(new URL("../../", import.meta.url))
const read = (path: string) => readFileSync(join(root, path), "utf8")
const templateText = read("templates/review/template.yml")
const readme = read("templates/README.md")
const cliVersion = (JSON.parse(read("packages/cli/package.json")) as { version: string }).version
const modes = ["tree", "text"] as const

type Job = Record<string, unknown> & { script: string[]; variables: Record<string, string> }

function renderJob(
  inputs: Record<string, InputValue> = {},
  mode: (typeof modes)[number] = "tree",
): { name: string; job: Job } {
  const config = renderComponent(templateText, inputs, mode)
  const names = Object.keys(config)
  expect(names).toHaveLength(1)
  return { name: names[0]!, job: config[names[0]!] as Job }
}

const defaultScript = [
  [
    'token="$(printenv "$OPENCODE_REVIEWER_TOKEN_VARIABLE" || true)"',
    'if [ -n "$token" ] && [ -f "$token" ]; then token="$(cat "$token")"; fi',
    'if [ -z "$token" ]; then',
    '  echo "opencode-reviewer: CI/CD variable $OPENCODE_REVIEWER_TOKEN_VARIABLE is empty or not passed to this pipeline (a protected variable only reaches pipelines of protected branches)" >&2',
    "fi",
    'export GITLAB_TOKEN="$token"',
    "unset token",
    "",
  ].join("\n"),
  [
    'if [ "$(opencode-reviewer --version 2>/dev/null)" = "0.1.0" ]; then',
    "  set -- opencode-reviewer",
    "else",
    '  set -- bunx "opencode-reviewer@0.1.0"',
    "fi",
    '"$@" review --vcs gitlab --output-dir ".opencode-reviewer" --fail-on "significant_concerns" ${OPENCODE_REVIEWER_JOB_CONFIG:+--config "$OPENCODE_REVIEWER_JOB_CONFIG"}',
    "",
  ].join("\n"),
]

describe.each(modes)("the review component rendered by GitLab's %s interpolation", (mode) => {
  test("with no inputs is exactly the documented merge request job", () => {
    const { name, job } = renderJob({}, mode)
    expect(name).toBe("opencode-review")
    expect(job).toEqual({
      stage: "test",
      image: `registry.gitlab.com/opencode-reviewer/opencode-reviewer:${cliVersion}`,
      rules: [
        { if: '$CI_PIPELINE_SOURCE == "merge_request_event"' },
        { if: '$CI_PIPELINE_SOURCE == "trigger" && $TRIGGER_PAYLOAD' },
      ],
      interruptible: true,
      timeout: "45 minutes",
      allow_failure: false,
      variables: {
        GIT_DEPTH: "0",
        FF_GIT_URLS_WITHOUT_TOKENS: "true",
        OPENCODE_REVIEWER_TOKEN_VARIABLE: "GITLAB_TOKEN",
        OPENCODE_REVIEWER_JOB_CONFIG: "",
        OPENCODE_REVIEWER_MODELS_TOP: "",
        OPENCODE_REVIEWER_MODELS_STANDARD: "",
        OPENCODE_REVIEWER_MODELS_LIGHT: "",
        OPENCODE_REVIEWER_MAX_COST_USD: "",
      },
      script: defaultScript,
      artifacts: {
        when: "always",
        expire_in: "30 days",
        paths: [
          ".opencode-reviewer/review.json",
          ".opencode-reviewer/review.md",
          ".opencode-reviewer/review.sarif",
          ".opencode-reviewer/gl-code-quality-report.json",
        ],
        reports: { codequality: ".opencode-reviewer/gl-code-quality-report.json" },
      },
    })
  })

  test("custom job name, stage, threshold, models and allow-failure land where the job reads them", () => {
    const { name, job } = renderJob(
      {
        "job-name": "ai-review",
        stage: "review",
        "fail-on": "minor_issues",
        "models-top": "anthropic/claude-opus-4-7, anthropic/claude-opus-4-6",
        "models-standard": "openai/gpt-5.4",
        "models-light": "moonshotai/kimi-k2.5",
        budget: "2.50",
        "allow-failure": true,
        version: "1.4.0-rc.1",
        image: "oven/bun:1.3.14",
        timeout: "1h 30m",
      },
      mode,
    )
    expect(name).toBe("ai-review")
    expect(job.stage).toBe("review")
    expect(job.image).toBe("oven/bun:1.3.14")
    expect(job.timeout).toBe("1h 30m")
    expect(job.allow_failure).toBe(true)
    expect(job.rules).toEqual([
      { if: '$CI_PIPELINE_SOURCE == "merge_request_event"' },
      { if: '$CI_PIPELINE_SOURCE == "trigger" && $TRIGGER_PAYLOAD' },
    ])
    expect(job.variables).toMatchObject({
      OPENCODE_REVIEWER_MODELS_TOP: "anthropic/claude-opus-4-7, anthropic/claude-opus-4-6",
      OPENCODE_REVIEWER_MODELS_STANDARD: "openai/gpt-5.4",
      OPENCODE_REVIEWER_MODELS_LIGHT: "moonshotai/kimi-k2.5",
      OPENCODE_REVIEWER_MAX_COST_USD: "2.50",
    })
    expect(job.script[1]).toContain('= "1.4.0-rc.1" ]; then')
    expect(job.script[1]).toContain('set -- bunx "opencode-reviewer@1.4.0-rc.1"')
    expect(job.script[1]).toContain('--fail-on "minor_issues"')
  })

  test("a config path and an output dir reach the variables, the artifacts and the Code Quality report", () => {
    const { job } = renderJob(
      { config: "ci/my review.json", "output-dir": "build/.review", "token-variable": "REVIEW_BOT_TOKEN" },
      mode,
    )
    expect(job.variables.OPENCODE_REVIEWER_JOB_CONFIG).toBe("ci/my review.json")
    expect(job.variables.OPENCODE_REVIEWER_TOKEN_VARIABLE).toBe("REVIEW_BOT_TOKEN")
    expect(job.script[1]).toContain('--output-dir "build/.review"')
    expect(job.artifacts).toEqual({
      when: "always",
      expire_in: "30 days",
      paths: [
        "build/.review/review.json",
        "build/.review/review.md",
        "build/.review/review.sarif",
        "build/.review/gl-code-quality-report.json",
      ],
      reports: { codequality: "build/.review/gl-code-quality-report.json" },
    })
  })
})

describe("input validation, as GitLab does it at pipeline creation", () => {
  const rejected: [string, Record<string, InputValue>, RegExp][] = [
    [
      "a fail-on outside the options",
      { "fail-on": "critical" },
      /`fail-on` input: `critical` cannot be used because it is not in the list of allowed options/,
    ],
    ["an unknown input", { fail_on: "minor_issues" }, /unknown input arguments: fail_on/],
    ["a string for a boolean", { "allow-failure": "true" }, /`allow-failure` input: provided value is not a boolean/],
    ["a number for a string", { version: 1 }, /`version` input: provided value is not a string/],
    [
      "a version that is not semver",
      { version: "latest" },
      /`version` input: provided value does not match required RegEx pattern/,
    ],
    ["an absolute output dir", { "output-dir": "/tmp/review" }, /`output-dir` input: provided value does not match/],
    [
      "an output dir that climbs out",
      { "output-dir": "out/../../etc" },
      /`output-dir` input: provided value does not match/,
    ],
    [
      "a token variable that is not a name",
      { "token-variable": "MY-TOKEN" },
      /`token-variable` input: provided value does not match/,
    ],
    [
      "a model chain with shell characters",
      { "models-top": 'a/b"; rm -rf /' },
      /`models-top` input: provided value does not match/,
    ],
    ["a job name with spaces", { "job-name": "ai review" }, /`job-name` input: provided value does not match/],
    ["a budget of zero", { budget: "0" }, /`budget` input: provided value does not match/],
    ["a budget with a currency sign", { budget: "$3" }, /`budget` input: provided value does not match/],
    ["a budget as a YAML number", { budget: 2.5 }, /`budget` input: provided value is not a string/],
  ]
  test.each(rejected)("rejects %s", (_, inputs, message) => {
    expect(() => renderComponent(templateText, inputs)).toThrow(ComponentError)
    expect(() => renderComponent(templateText, inputs)).toThrow(message)
  })

  test("accepts each documented fail-on option and the empty model chains", () => {
    for (const option of ["approved", "approved_with_comments", "minor_issues", "significant_concerns"]) {
      expect(renderJob({ "fail-on": option }).job.script[1]).toContain(`--fail-on "${option}"`)
    }
    expect(() =>
      renderJob({ "models-top": "", "models-light": "openrouter/anthropic/claude-sonnet-4.5" }),
    ).not.toThrow()
  })

  test("the model of GitLab's rules behaves as GitLab's own examples say", () => {
    const component = [
      "spec:",
      "  inputs:",
      "    flag: { type: boolean, default: true }",
      "    count: { type: number, default: 2, options: [1, 2, 3] }",
      "    name:",
      "    tags: { type: array, default: [a, b] }",
      "---",
      "job:",
      "  allow_failure: $[[ inputs.flag ]]",
      "  parallel: $[[ inputs.count ]]",
      "  tags: $[[ inputs.tags ]]",
      '  script: "echo $[[ inputs.name ]] x$[[ inputs.count ]] $[[ inputs.flag ]]"',
      "",
    ].join("\n")
    for (const mode of modes) {
      expect(renderComponent(component, { name: "n" }, mode)).toEqual({
        job: { allow_failure: true, parallel: 2, tags: ["a", "b"], script: "echo n x2 true" },
      })
    }
    expect(() => renderComponent(component, {})).toThrow("`name` input: required value has not been provided")
    expect(() => renderComponent(component, { name: "n", count: 4 })).toThrow("not in the list of allowed options")
    expect(() =>
      renderComponent(
        component.replace("name:", () => "name: { type: boolean, regex: '^x$', default: true }"),
        {},
      ),
    ).toThrow("RegEx validation can only be used with string inputs")
    expect(() => renderComponent(component.replace("inputs.name", "inputs.nope"), { name: "n" })).toThrow(
      "unknown interpolation key",
    )
  })

  test("a model chain the component accepts is one the CLI accepts, and the other way round", () => {
    const chains = [
      "anthropic/claude-opus-4-7",
      "a/b,c/d",
      " openai/gpt-5.4 , x/y:free",
      "openrouter/anthropic/claude-sonnet-4.5",
      "claude-sonnet",
      "a/b,,c/d",
      "a/b, c",
    ]
    for (const chain of chains) {
      const component = (() => {
        try {
          renderComponent(templateText, { "models-standard": chain })
          return true
        } catch {
          return false
        }
      })()
      const cli = (() => {
        try {
          applyModelEnv(resolveConfig({}), { OPENCODE_REVIEWER_MODELS_STANDARD: chain })
          return true
        } catch {
          return false
        }
      })()
      // The component may be stricter (no spaces inside a name, no empty entries), never looser.
      if (component) expect(cli, chain).toBe(true)
      if (!cli) expect(component, chain).toBe(false)
    }
    expect(() => renderComponent(templateText, { "models-top": "claude-sonnet" })).toThrow(
      "`models-top` input: provided value does not match",
    )
  })

  test("a budget the component accepts is one the CLI accepts, and the other way round", () => {
    const budgets = [
      "",
      "2.5",
      "3",
      "0.75",
      ".5",
      "10.",
      "0.01",
      "007",
      "0",
      "0.0",
      ".",
      "-1",
      "1e3",
      "2,5",
      "$3",
      " 2",
    ]
    const accepted = (run: () => unknown) => {
      try {
        run()
        return true
      } catch {
        return false
      }
    }
    const verdicts = budgets.map((budget) => ({
      budget,
      component: accepted(() => renderComponent(templateText, { budget })),
      cli: accepted(() => applyModelEnv(resolveConfig({}), { OPENCODE_REVIEWER_MAX_COST_USD: budget })),
    }))
    // The CLI trims and so takes " 2"; the component, stricter, refuses it. Apart from that they agree.
    for (const { budget, component, cli } of verdicts) {
      if (budget === " 2") expect([component, cli], budget).toEqual([false, true])
      else expect(component, JSON.stringify(budget)).toBe(cli)
    }
    expect(verdicts.filter((verdict) => verdict.component).length).toBeGreaterThan(5)
    expect(verdicts.filter((verdict) => !verdict.cli).length).toBeGreaterThan(5)
  })

  test("every default of the spec passes the spec's own rules", () => {
    const { inputs } = readComponent(templateText)
    expect(() => resolveInputs(inputs, {})).not.toThrow()
    for (const [name, input] of Object.entries(inputs)) {
      expect(input.description, name).toBeTruthy()
      expect("default" in input, `${name} must have a default: consumers include the component without inputs`).toBe(
        true,
      )
    }
  })
})

describe("the component stays in step with the CLI and its catalog README", () => {
  test("the README's inputs table lists exactly the spec's inputs, types, defaults and descriptions", () => {
    const section = readme.split(/^## Inputs$/m)[1]!.split(/^## /m)[0]!
    const rows = section.split("\n").filter((line) => line.startsWith("| `"))
    const table = rows.map((row) => {
      const cells = row.split(" | ").map((cell) => cell.replace(/^\| /, "").replace(/ \|$/, ""))
      return { name: cells[0]!.replace(/`/g, ""), type: cells[1], default: cells[2], description: cells[3] }
    })
    const { inputs } = readComponent(templateText)
    expect(table).toEqual(
      Object.entries(inputs).map(([name, input]) => ({
        name,
        type: input.type ?? "string",
        default: input.default === "" ? '`""`' : `\`${String(input.default)}\``,
        description: input.description,
      })),
    )
  })

  test("the version and image defaults name the CLI's own version", () => {
    const { inputs } = readComponent(templateText)
    expect(inputs.version!.default).toBe(cliVersion)
    expect(inputs.image!.default).toBe(`registry.gitlab.com/opencode-reviewer/opencode-reviewer:${cliVersion}`)
    expect(readme).toContain(`review@${cliVersion}`)
  })

  test("the job only passes flags the CLI defines", () => {
    const main = read("packages/cli/src/main.ts")
    const block = /const commonOptions = \{([\s\S]*?)\n\} as const/.exec(read("packages/cli/src/args.ts"))
    expect(block).not.toBeNull()
    const defined = new Set([...block![1]!.matchAll(/^\s*"?([a-z][a-z-]*)"?: \{/gm)].map((match) => match[1]!))
    expect(defined.size).toBeGreaterThan(5)
    const used = new Set(
      renderJob({ config: "x.json" }).job.script.flatMap((line) =>
        [...line.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((match) => match[1]!),
      ),
    )
    expect([...used].sort()).toEqual(["config", "fail-on", "output-dir", "vcs", "version"])
    for (const flag of used) {
      if (flag === "version") expect(main).toContain('command === "--version"')
      else expect(defined, `--${flag}`).toContain(flag)
    }
    expect(renderJob().job.script[1]).toMatch(/"\$@" review --vcs gitlab /)
  })
})

// A stand-in for the runner: the job's script entries in one bash process with `set -eo pipefail`,
// the job's variables and a merge request pipeline's predefined variables in the environment, and
// stubs of bunx and the pre-installed CLI on PATH that record what they were given.
describe("the rendered script, run the way a runner runs it", () => {
  let dir: string
  let stubs: string

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "component-script-"))
    stubs = join(dir, "bin")
    spawnSync("mkdir", ["-p", stubs])
    const record = (name: string) =>
      [
        "#!/bin/sh",
        `for arg in "$@"; do printf '%s\\0' "$arg"; done > "$STUB_OUT/${name}.argv"`,
        `env -0 > "$STUB_OUT/${name}.env"`,
        'exit "${STUB_EXIT:-0}"',
        "",
      ].join("\n")
    writeFileSync(join(stubs, "bunx"), record("bunx"))
    writeFileSync(
      join(dir, "opencode-reviewer"),
      [
        "#!/bin/sh",
        'if [ "$1" = "--version" ]; then echo "$STUB_CLI_VERSION"; exit 0; fi',
        record("cli").replace("#!/bin/sh\n", ""),
      ].join("\n"),
    )
    chmodSync(join(stubs, "bunx"), 0o755)
    chmodSync(join(dir, "opencode-reviewer"), 0o755)
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  interface Run {
    code: number | null
    stderr: string
    bunx: { argv: string[]; env: Record<string, string> } | null
    cli: { argv: string[]; env: Record<string, string> } | null
  }

  function run(job: Job, extraEnv: Record<string, string> = {}, options: { preinstalled?: string } = {}): Run {
    const out = mkdtempSync(join(dir, "run-"))
    const path = options.preinstalled === undefined ? stubs : `${stubs}:${join(out, "cli-bin")}`
    if (options.preinstalled !== undefined) {
      spawnSync("mkdir", ["-p", join(out, "cli-bin")])
      spawnSync("cp", [join(dir, "opencode-reviewer"), join(out, "cli-bin", "opencode-reviewer")])
    }
    const scriptFile = join(out, "job.sh")
    writeFileSync(scriptFile, ["set -eo pipefail", ...job.script].join("\n"))
    const env: Record<string, string> = {
      PATH: `${path}:/usr/bin:/bin`,
      HOME: out,
      CI: "true",
      GITLAB_CI: "true",
      CI_PIPELINE_SOURCE: "merge_request_event",
      CI_MERGE_REQUEST_IID: "7",
      CI_MERGE_REQUEST_PROJECT_ID: "42",
      CI_PROJECT_ID: "42",
      CI_API_V4_URL: "https://gitlab.example.com/api/v4",
      CI_SERVER_URL: "https://gitlab.example.com",
      CI_MERGE_REQUEST_DIFF_BASE_SHA: "0123456789abcdef0123456789abcdef01234567",
      CI_JOB_TOKEN: "job-token-value",
      STUB_OUT: out,
      STUB_CLI_VERSION: options.preinstalled ?? "",
      ...job.variables,
      ...extraEnv,
    }
    const result = spawnSync("bash", [scriptFile], { cwd: out, env, encoding: "utf8" })
    const recorded = (name: string) => {
      if (!existsSync(join(out, `${name}.argv`))) return null
      const argv = readFileSync(join(out, `${name}.argv`), "utf8")
        .split("\0")
        .slice(0, -1)
      const pairs = readFileSync(join(out, `${name}.env`), "utf8")
        .split("\0")
        .filter(Boolean)
      return {
        argv,
        env: Object.fromEntries(
          pairs.map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
        ),
      }
    }
    return { code: result.status, stderr: result.stderr, bunx: recorded("bunx"), cli: recorded("cli") }
  }

  test("every script entry is valid bash", () => {
    const inputSets: Record<string, InputValue>[] = [{}, { config: "a b/c.json", "output-dir": "x/.y" }]
    for (const inputs of inputSets) {
      for (const line of renderJob(inputs).job.script) {
        const check = spawnSync("bash", ["-n"], { input: line, encoding: "utf8" })
        expect(check.stderr).toBe("")
        expect(check.status).toBe(0)
      }
    }
  })

  test("with the defaults: bunx runs the pinned version with the documented flags and the bot's token", () => {
    const result = run(renderJob().job, { GITLAB_TOKEN: "glpat-bot-token" })
    expect(result.code).toBe(0)
    expect(result.cli).toBeNull()
    expect(result.bunx!.argv).toEqual([
      `opencode-reviewer@${cliVersion}`,
      "review",
      "--vcs",
      "gitlab",
      "--output-dir",
      ".opencode-reviewer",
      "--fail-on",
      "significant_concerns",
    ])
    expect(result.bunx!.env.GITLAB_TOKEN).toBe("glpat-bot-token")
    expect(result.bunx!.env.GIT_DEPTH).toBe("0")
    expect(result.bunx!.env.CI_MERGE_REQUEST_IID).toBe("7")
    expect(result.bunx!.env.OPENCODE_REVIEWER_MODELS_TOP).toBe("")
    expect(result.bunx!.env).not.toHaveProperty("token")
    expect(result.stderr).toBe("")
  })

  test("a config path with a space arrives as one --config argument, and the models as env vars", () => {
    const { job } = renderJob({
      config: "ci/my review.json",
      "fail-on": "minor_issues",
      "models-top": "a/b,c/d",
      "models-light": "e/f",
    })
    const result = run(job, { GITLAB_TOKEN: "t" })
    expect(result.code).toBe(0)
    expect(result.bunx!.argv).toEqual([
      `opencode-reviewer@${cliVersion}`,
      "review",
      "--vcs",
      "gitlab",
      "--output-dir",
      ".opencode-reviewer",
      "--fail-on",
      "minor_issues",
      "--config",
      "ci/my review.json",
    ])
    expect(result.bunx!.env.OPENCODE_REVIEWER_MODELS_TOP).toBe("a/b,c/d")
    expect(result.bunx!.env.OPENCODE_REVIEWER_MODELS_STANDARD).toBe("")
    expect(result.bunx!.env.OPENCODE_REVIEWER_MODELS_LIGHT).toBe("e/f")
    expect(result.bunx!.env.OPENCODE_REVIEWER_MAX_COST_USD).toBe("")
    const capped = run(renderJob({ budget: "1.75" }).job, { GITLAB_TOKEN: "t" })
    expect(capped.bunx!.env.OPENCODE_REVIEWER_MAX_COST_USD).toBe("1.75")
    expect(applyModelEnv(resolveConfig({}), capped.bunx!.env).maxCostUsd).toBe(1.75)
  })

  test("token-variable names the variable GITLAB_TOKEN is read from, plain or file-type", () => {
    const { job } = renderJob({ "token-variable": "REVIEW_BOT_TOKEN" })
    expect(run(job, { REVIEW_BOT_TOKEN: "from-variable" }).bunx!.env.GITLAB_TOKEN).toBe("from-variable")
    const tokenFile = join(dir, "token-file")
    writeFileSync(tokenFile, "from-file")
    expect(run(job, { REVIEW_BOT_TOKEN: tokenFile }).bunx!.env.GITLAB_TOKEN).toBe("from-file")
    // The named variable wins over a GITLAB_TOKEN that happens to be set too.
    expect(run(job, { REVIEW_BOT_TOKEN: "named", GITLAB_TOKEN: "other" }).bunx!.env.GITLAB_TOKEN).toBe("named")
  })

  test("a missing token is named on stderr and the CLI still runs, to fail with its own hint", () => {
    const result = run(renderJob({ "token-variable": "REVIEW_BOT_TOKEN" }).job)
    expect(result.stderr).toContain("CI/CD variable REVIEW_BOT_TOKEN is empty or not passed to this pipeline")
    expect(result.bunx!.env.GITLAB_TOKEN).toBe("")
    expect(result.bunx!.env.CI_JOB_TOKEN).toBe("job-token-value")
  })

  test("the CLI's exit code is the job's exit code", () => {
    const { job } = renderJob()
    expect(run(job, { GITLAB_TOKEN: "t", STUB_EXIT: "2" }).code).toBe(2)
    expect(run(job, { GITLAB_TOKEN: "t", STUB_EXIT: "1" }).code).toBe(1)
  })

  test("a pre-installed CLI of the requested version runs without bunx; another version falls back to bunx", () => {
    const { job } = renderJob({ config: "review.json" })
    const same = run(job, { GITLAB_TOKEN: "t" }, { preinstalled: cliVersion })
    expect(same.bunx).toBeNull()
    expect(same.cli!.argv).toEqual([
      "review",
      "--vcs",
      "gitlab",
      "--output-dir",
      ".opencode-reviewer",
      "--fail-on",
      "significant_concerns",
      "--config",
      "review.json",
    ])
    expect(same.cli!.env.GITLAB_TOKEN).toBe("t")
    const other = run(job, { GITLAB_TOKEN: "t" }, { preinstalled: "0.0.1" })
    expect(other.cli).toBeNull()
    expect(other.bunx!.argv[0]).toBe(`opencode-reviewer@${cliVersion}`)
  })

  test("the README's Vault override merges into the job and feeds the secret to GITLAB_TOKEN", () => {
    const example = yamlBlocks(readme).find((block) => block.includes("secrets:"))
    expect(example).toBeDefined()
    const consumer = parse(example!, yamlOptions) as Record<string, unknown>
    const include = (consumer.include as { component: string; inputs?: Record<string, InputValue> }[])[0]!
    const rendered = renderComponent(templateText, include.inputs ?? {})
    const { include: _, ...local } = consumer
    const merged = mergeIncluded(rendered, local)
    const job = merged["opencode-review"] as Job & {
      id_tokens: unknown
      secrets: Record<string, { vault: string; file: boolean; token: string }>
    }
    const plain = rendered["opencode-review"] as Job
    expect(job.id_tokens).toEqual({ VAULT_ID_TOKEN: { aud: "https://vault.example.com" } })
    expect(job.secrets.REVIEW_BOT_TOKEN).toEqual({
      vault: "ci/opencode-reviewer/gitlab_token@kv",
      file: false,
      token: "$VAULT_ID_TOKEN",
    })
    const { id_tokens: __, secrets: ___, ...rest } = job
    expect(rest).toEqual(plain)
    // The runner exports a Vault secret like any variable; the job hands it to the CLI.
    expect(run(job, { REVIEW_BOT_TOKEN: "from-vault" }).bunx!.env.GITLAB_TOKEN).toBe("from-vault")
  })
})

function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!)
}

describe("the README's examples", () => {
  test("each include names the review component and passes inputs the spec accepts", () => {
    const { inputs } = readComponent(templateText)
    let includes = 0
    for (const block of yamlBlocks(readme)) {
      const config = parse(block, yamlOptions) as {
        include?: { component: string; inputs?: Record<string, InputValue> }[]
      }
      for (const item of config.include ?? []) {
        includes++
        expect(item.component).toMatch(
          /^\$CI_SERVER_FQDN\/opencode-reviewer\/opencode-reviewer\/review@(~latest|\d+\.\d+\.\d+)$/,
        )
        expect(() => resolveInputs(inputs, item.inputs ?? {})).not.toThrow()
      }
    }
    expect(includes).toBeGreaterThanOrEqual(5)
  })

  test("the warn-only example turns exit 2 into a warning and keeps everything else", () => {
    const example = yamlBlocks(readme).find((block) => block.includes("exit_codes"))!
    const { include: _, ...local } = parse(example, yamlOptions) as Record<string, unknown>
    const merged = mergeIncluded(renderComponent(templateText), local)["opencode-review"] as Job
    expect(merged.allow_failure).toEqual({ exit_codes: [2] })
    expect(merged.script).toEqual(defaultScript)
  })
})

describe("the project's own pipeline", () => {
  const pipeline = parse(read(".gitlab-ci.yml"), yamlOptions) as Record<string, Record<string, unknown>>
  const jobs = Object.entries(pipeline).filter(
    ([name]) => !["workflow", "stages", "include", "variables", "default"].includes(name) && !name.startsWith("."),
  )
  const tagRule = (rules: unknown) => {
    const list = rules as { if?: string }[]
    expect(list).toHaveLength(1)
    const match = /^\$CI_COMMIT_TAG =~ \/(.*)\/$/.exec(list[0]!.if ?? "")
    expect(match, String(list[0]!.if)).not.toBeNull()
    return new RegExp(match![1]!)
  }

  test("has the stages test and release, and tests with .ci/run", () => {
    expect(pipeline.stages).toEqual(["test", "release"])
    expect(pipeline.test!.stage).toBe("test")
    expect(pipeline.test!.script).toEqual(["bash .ci/run"])
    expect(pipeline.test!.rules).toBeUndefined()
  })

  test("releases only on semver tags", () => {
    const release = jobs.filter(([, job]) => job.stage === "release")
    expect(release.map(([name]) => name).sort()).toEqual(["catalog-release", "container-image", "npm-publish"])
    for (const [name, job] of release) {
      const pattern = tagRule(job.rules)
      for (const tag of ["1.2.3", "v0.1.0", "10.20.30"]) expect(pattern.test(tag), `${name} on ${tag}`).toBe(true)
      for (const ref of ["1.2", "v1.2.3-rc.1", "1.2.3.4", "main", "release-1.2.3"])
        expect(pattern.test(ref), `${name} on ${ref}`).toBe(false)
    }
  })

  test("packs and publishes the npm package, builds ci/Dockerfile, then creates the catalog release", () => {
    const publish = (pipeline["npm-publish"]!.script as string[]).join("\n")
    const bunVersion = /^bun_version="([^"]+)"$/m.exec(read(".ci/run"))![1]
    expect(publish).toContain(`bun@${bunVersion}`)
    expect(publish).toContain("bun run pack")
    expect(publish).toContain('npm publish "dist/opencode-reviewer-$version.tgz"')
    const image = pipeline["container-image"]!
    expect(image.needs).toEqual(["npm-publish"])
    expect((image.script as string[]).join("\n")).toContain(
      '--file ci/Dockerfile --build-arg "OPENCODE_REVIEWER_VERSION=$version"',
    )
    const release = pipeline["catalog-release"]!
    expect(release.needs).toEqual(["npm-publish", "container-image"])
    expect(release.image).toBe("registry.gitlab.com/gitlab-org/release-cli:latest")
    expect((release.release as { tag_name: string }).tag_name).toBe("$CI_COMMIT_TAG")
  })

  test("includes the component at this commit with valid inputs, and runs its review only on opt-in", () => {
    const include = (pipeline.include as unknown as { component: string; inputs: Record<string, InputValue> }[])[0]!
    expect(include.component).toBe("$CI_SERVER_FQDN/$CI_PROJECT_PATH/review@$CI_COMMIT_SHA")
    const rendered = renderComponent(templateText, include.inputs)
    const { include: _, ...local } = pipeline
    const merged = mergeIncluded(rendered, local)["dogfood-review"] as Job
    expect(merged.rules).toEqual([
      { if: '$CI_PIPELINE_SOURCE == "merge_request_event" && $OPENCODE_REVIEWER_DOGFOOD == "true"' },
    ])
    expect(merged.stage).toBe("test")
    expect(merged.allow_failure).toBe(true)
  })
})

describe("the image recipe", () => {
  const dockerfile = read("ci/Dockerfile")
  const arg = (name: string) => new RegExp(`^ARG ${name}=(.+)$`, "m").exec(dockerfile)?.[1]
  const cli = JSON.parse(read("packages/cli/package.json")) as { dependencies: Record<string, string> }

  test("pins the same Bun as .ci/run, the CLI's version and the OpenCode it depends on", () => {
    expect(arg("BUN_VERSION")).toBe(/^bun_version="([^"]+)"$/m.exec(read(".ci/run"))![1])
    expect(dockerfile).toMatch(/^FROM oven\/bun:\$\{BUN_VERSION\}-slim$/m)
    expect(arg("OPENCODE_REVIEWER_VERSION")).toBe(cliVersion)
    expect(arg("OPENCODE_VERSION")).toBe(cli.dependencies["opencode-ai"])
    expect(read("packages/opencode/src/binary.ts")).toContain(`opencodeVersion = "${arg("OPENCODE_VERSION")}"`)
    expect(dockerfile).toContain('bun add --global "opencode-reviewer@${OPENCODE_REVIEWER_VERSION}"')
  })

  test("checks the platform binary under a name opencode-ai really ships", () => {
    const wrapper = JSON.parse(read("packages/cli/node_modules/opencode-ai/package.json")) as {
      optionalDependencies: Record<string, string>
    }
    for (const platform of [...dockerfile.matchAll(/platform=(linux-[a-z0-9]+)/g)].map((match) => match[1]!)) {
      expect(wrapper.optionalDependencies).toHaveProperty(`opencode-${platform}`)
    }
  })

  test("ends as an unprivileged user with no entrypoint", () => {
    const users = [...dockerfile.matchAll(/^USER (.+)$/gm)].map((match) => match[1]!)
    expect(users.at(-1)).toBe("1000:1000")
    expect(dockerfile).toMatch(/^ENTRYPOINT \[\]$/m)
  })

  test("every RUN instruction is valid sh", () => {
    const runs = [...dockerfile.replace(/\\\n/g, " ").matchAll(/^RUN (.+)$/gm)].map((match) => match[1]!)
    expect(runs.length).toBeGreaterThanOrEqual(3)
    for (const body of runs) {
      const check = spawnSync("sh", ["-n"], { input: body, encoding: "utf8" })
      expect(check.stderr, body).toBe("")
      expect(check.status).toBe(0)
    }
  })
})
