import { ciPipelineGlobs } from "../config/config"
import type { DiffFile } from "./diff"
import { compileGlobs } from "./glob"

/** Facts about the change that switch optional reviewers on, each with the file that caused it. */
export interface ChangeSignals {
  release: string[]
  agentsMd: string[]
  security: string[]
}

const releaseGlobs = compileGlobs(
  [
    "**/changelog*",
    "**/changes.md",
    "**/history.md",
    "**/release*.md",
    "**/releasing*",
    "**/version",
    "**/version.txt",
    "**/.changeset/**",
    "**/.releaserc*",
    "**/release.config.*",
    "**/.goreleaser.y*ml",
    "**/release-please-config.json",
    "**/.release-please-manifest.json",
    "**/chart.yaml",
  ],
  { caseInsensitive: true },
)

// Manifests count as release files only when a hunk touches their version line.
const manifestGlobs = compileGlobs(
  [
    "**/package.json",
    "**/cargo.toml",
    "**/pyproject.toml",
    "**/setup.cfg",
    "**/*.gemspec",
    "**/pom.xml",
    "**/build.gradle*",
    "**/mix.exs",
    "**/*.csproj",
  ],
  { caseInsensitive: true },
)
const versionLine = /^\s*(?:"version"\s*:|version\s*=|<version>|\.version\s*=|version:\s)/i

/** What kind of project mechanics a change touches. */
export type MechanicsKind =
  | "package-manager"
  | "dependencies"
  | "scripts"
  | "test-framework"
  | "build-tool"
  | "task-runner"
  | "lint"
  | "ci"
  | "environment"
  | "toolchain"
  | "manifest"
  | "typescript"
  | "container"
  | "api-client"
  | "restructure"

/** The kinds a single file can be classified as (the others come from its content or from many files). */
export type Mechanic = Exclude<MechanicsKind, "dependencies" | "scripts" | "restructure">

// Which files are project mechanics, by kind. A file matches the first kind that lists it.
const mechanicsGlobs: readonly (readonly [Mechanic, readonly string[]])[] = [
  ["ci", ciPipelineGlobs],
  [
    "package-manager",
    [
      "**/bun.lock",
      "**/bun.lockb",
      "**/package-lock.json",
      "**/npm-shrinkwrap.json",
      "**/yarn.lock",
      "**/pnpm-lock.yaml",
      "**/poetry.lock",
      "**/pipfile.lock",
      "**/uv.lock",
      "**/gemfile.lock",
      "**/composer.lock",
      "**/pnpm-workspace.yaml",
      "**/.npmrc",
      "**/.yarnrc",
      "**/.yarnrc.yml",
      "**/bunfig.toml",
    ],
  ],
  [
    "environment",
    ["**/.env.example", "**/.env.sample", "**/.env.template", "**/.env.dist", "**/env.example", "**/*.env.example"],
  ],
  [
    "test-framework",
    [
      "**/vitest.config.*",
      "**/vitest.workspace.*",
      "**/jest.config.*",
      "**/pytest.ini",
      "**/tox.ini",
      "**/noxfile.py",
      "**/playwright.config.*",
      "**/cypress.config.*",
      "**/karma.conf.*",
      "**/.mocharc*",
      "**/phpunit.xml*",
    ],
  ],
  [
    "build-tool",
    [
      "**/vite.config.*",
      "**/webpack.config.*",
      "**/rollup.config.*",
      "**/tsup.config.*",
      "**/babel.config.*",
      "**/.babelrc",
      "**/turbo.json",
      "**/nx.json",
      "**/build.gradle*",
      "**/settings.gradle*",
      "**/pom.xml",
      "**/cmakelists.txt",
      "**/meson.build",
    ],
  ],
  ["task-runner", ["**/makefile", "**/justfile", "**/taskfile.yml", "**/taskfile.yaml"]],
  [
    "lint",
    [
      "**/.eslintrc*",
      "**/eslint.config.*",
      "**/biome.json*",
      "**/.prettierrc*",
      "**/prettier.config.*",
      "**/ruff.toml",
      "**/.ruff.toml",
      "**/.golangci.y*ml",
      "**/.stylelintrc*",
      "**/.rubocop.yml",
      "**/.flake8",
      "**/.pylintrc",
      "**/.pre-commit-config.yaml",
      "**/lefthook.yml",
    ],
  ],
  [
    "toolchain",
    [
      "**/.nvmrc",
      "**/.node-version",
      "**/.tool-versions",
      "**/.python-version",
      "**/.ruby-version",
      "**/rust-toolchain",
      "**/rust-toolchain.toml",
    ],
  ],
  [
    "manifest",
    [
      "**/package.json",
      "**/go.mod",
      "**/cargo.toml",
      "**/pyproject.toml",
      "**/requirements*.txt",
      "**/pipfile",
      "**/gemfile",
      "**/composer.json",
      "**/setup.py",
      "**/setup.cfg",
    ],
  ],
  ["typescript", ["**/tsconfig*.json"]],
  ["container", ["**/dockerfile", "**/containerfile", "**/docker-compose*.y*ml", "**/compose.y*ml"]],
  [
    "api-client",
    [
      "**/openapi*.y*ml",
      "**/openapi*.json",
      "**/swagger*.y*ml",
      "**/swagger*.json",
      "**/codegen.y*ml",
      "**/orval.config.*",
    ],
  ],
]
// Nearly every rule is "**/<file name pattern>": those become one case-insensitive regex per kind on
// the base name (a diff of 20k files is classified twice per plan); folder rules go through globs.
const mechanicsSets = mechanicsGlobs.map(([kind, globs]) => {
  const byName = globs.filter((glob) => glob.startsWith("**/") && !glob.slice(3).includes("/"))
  const names = new RegExp(
    `^(?:${byName.map((glob) => [...glob.slice(3)].map((char) => (char === "*" ? "[^/]*" : char === "?" ? "[^/]" : char.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("")).join("|")})$`,
    "i",
  )
  const folders = globs.filter((glob) => !byName.includes(glob))
  return [
    kind,
    { names, folders: folders.length > 0 ? compileGlobs(folders, { caseInsensitive: true }) : null },
  ] as const
})
const agentsFileGlobs = compileGlobs(["**/agents.md", "**/claude.md"], { caseInsensitive: true })
const lockfileGlobs = compileGlobs(
  mechanicsGlobs.find(([kind]) => kind === "package-manager")![1].filter((glob) => /lock/.test(glob)),
  { caseInsensitive: true },
)

/** Whether a path is a lockfile of a package manager (bun.lock, package-lock.json, yarn.lock, …). */
export function isLockfile(path: string): boolean {
  return lockfileGlobs.match(path) !== null
}

/** Whether a path is an AGENTS.md (or CLAUDE.md) file, at the root or nested. */
export function isAgentsFile(path: string): boolean {
  return agentsFileGlobs.match(path) !== null
}

// Every kind's name rules at once: most paths match none, and then only folder rules are asked.
const anyMechanicsName = new RegExp(
  `^(?:${mechanicsSets.map(([, set]) => set.names.source.slice("^(?:".length, -")$".length)).join("|")})$`,
  "i",
)

/** The kind of project mechanics a path belongs to, or null for ordinary code and docs. */
export function mechanicsKindOf(path: string): Mechanic | null {
  const name = path.slice(path.lastIndexOf("/") + 1)
  const named = anyMechanicsName.test(name)
  for (const entry of mechanicsSets) {
    const set = entry[1]
    if ((named && set.names.test(name)) || (set.folders !== null && set.folders.match(path) !== null)) return entry[0]
  }
  return null
}

// Words in added lines that make a small change worth a security reviewer even below the full tier.
const securityWords =
  /\b(password|passwd|secret|api[_-]?key|private[_-]?key|access[_-]?token|bearer|jwt|csrf|cors|cookie|session|authori[sz]|authenticat|permission|encrypt|decrypt|cipher|hmac|md5|sha1|eval|exec|spawn|innerHTML|dangerouslySetInnerHTML|deseriali[sz]e|pickle|yaml\.load|raw sql|\$queryRaw|chmod|setuid)\b/i

/**
 * Reads the signals from every file of the diff, noise included: a lockfile switch is a package
 * manager change even though nobody reviews the lockfile itself. The word scan for `security` only
 * matters on the lite tier (at most 100 lines), so callers may skip it on bigger changes.
 */
export function readSignals(
  files: readonly { file: DiffFile; noise: string | null }[],
  options: { security: boolean } = { security: true },
): ChangeSignals {
  const signals: ChangeSignals = { release: [], agentsMd: [], security: [] }
  for (const { file, noise } of files) {
    if (releaseGlobs.match(file.path) || (manifestGlobs.match(file.path) && touchesVersion(file)))
      signals.release.push(file.path)
    if (isAgentsFile(file.path) || mechanicsKindOf(file.path) !== null) signals.agentsMd.push(file.path)
    if (noise !== null || !options.security) continue
    const word = securityWord(file)
    if (word) signals.security.push(`${file.path} (${word})`)
  }
  return signals
}

function touchesVersion(file: DiffFile): boolean {
  return file.hunks.some((hunk) => hunk.lines.some((line) => line.kind !== "context" && versionLine.test(line.text)))
}

function securityWord(file: DiffFile): string | null {
  for (const hunk of file.hunks) {
    for (const line of hunk.lines) {
      if (line.kind !== "add") continue
      const match = securityWords.exec(line.text)
      if (match) return match[0]
    }
  }
  return null
}
