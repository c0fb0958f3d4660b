import { existsSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { join, relative, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { agentsMdPlugin } from "@opencode-reviewer/agents-md/plugin"
import {
  applyModelEnv,
  type Change,
  ChangeReadError,
  type Config,
  type ConfigResult,
  gitDiffArgs,
  type Logger,
  loadPrompts,
  parseConfigText,
  planReview,
  type ReviewPlan,
  type ReviewPlugin,
  resolveConfig,
  tools,
  type VcsProvider,
  workDirVariable,
} from "@opencode-reviewer/core"
import { gatewayPlugin } from "@opencode-reviewer/gateway"
import type { GitlabProviderOptions } from "@opencode-reviewer/gitlab"
import {
  createGit,
  createLocalProvider,
  createPatchProvider,
  readCommitFile,
  readCommitHeads,
} from "@opencode-reviewer/local"
import { standardsPlugin } from "@opencode-reviewer/standards"
import type pino from "pino"
import type { Flags } from "./args"
import { findAssets } from "./assets"
import { CliUsageError, NothingToDo } from "./errors"
import type { commandHelp } from "./help"
import { type Io, type PatchAhead, readPatch, readText } from "./io"
import { createLogger } from "./log"

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

/**
 * Reads the change and the config, plans, and writes the work dir (patches, prompt, opencode.json).
 * `onPlanned` sees the plan, after its warnings, while the work dir's files are still being written.
 * `patchAhead` is `--patch`'s file already being read (readPatchAhead).
 */
export async function prepare(
  values: Flags,
  io: Io,
  command: keyof typeof commandHelp,
  onPlanned?: (plan: ReviewPlan, change: Change) => void,
  patchAhead?: PatchAhead,
): Promise<Prepared> {
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
  if (!["auto", "local", "gitlab", "github"].includes(requested)) {
    throw new CliUsageError(
      `--vcs ${requested} is not known; use auto, gitlab, github or local (or --patch FILE)`,
      command,
    )
  }
  const vcs = requested === "auto" ? await detectVcs(values.patch !== undefined, io.env) : requested
  if ((vcs === "gitlab" || vcs === "github") && values.patch !== undefined)
    throw new CliUsageError(`--patch cannot be combined with --vcs ${vcs}`, command)
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
      ? await gitlabProvider(repoDir, io, log)
      : vcs === "github"
        ? await githubProvider(repoDir, io, log)
        : values.patch !== undefined
          ? createPatchProvider({
              patch: await readPatch(values.patch, io, patchAhead),
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

  // A run started by a comment goes on only when a person allowed to ask the bot asked it something.
  const asked = (await provider.readRequest?.()) ?? null
  if (asked && !asked.run) throw new NothingToDo(asked.reason)
  const change = await provider.readChange()
  const read = await readConfig(values.config, io, provider)
  const { warnings, file } = read
  const config = applyModelEnv(read.config, io.env)
  for (const warning of warnings) io.stderr(`warning: ${file ?? "config"}: ${warning}\n`)
  log.debug({ source: change.source, config: file }, "change read")

  const plugins = await reviewPlugins({ config, change, provider, repoDir, workDir, io })
  // A patch git would find no file in is refused, but only once the work dir is written, as always.
  const refused = (plan: ReviewPlan) => values.patch !== undefined && plan.files.length === 0
  const result = await planReview({
    change,
    config,
    plugins,
    prompts: await loadPrompts(assets.promptsDir),
    repoDir,
    workDir,
    log: log as Logger,
    onPlanned(plan) {
      if (refused(plan)) return
      for (const warning of plan.warnings) io.stderr(`warning: ${warning}\n`)
      if (plan.files.length === 0)
        io.stderr(`warning: ${change.source} has no changed files; there is nothing to review\n`)
      onPlanned?.(plan, change)
    },
  })
  if (refused(result)) {
    throw new ChangeReadError(`${change.source} holds no file changes git would recognise`, {
      source: change.source,
      hint: `${result.warnings.join("; ") || "empty patch"}; produce the patch with git diff or git format-patch`,
    })
  }
  return { plan: result, change, config, log, repoDir, outputDir, provider }
}

/**
 * The plugins of a review, in configure order: core's own machinery, provider blocks, the remote
 * reviewer config, the standards and the AGENTS.md checks. Each reads what it needs from the
 * plan view (the planned agents and their model chains); none depends on another.
 */
async function reviewPlugins(input: {
  config: Config
  change: Change
  provider: VcsProvider
  repoDir: string
  workDir: string
  io: Io
}): Promise<ReviewPlugin[]> {
  const { config, change, provider, repoDir, workDir, io } = input
  // Loaded only when configured.
  const remote = config.remoteConfigUrl
    ? [(await import("@opencode-reviewer/reviewer-config")).reviewerConfigPlugin({ url: config.remoteConfigUrl })]
    : []
  return [
    reviewMachinery(workDir, io.execPath),
    gatewayPlugin({
      providers: config.provider,
      gateway: config.gateway,
      timeouts: {
        headerMs: config.providerTimeouts.headerSeconds * 1000,
        chunkMs: config.providerTimeouts.chunkSeconds * 1000,
      },
    }),
    ...remote,
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
}

/**
 * A merge request pipeline (CI_MERGE_REQUEST_IID set) means GitLab, a GitHub Actions run of a pull
 * request event means GitHub, a patch or anything else local. The platforms' libraries (gitbeaker,
 * octokit) load only to ask: their detection reads their own CI variables (GitLab's CI_*, GitHub's
 * GITHUB_*), so without one of those there is nothing to ask.
 */
async function detectVcs(patch: boolean, env: Io["env"]): Promise<"local" | "gitlab" | "github"> {
  if (patch) return "local"
  if (hasVariable(env, "CI_")) {
    const { isMergeRequestPipeline } = await import("@opencode-reviewer/gitlab")
    if (isMergeRequestPipeline(env)) return "gitlab"
  }
  if (hasVariable(env, "GITHUB_")) {
    const { isGithubActionsPullRequest } = await import("@opencode-reviewer/github")
    if (isGithubActionsPullRequest(env)) return "github"
  }
  return "local"
}

function hasVariable(env: Io["env"], prefix: string): boolean {
  return Object.entries(env).some(([name, value]) => value !== undefined && name.startsWith(prefix))
}

// In CI the checkout usually has the merge request's commits: git reads the diff fastest and exactly;
// the provider falls back to GitLab's /diffs when it does not.
async function gitlabProvider(repoDir: string, io: Io, log: pino.Logger): Promise<VcsProvider> {
  const { createGitlabProvider, GitlabContextError } = await import("@opencode-reviewer/gitlab")
  try {
    return createGitlabProvider(gitlabOptions(repoDir, io, log))
  } catch (error) {
    // A pipeline some other webhook triggered (a push, a note on an issue): not ours to review.
    if (error instanceof GitlabContextError && error.data.unrelated) throw new NothingToDo(error.message)
    throw error
  }
}

function gitlabOptions(repoDir: string, io: Io, log: pino.Logger): GitlabProviderOptions {
  const git = createGit(repoDir, io.env)
  return {
    env: io.env,
    repoDir,
    log: log.child({ vcs: "gitlab" }) as Logger,
    async readLocalDiff(base, head) {
      const present = await git.run(["cat-file", "-e", `${base}^{commit}`])
      const headPresent = await git.run(["cat-file", "-e", `${head}^{commit}`])
      if (present.code !== 0 || headPresent.code !== 0) return null
      const diff = await git.run([...gitDiffArgs, base, head, "--"])
      return diff.code === 0 ? diff.stdout : null
    },
    readLocalHeads: (commit, paths) => readCommitHeads(git, commit, paths),
    readLocalFile: (commit, path) => readCommitFile(git, commit, path),
  }
}

// The checkout (actions/checkout) may hold the pull request's head; the contents API is the fallback.
async function githubProvider(repoDir: string, io: Io, log: pino.Logger): Promise<VcsProvider> {
  const { createGithubProvider } = await import("@opencode-reviewer/github")
  const git = createGit(repoDir, io.env)
  return createGithubProvider({
    env: io.env,
    log: log.child({ vcs: "github" }) as Logger,
    readLocalHeads: (commit, paths) => readCommitHeads(git, commit, paths),
    readLocalFile: (commit, path) => readCommitFile(git, commit, path),
  })
}

// The two things that turn a plan into a running review: the runtime plugin that gives the
// coordinator spawn_reviewers, and the comment server that records its submit_review call.
function reviewMachinery(workDir: string, bun: string): ReviewPlugin {
  return {
    name: "review-machinery",
    async configure(context) {
      context.addOpencodePlugin(pathToFileURL(assets.runtimePlugin).href)
      context.addMcpServer(tools.commentServer, {
        type: "local",
        command: [bun, assets.commentServer],
        environment: { [workDirVariable]: workDir },
        enabled: true,
        timeout: 30_000,
      })
    },
  }
}

const assets = findAssets()

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
