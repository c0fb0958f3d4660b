import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { readFile, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { findingsReply, type GitlabFake, type RecordedRequest, statusReply, toolCall } from "@opencode-reviewer/testkit"
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest"
import {
  botNotes,
  type CliRun,
  cleanUp,
  descendantsOf,
  gitlabScenario,
  judge,
  runCli,
  type Scenario,
  specialists,
  sqlFinding,
} from "./harness"

// "GITLAB_TOKEN, CI_JOB_TOKEN and every other CI credential appear in no OpenCode process's
// environment, no model request, no file in the output or work dir, and no log line, at any log
// level." End to end: the real opencode binary, the scripted model, the GitLab fake, and the CLI as
// a real child process (pino writes to fd 2 itself, so only a child's stderr holds every log line).

/** The credentials a GitLab CI job typically has in its environment, each a unique random value. */
function ciSecrets(fake: GitlabFake): Record<string, string> {
  const random = (prefix: string) => `${prefix}${randomBytes(12).toString("hex")}`
  const jwt = () =>
    `eyJhbGciOiJSUzI1NiJ9.${randomBytes(24).toString("base64url")}.${randomBytes(24).toString("base64url")}`
  const repository = new URL(fake.url)
  repository.username = "gitlab-ci-token"
  repository.password = fake.tokens.job
  repository.pathname = "/group/project.git"
  return {
    GITLAB_TOKEN: fake.tokens.bot,
    CI_JOB_TOKEN: fake.tokens.job,
    CI_REGISTRY_PASSWORD: random("registrypw-"),
    CI_DEPLOY_PASSWORD: random("deploypw-"),
    CI_JOB_JWT: jwt(),
    CI_JOB_JWT_V2: jwt(),
    CI_REPOSITORY_URL: repository.href,
    AWS_SECRET_ACCESS_KEY: random("awssecret-"),
    NPM_TOKEN: random("npm_"),
    GITHUB_TOKEN: random("ghp_"),
    VAULT_TOKEN: random("hvs."),
    GITLAB_OIDC_TOKEN: jwt(),
  }
}

/** What must never show up: every secret's value (CI_REPOSITORY_URL's token is CI_JOB_TOKEN's). */
function needles(secrets: Record<string, string>): [string, string][] {
  return [...Object.entries(secrets), ["userinfo of CI_REPOSITORY_URL", `gitlab-ci-token:${secrets.CI_JOB_TOKEN}@`]]
}

/** The names of the needles found in `haystack` (a string, or bytes read as latin1 and UTF-16LE). */
function leaks(haystack: string | Buffer, secrets: [string, string][]): string[] {
  if (typeof haystack === "string") return secrets.filter(([, value]) => haystack.includes(value)).map(([name]) => name)
  return secrets
    .filter(
      ([, value]) =>
        haystack.includes(Buffer.from(value, "latin1")) || haystack.includes(Buffer.from(value, "utf16le")),
    )
    .map(([name]) => name)
}

/** One process seen while the review ran. */
interface SeenProcess {
  pid: number
  ppid: number
  command: string[]
  environ: string
}

/** Every live descendant of `root` with its command line and environment, read synchronously from /proc. */
function descendants(root: number): SeenProcess[] {
  return descendantsOf(root).flatMap(({ pid, ppid }) => {
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean)
      return [{ pid, ppid, command, environ: readFileSync(`/proc/${pid}/environ`, "utf8") }]
    } catch {
      return [] // exited between the listing and the read
    }
  })
}

/** Records every process below the test process, each the first time it is seen. */
function processRecorder() {
  const seen = new Map<number, SeenProcess>()
  return {
    seen,
    snapshot() {
      for (const process_ of descendants(process.pid)) if (!seen.has(process_.pid)) seen.set(process_.pid, process_)
    },
  }
}

function environOf(process_: SeenProcess): Record<string, string> {
  return Object.fromEntries(
    process_.environ
      .split("\0")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  )
}

/** Every file below `dir`, recursively (symlinks are not followed). */
function filesUnder(dir: string): string[] {
  const files: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) files.push(...filesUnder(path))
    else if (entry.isFile()) files.push(path)
  }
  return files
}

/** A GitLab scenario whose provider key comes from `{env:FAKE_API_KEY}`, with a CI job's credentials. */
async function secretScenario() {
  const { scenario, fake, env } = await gitlabScenario()
  const secrets = ciSecrets(fake)
  const apiKey = `fake-provider-key-${randomBytes(12).toString("hex")}`
  const config = JSON.parse(await readFile(scenario.configFile, "utf8")) as {
    provider: { fake: { options: { apiKey: string } } }
  }
  config.provider.fake.options.apiKey = "{env:FAKE_API_KEY}"
  await writeFile(scenario.configFile, JSON.stringify(config))
  // A runner's checkout keeps CI_REPOSITORY_URL, token included, as its origin.
  scenario.repo.git("remote", "add", "origin", secrets.CI_REPOSITORY_URL!)
  const runEnv = {
    ...env,
    ...secrets,
    FAKE_API_KEY: apiKey,
    // pino's most verbose level (the CLI passes OPENCODE_REVIEWER_LOG_LEVEL straight to pino), with --verbose too.
    OPENCODE_REVIEWER_LOG_LEVEL: "trace",
  }
  const recorder = processRecorder()
  return { scenario, fake, secrets, apiKey, runEnv, recorder }
}

/** Wraps a reply so every request first snapshots the process tree (opencode and its MCP server are alive then). */
function sampling<T>(
  recorder: ReturnType<typeof processRecorder>,
  reply: (request: RecordedRequest) => T,
): (request: RecordedRequest) => T {
  return (request) => {
    recorder.snapshot()
    return reply(request)
  }
}

/**
 * Everything the run left that a secret must not be in, as [where, content] pairs: the output dir
 * (work dir, opencode-home with OpenCode's log, opencode.db and its WAL), the config's dir, the
 * checkout's own files (not .git, where the runner put CI_REPOSITORY_URL), the CLI's stdout and
 * stderr, every model request, and what reached GitLab.
 */
async function outputs(scenario: Scenario, run: CliRun, fake: GitlabFake): Promise<[string, string | Buffer][]> {
  const checkout = filesUnder(scenario.repo.dir).filter(
    (file) => !file.startsWith(join(scenario.repo.dir, ".git") + "/"),
  )
  const files = [
    ...new Set([...filesUnder(dirname(scenario.configFile)), ...filesUnder(scenario.outputDir), ...checkout]),
  ]
  expect(files.some((file) => file.endsWith("opencode.db"))).toBe(true)
  expect(files.some((file) => file.endsWith(".log") && file.includes("opencode-home"))).toBe(true)
  return [
    ["stdout", run.stdout],
    ["stderr", run.stderr],
    ...(await Promise.all(files.map(async (file): Promise<[string, Buffer]> => [file, await readFile(file)]))),
    ...scenario.server.requests.map((request): [string, string] => [
      `model request ${request.id} (${request.model})`,
      JSON.stringify({ body: request.body, headers: request.headers, system: request.system }),
    ]),
    ["GitLab notes", JSON.stringify({ notes: fake.state.notes, discussions: fake.state.discussions })],
    ["bodies sent to GitLab", JSON.stringify(fake.state.requests.map((request) => request.body ?? null))],
  ]
}

function expectNoLeaks(places: [string, string | Buffer][], secrets: [string, string][]): void {
  const found = places.flatMap(([where, content]) => leaks(content, secrets).map((name) => `${name} in ${where}`))
  expect(found).toEqual([])
}

describe("CI credentials", () => {
  // One review (each opencode process costs seconds of CPU to start) for three tests: the security
  // reviewer reads .git/config (refused), then a build log holding the clone URL (redacted), then
  // reports; every model reply snapshots the process tree first.
  describe("a review whose security reviewer reads .git/config and a build log holding the clone URL", () => {
    let shared: {
      scenario: Scenario
      fake: GitlabFake
      secrets: Record<string, string>
      apiKey: string
      run: CliRun
      recorder: ReturnType<typeof processRecorder>
      places: [string, string | Buffer][]
    }

    beforeAll(async () => {
      const { scenario, fake, secrets, apiKey, runEnv, recorder } = await secretScenario()
      const gitConfig = join(scenario.repo.dir, ".git", "config")
      // A build step that logged the clone URL into the workspace (untracked, so not in the diff).
      const log = join(scenario.repo.dir, "build.log")
      await writeFile(log, `cloning ${secrets.CI_REPOSITORY_URL}\ndone\n`)
      scenario.setReply("fake/coordinator", sampling(recorder, judge))
      for (const name of specialists)
        scenario.setReply(
          `fake/${name}`,
          sampling(recorder, () => findingsReply(name === "security" ? [sqlFinding] : [])),
        )
      scenario.setReply(
        "fake/security",
        sampling(recorder, (request) =>
          request.toolResults.length === 0
            ? toolCall("read", { filePath: gitConfig })
            : request.toolResults.length === 1
              ? toolCall("read", { filePath: log })
              : findingsReply([sqlFinding]),
        ),
      )
      const run = await runCli(scenario, runEnv, { args: ["--verbose"] })
      // The planted file itself holds the token, of course; everything else must not.
      const places = (await outputs(scenario, run, fake)).filter(([where]) => !where.endsWith("build.log"))
      shared = { scenario, fake, secrets, apiKey, run, recorder, places }
    }, 120_000)

    afterAll(cleanUp)

    test("reach no opencode process, model request, output file, log line or GitLab note; the provider key reaches opencode", () => {
      const { scenario, fake, secrets, apiKey, run, recorder, places } = shared
      expect(run.code, run.stderr).toBe(2)
      expect(botNotes(fake).length).toBeGreaterThan(0)
      // Nothing logs at trace today; debug lines (level 20) prove the verbose logger reached stderr.
      expect(run.stderr).toMatch(/"level":20\b.*"msg":"environment variables withheld from the opencode child"/)

      // Processes: opencode and the comment server it spawned were seen, with clean environments.
      const { opencode, commentServer, below } = classify(recorder, run)
      expect(opencode.length, JSON.stringify(below.map((seen) => seen.command))).toBeGreaterThan(0)
      expect(commentServer.length, JSON.stringify(below.map((seen) => seen.command))).toBeGreaterThan(0)
      for (const seen of opencode) expect(environOf(seen).FAKE_API_KEY).toBe(apiKey)
      for (const seen of commentServer)
        expect(environOf(seen).OPENCODE_REVIEWER_WORK_DIR).toBe(join(scenario.outputDir, "work"))
      const secretList = needles(secrets)
      expectNoLeaks(processPlaces(below), secretList)

      // The provider key went where it is needed: the Authorization header of every model request.
      const modelRequests = scenario.server.requests.filter((request) => !request.isTitle)
      // The coordinator and the six reviewers a full-tier change plans (release is not planned here).
      expect(new Set(modelRequests.map((request) => request.model)).size).toBeGreaterThanOrEqual(7)
      expect(modelRequests.every((request) => request.headers.authorization === `Bearer ${apiKey}`)).toBe(true)

      expectNoLeaks(places, secretList)
      // The provider key itself is in no file, log line or note either (only in opencode's env and the header).
      expectNoLeaks(
        places.filter(([where]) => !where.startsWith("model request")),
        [["FAKE_API_KEY", apiKey]],
      )
    })

    // A GitLab checkout may keep CI_REPOSITORY_URL, CI_JOB_TOKEN included, as origin in .git/config
    // (runners with FF_GIT_URLS_WITHOUT_TOKENS off, the default before 18.0, or a `git remote set-url
    // origin "$CI_REPOSITORY_URL"` in a script), and build steps may write it into the workspace.
    // Reviewers may read any file of the repository, so a prompt-injected one would send the token to
    // the model and OpenCode would store it in opencode.db: reads under .git are denied, and every tool
    // result has credentials removed before the model or the database sees it (the runtime plugin).
    test("a reviewer asking to read .git/config is refused, and nothing of the token reaches the model or a file", () => {
      const { scenario, run, secrets, places } = shared
      expect(run.code, run.stderr).toBe(2)
      const answered = scenario.server.requests.find(
        (request) => request.model === "security" && request.toolResults.length === 1,
      )
      expect(answered?.toolResults[0]?.content).toBeDefined()
      expect(answered!.toolResults[0]!.content).not.toContain('[remote "origin"]')
      expectNoLeaks(places, needles(secrets))
    })

    test("a credential in a file a reviewer reads is redacted from the tool result, its database and the model request", () => {
      const { scenario, run, secrets, places } = shared
      expect(run.code, run.stderr).toBe(2)
      // The read ran and its result reached the model, with the credential replaced.
      const answered = scenario.server.requests.find(
        (request) => request.model === "security" && request.toolResults.length === 2,
      )
      expect(answered?.toolResults[1]?.content).toContain("cloning http://[redacted]@")
      expectNoLeaks(places, needles(secrets))
    })
  })

  describe("a review that fails", () => {
    afterEach(cleanUp)

    test("a review where every model answers 401 prints and writes no credential either", async () => {
      const { scenario, fake, secrets, apiKey, runEnv, recorder } = await secretScenario()
      const refused = sampling(recorder, () =>
        statusReply(401, {
          message: "Incorrect API key provided (scripted)",
          type: "invalid_request_error",
          code: "invalid_api_key",
          headers: { "retry-after-ms": "0" },
        }),
      )
      for (const model of ["fake/coordinator", ...specialists.map((name) => `fake/${name}`)])
        scenario.setReply(model, refused)
      const run = await runCli(scenario, runEnv, { args: ["--verbose"] })
      expect(run.code, run.stderr).toBe(1)
      // The error path's own words (its exact text is not this test's business): an error line naming the 401.
      expect(run.stderr).toMatch(/^error: .*/m)
      expect(run.stderr).toContain("APIError 401")
      expect(run.stderr).toMatch(/"level":20\b/)
      const { opencode, commentServer, below } = classify(recorder, run)
      expect(opencode.length).toBeGreaterThan(0)
      expect(commentServer.length).toBeGreaterThan(0)
      const secretList = needles(secrets)
      expectNoLeaks(processPlaces(below), secretList)
      const places = await outputs(scenario, run, fake)
      expectNoLeaks(places, secretList)
      expectNoLeaks(
        places.filter(([where]) => !where.startsWith("model request")),
        [["FAKE_API_KEY", apiKey]],
      )
    })
  })
})

/** The opencode processes the CLI spawned, the comment server, and every process in their trees. */
function classify(recorder: ReturnType<typeof processRecorder>, run: CliRun) {
  // The CLI itself holds the credentials by design (it posts with GITLAB_TOKEN); what matters is
  // each opencode child and everything it spawns.
  const seen = [...recorder.seen.values()]
  const opencode = seen.filter(
    (process_) => process_.ppid === run.pid && /(^|\/)opencode$/.test(process_.command[0] ?? ""),
  )
  const roots = new Set(opencode.map((process_) => process_.pid))
  const byPid = new Map(seen.map((process_) => [process_.pid, process_]))
  const inTree = (process_: SeenProcess | undefined): boolean =>
    process_ !== undefined && (roots.has(process_.pid) || inTree(byPid.get(process_.ppid)))
  const below = seen.filter((process_) => inTree(process_))
  const commentServer = below.filter((process_) =>
    process_.command.some((part) => /comment-server\.(ts|js)$/.test(part)),
  )
  return { below, opencode, commentServer }
}

function processPlaces(processes: SeenProcess[]): [string, string][] {
  return processes.flatMap((seen): [string, string][] => [
    [`environ of ${seen.pid} (${seen.command.slice(0, 2).join(" ")})`, seen.environ],
    [`command line of ${seen.pid}`, seen.command.join(" ")],
  ])
}
