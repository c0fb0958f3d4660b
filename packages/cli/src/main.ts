import { existsSync } from "node:fs"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { parseArgs } from "node:util"
import { agentsMdPlugin } from "@opencode-reviewer/agents-md"
import {
  applyModelEnv,
  atOrAbove,
  type Change,
  ChangeReadError,
  type Config,
  type ConfigResult,
  type Contributions,
  Decision,
  holdVariable,
  type Logger,
  loadPrompts,
  parseConfigText,
  planJson,
  planReview,
  type ReviewPlan,
  type ReviewPlugin,
  resolveConfig,
  reviewIncomplete,
  tools,
  type VcsProvider,
  workDirVariable,
} from "@opencode-reviewer/core"
import { gatewayPlugin } from "@opencode-reviewer/gateway"
import { createGitlabProvider, isMergeRequestPipeline } from "@opencode-reviewer/gitlab"
import {
  createGit,
  createLocalProvider,
  createPatchProvider,
  diffArgs,
  readCommitFile,
  readCommitHeads,
} from "@opencode-reviewer/local"
import { reviewerConfigPlugin } from "@opencode-reviewer/reviewer-config"
import { standardsPlugin } from "@opencode-reviewer/standards"
import { createTracing } from "@opencode-reviewer/tracing"
import type pino from "pino"
import packageJson from "../package.json" with { type: "json" }
import { findAssets } from "./assets"
import { CliUsageError, exitCodeFor, formatError, ReviewIncompleteError } from "./errors"
import { commandHelp, mainHelp } from "./help"
import { createLogger } from "./log"
import { observeReview } from "./observe"
import { renderPlan } from "./render"
import { clearReviewOutputs, finishEmptyReview, finishReview, reportFailure, runReview } from "./review"

/** The process boundary: everything main may touch of the outside world. */
export interface Io {
  argv: string[]
  env: Record<string, string | undefined>
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
  stdin: () => Promise<Uint8Array>
  /** The Bun executable running the CLI; child processes of ours (the comment server) run on it. */
  execPath: string
}

const commonOptions = {
  repo: { type: "string" },
  base: { type: "string" },
  head: { type: "string" },
  "working-tree": { type: "boolean" },
  patch: { type: "string" },
  title: { type: "string" },
  "description-file": { type: "string" },
  config: { type: "string" },
  "work-dir": { type: "string" },
  "output-dir": { type: "string" },
  vcs: { type: "string" },
  json: { type: "boolean" },
  "fail-on": { type: "string" },
  verbose: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
} as const

/** Runs the CLI and returns the exit code: 0 done, 1 could not be done, 2 decision at or above --fail-on. */
export async function main(io: Io): Promise<number> {
  const [command, ...rest] = io.argv
  if (command === undefined || command === "help" || command === "--help" || command === "-h") {
    io.stdout(mainHelp)
    return command === undefined ? 1 : 0
  }
  if (command === "--version" || command === "-V") {
    io.stdout(`${packageJson.version}\n`)
    return 0
  }
  try {
    switch (command) {
      case "plan":
        return await plan(rest, io)
      case "review":
        return await review(rest, io)
      case "demo": {
        const { values } = parse(rest, "demo")
        if (values.help) {
          io.stdout(commandHelp.demo)
          return 0
        }
        // Loaded on demand: the replay model server is only needed here, not on every start-up.
        const { demo } = await import("./demo")
        return await demo(values, io)
      }
      default:
        throw new CliUsageError(`unknown command "${command}"`, null)
    }
  } catch (error) {
    io.stderr(formatError(error))
    return exitCodeFor(error)
  }
}

async function plan(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, "plan")
  if (values.help) {
    io.stdout(commandHelp.plan)
    return 0
  }
  const prepared = await prepare(values, io, "plan")
  const { plan: result, change } = prepared
  io.stdout(values.json ? JSON.stringify(planJson(result), null, 2) + "\n" : renderPlan(result, change.source))
  return 0
}

async function review(args: string[], io: Io): Promise<number> {
  const { values } = parse(args, "review")
  if (values.help) {
    io.stdout(commandHelp.review)
    return 0
  }
  const failOn = values["fail-on"] === undefined ? null : Decision.safeParse(values["fail-on"])
  if (failOn && !failOn.success) {
    throw new CliUsageError(`--fail-on must be one of ${Decision.options.join(", ")}`, "review")
  }
  const prepared = await prepare(values, io, "review")
  await clearReviewOutputs(prepared.outputDir)
  const observe = observeReview(prepared, io)
  const { endpoint } = prepared.config.tracing
  const tracing = createTracing(endpoint ? { endpoint } : {})
  const reviewable = prepared.plan.files.some((file) => file.noise === null)
  const started = Date.now()
  const attributes = {
    "opencode_reviewer.tier": prepared.plan.tier,
    "opencode_reviewer.agents": prepared.plan.agents.map((agent) => agent.name),
  }
  const run = async () => {
    if (!reviewable) return finishEmptyReview(prepared, io)
    const outcome = await runReview(prepared, io)
    const finished = await finishReview(prepared, outcome, io)
    tracing.recordReview({ result: outcome.result, record: finished, startedAt: started, endedAt: Date.now() })
    return finished
  }
  const record = await tracing
    .span("review", attributes, run)
    .catch(async (error: unknown) => {
      await observe.failed(error)
      await reportFailure(prepared, error, io)
      throw error
    })
    .finally(() => tracing.shutdown())
  await observe.finished(record)
  const threshold = failOn?.data ?? prepared.config.failOn
  if (values.json) io.stdout(JSON.stringify(record, null, 2) + "\n")
  if (atOrAbove(record.decision, threshold)) return 2
  // Published as not approved, but the job must not pass quietly: exit 1 says it could not be done.
  if (reviewIncomplete(record)) {
    io.stderr(formatError(new ReviewIncompleteError(record)))
    return 1
  }
  return 0
}

/** Parsed common flags. */
export type Flags = ReturnType<typeof parse>["values"]

/** Everything up to the first model call, shared by plan and review. */
export interface Prepared {
  plan: ReviewPlan
  change: Change
  config: Config
  log: pino.Logger
  repoDir: string
  outputDir: string
  provider: VcsProvider
}

/** Reads the change and the config, plans, and writes the work dir (patches, prompt, opencode.json). */
export async function prepare(values: Flags, io: Io, command: keyof typeof commandHelp): Promise<Prepared> {
  const log = createLogger({ verbose: values.verbose === true, env: io.env })
  const repoDir = resolve(io.cwd, values.repo ?? ".")
  const outputDir = resolve(repoDir, values["output-dir"] ?? ".opencode-reviewer")
  const workDir = resolve(io.cwd, values["work-dir"] ?? join(outputDir, "work"))
  // Our outputs inside the repository must never show up as changes, nor in a --working-tree review.
  if (!relative(repoDir, outputDir).startsWith("..") && existsSync(repoDir)) {
    await mkdir(outputDir, { recursive: true })
    await writeFile(join(outputDir, ".gitignore"), "*\n")
  }
  const requested = values.vcs ?? "auto"
  if (!["auto", "local", "gitlab"].includes(requested)) {
    throw new CliUsageError(
      `--vcs ${requested} is not supported by this version; use auto, gitlab or local (or --patch FILE)`,
      command,
    )
  }
  // A merge request pipeline (CI_MERGE_REQUEST_IID set) means GitLab, unless the user says otherwise.
  const vcs =
    requested === "auto"
      ? values.patch === undefined && isMergeRequestPipeline(io.env)
        ? "gitlab"
        : "local"
      : requested
  if (vcs === "gitlab" && values.patch !== undefined)
    throw new CliUsageError("--patch cannot be combined with --vcs gitlab", command)
  if (
    values.patch !== undefined &&
    (values.base !== undefined || values.head !== undefined || values["working-tree"])
  ) {
    throw new CliUsageError("--patch cannot be combined with --base, --head or --working-tree", command)
  }

  const description =
    values["description-file"] === undefined
      ? undefined
      : await readText(resolve(io.cwd, values["description-file"]), "description file")
  const provider: VcsProvider =
    vcs === "gitlab"
      ? gitlabProvider(repoDir, io, log)
      : values.patch !== undefined
        ? createPatchProvider({
            patch: await readPatch(values.patch, io),
            source: values.patch === "-" ? "stdin" : `patch file ${values.patch}`,
            trustedDir: repoDir,
            title: values.title,
            description,
          })
        : createLocalProvider({
            repoDir,
            base: values.base,
            head: values.head,
            workingTree: values["working-tree"],
            title: values.title,
            description,
            env: io.env,
          })

  const change = await provider.readChange()
  const read = await readConfig(values.config, io, provider)
  const { warnings, file } = read
  const config = applyModelEnv(read.config, io.env)
  for (const warning of warnings) io.stderr(`warning: ${file ?? "config"}: ${warning}\n`)
  log.debug({ source: change.source, config: file }, "change read")

  // The planned chains, captured while core seeds the agents, for plugins that reroute them later.
  let planned: Record<string, string[]> = {}
  const plugins: ReviewPlugin[] = [
    gatewayPlugin({
      providers: config.provider,
      models: () => Object.values(planned).flat(),
      chains: () => planned,
      gateway: config.gateway,
      timeouts: {
        headerMs: config.providerTimeouts.headerSeconds * 1000,
        chunkMs: config.providerTimeouts.chunkSeconds * 1000,
      },
    }),
    ...(config.remoteConfigUrl ? [reviewerConfigPlugin({ url: config.remoteConfigUrl, chains: () => planned })] : []),
    // Standards come from the target branch (or the runner, or a URL), never from the change.
    standardsPlugin({
      standards: config.standards,
      repoDir,
      readTrustedFile: (path) => provider.readTrustedFile(path),
      listTrustedFiles: provider.listTrustedFiles ? (dir) => provider.listTrustedFiles!(dir) : undefined,
      onWarning: (message) => io.stderr(`warning: standards: ${message}\n`),
    }),
    // AGENTS.md checks on the change's own AGENTS.md files; the repository's copy from the target branch.
    agentsMdPlugin({
      change,
      readTrustedFile: (path) => provider.readTrustedFile(path),
      templateUrl: config.agentsMdTemplateUrl,
    }),
  ]
  const result = await planReview({
    change,
    config,
    plugins,
    prompts: await loadPrompts(assets.promptsDir),
    repoDir,
    workDir,
    log: log as Logger,
    extend: (store) => {
      planned = Object.fromEntries([...store.agents].map(([name, agent]) => [name, [...agent.models]]))
      addReviewMachinery(store, workDir, io.execPath)
    },
  })
  if (values.patch !== undefined && result.files.length === 0) {
    throw new ChangeReadError(`${change.source} holds no file changes git would recognise`, {
      source: change.source,
      hint: `${result.warnings.join("; ") || "empty patch"}; produce the patch with git diff or git format-patch`,
    })
  }
  for (const warning of result.warnings) io.stderr(`warning: ${warning}\n`)
  if (result.files.length === 0)
    io.stderr(`warning: ${change.source} has no changed files; there is nothing to review\n`)
  return { plan: result, change, config, log, repoDir, outputDir, provider }
}

// In CI the checkout usually has the merge request's commits: git reads the diff fastest and exactly;
// the provider falls back to GitLab's /diffs when it does not.
function gitlabProvider(repoDir: string, io: Io, log: pino.Logger): VcsProvider {
  const git = createGit(repoDir, io.env)
  return createGitlabProvider({
    env: io.env,
    repoDir,
    log: log.child({ vcs: "gitlab" }) as Logger,
    async readLocalDiff(base, head) {
      const present = await git.run(["cat-file", "-e", `${base}^{commit}`])
      const headPresent = await git.run(["cat-file", "-e", `${head}^{commit}`])
      if (present.code !== 0 || headPresent.code !== 0) return null
      const diff = await git.run([...diffArgs, base, head, "--"])
      return diff.code === 0 ? diff.stdout : null
    },
    readLocalHeads: (commit, paths) => readCommitHeads(git, commit, paths),
    readLocalFile: (commit, path) => readCommitFile(git, commit, path),
  })
}

// The two things that turn a plan into a running review: the runtime plugin that gives the
// coordinator spawn_reviewers, and the comment server that records its submit_review call.
function addReviewMachinery(store: Contributions, workDir: string, bun: string): void {
  store.opencodePlugins.push(pathToFileURL(assets.runtimePlugin).href)
  store.mcp.set(tools.commentServer, {
    type: "local",
    command: [bun, assets.commentServer],
    environment: { [workDirVariable]: workDir, [holdVariable]: "20000" },
    enabled: true,
    timeout: 30_000,
  })
}

const assets = findAssets()

function parse(args: string[], command: keyof typeof commandHelp) {
  try {
    return parseArgs({ args, options: commonOptions, allowPositionals: false, strict: true })
  } catch (error) {
    throw new CliUsageError((error as Error).message, command)
  }
}

// Config comes from --config, then OPENCODE_REVIEWER_CONFIG (both must exist), then
// opencode-reviewer.json as it is on the target branch, never from the change under review.
async function readConfig(flag: string | undefined, io: Io, provider: VcsProvider): Promise<ConfigResult> {
  const explicit = flag ?? io.env.OPENCODE_REVIEWER_CONFIG
  if (explicit !== undefined && explicit !== "") {
    const path = resolve(io.cwd, explicit)
    return parseConfigText(await readText(path, "config file"), path)
  }
  const text = await provider.readTrustedFile("opencode-reviewer.json")
  if (text === null) return { config: resolveConfig({}), warnings: [], file: null }
  return parseConfigText(text, "opencode-reviewer.json (target branch)")
}

async function readPatch(path: string, io: Io): Promise<Uint8Array> {
  const bytes = path === "-" ? await io.stdin() : await readBytes(resolve(io.cwd, path), "patch file")
  const head = new TextDecoder().decode(bytes.subarray(0, 1 << 20))
  if (!/^(diff --git |--- |\+\+\+ |@@ )/m.test(head)) {
    throw new ChangeReadError(`${path === "-" ? "stdin" : path} is not a unified git diff`, {
      source: path,
      hint: "produce one with git diff (or git format-patch) and pass it with --patch FILE",
    })
  }
  return bytes
}

async function readText(path: string, what: string): Promise<string> {
  return new TextDecoder().decode(await readBytes(path, what))
}

async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path))
  } catch (cause) {
    throw new ChangeReadError(
      `cannot read ${what} ${path}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
      {
        source: path,
        hint: "check the path and its permissions",
      },
    )
  }
}
