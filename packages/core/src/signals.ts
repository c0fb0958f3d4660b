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
  ["**/package.json", "**/cargo.toml", "**/pyproject.toml", "**/setup.cfg", "**/*.gemspec", "**/pom.xml", "**/build.gradle*", "**/mix.exs", "**/*.csproj"],
  { caseInsensitive: true },
)
const versionLine = /^\s*(?:"version"\s*:|version\s*=|<version>|\.version\s*=|version:\s)/i

const agentsGlobs = compileGlobs(
  [
    "**/agents.md",
    "**/claude.md",
    // package manager
    "**/package.json",
    "**/bun.lock",
    "**/bun.lockb",
    "**/package-lock.json",
    "**/yarn.lock",
    "**/pnpm-lock.yaml",
    "**/pnpm-workspace.yaml",
    "**/.npmrc",
    "**/.nvmrc",
    "**/.tool-versions",
    "**/go.mod",
    "**/cargo.toml",
    "**/pyproject.toml",
    "**/requirements*.txt",
    "**/pipfile",
    "**/gemfile",
    // build and test tooling
    "**/makefile",
    "**/justfile",
    "**/tsconfig*.json",
    "**/vite.config.*",
    "**/vitest.config.*",
    "**/jest.config.*",
    "**/webpack.config.*",
    "**/rollup.config.*",
    "**/babel.config.*",
    "**/pytest.ini",
    "**/tox.ini",
    "**/build.gradle*",
    "**/pom.xml",
    "**/cmakelists.txt",
    "**/dockerfile",
    "**/docker-compose*.y*ml",
    // lint
    "**/.eslintrc*",
    "**/eslint.config.*",
    "**/biome.json*",
    "**/.prettierrc*",
    "**/ruff.toml",
    // CI
    "**/.gitlab-ci.yml",
    "**/.gitlab/ci/**",
    "**/.github/workflows/**",
    "**/.circleci/**",
    "**/jenkinsfile",
  ],
  { caseInsensitive: true },
)

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
    if (releaseGlobs.match(file.path) || (manifestGlobs.match(file.path) && touchesVersion(file))) signals.release.push(file.path)
    if (agentsGlobs.match(file.path)) signals.agentsMd.push(file.path)
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

export * as Signals from "./signals"
