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
// Stems (authoris…, authenticat…, deserialis…) take any ending: between two `\b`s the first two could
// never match. `$queryRaw` takes no `\b` before it: `$` is no word character, so `prisma.$queryRaw` has none.
const securityWords =
  /\b(?:password|passwd|secret|api[_-]?key|private[_-]?key|access[_-]?token|bearer|jwt|csrf|cors|cookie|session|permission|encrypt|decrypt|cipher|hmac|md5|sha1|eval|exec|spawn|child_process|innerHTML|dangerouslySetInnerHTML|pickle|yaml\.load|raw sql|chmod|setuid)\b|\b(?:authori[sz]|authenticat|deseriali[sz])\w*|\$(?:queryRaw|executeRaw)(?:Unsafe)?\b/i

/**
 * Reads the signals from every file of the diff, noise included: a lockfile switch is a package
 * manager change even though nobody reviews the lockfile itself. The `security` scan (code patterns,
 * then words, over added lines) only matters on the lite tier (at most 100 lines), so callers may
 * skip it on bigger changes.
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
    const reasons = riskyCode(file)
    const found = reasons.length > 0 ? reasons.join(", ") : securityWord(file)
    if (found) signals.security.push(`${file.path} (${found})`)
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

// Code patterns an added line can show: the classic injections and unsafe settings, found by code so
// that a small change carrying one gets the security reviewer (docs/design-numbers.md#risk-tiers).
const sqlConcatenation = "SQL built by concatenation"
const sqlInterpolation = "SQL built by interpolation"
const shellFromInput = "shell command built from input"
const dynamicCode = "eval / new Function"
const deserialisation = "deserialisation of untrusted data"
const tlsDisabled = "TLS certificate checks disabled"

type Language =
  | "js"
  | "python"
  | "go"
  | "java"
  | "kotlin"
  | "csharp"
  | "ruby"
  | "php"
  | "c"
  | "shell"
  | "sql"
  | "docs"
  | "other"

const languageByExtension: Record<string, Language> = {
  js: "js",
  jsx: "js",
  mjs: "js",
  cjs: "js",
  ts: "js",
  tsx: "js",
  mts: "js",
  cts: "js",
  vue: "js",
  svelte: "js",
  astro: "js",
  py: "python",
  pyw: "python",
  go: "go",
  java: "java",
  kt: "kotlin",
  kts: "kotlin",
  groovy: "kotlin",
  gradle: "kotlin",
  scala: "kotlin",
  cs: "csharp",
  rb: "ruby",
  rake: "ruby",
  gemspec: "ruby",
  php: "php",
  phtml: "php",
  c: "c",
  h: "c",
  cc: "c",
  cpp: "c",
  cxx: "c",
  hpp: "c",
  hh: "c",
  sh: "shell",
  bash: "shell",
  zsh: "shell",
  ksh: "shell",
  sql: "sql",
  md: "docs",
  mdx: "docs",
  markdown: "docs",
  rst: "docs",
  txt: "docs",
  adoc: "docs",
}
const languageByName: Record<string, Language> = {
  dockerfile: "shell",
  containerfile: "shell",
  makefile: "shell",
  gemfile: "ruby",
  rakefile: "ruby",
}

function languageOf(path: string): Language {
  const name = path.slice(path.lastIndexOf("/") + 1).toLowerCase()
  const dot = name.lastIndexOf(".")
  return (dot > 0 ? languageByExtension[name.slice(dot + 1)] : undefined) ?? languageByName[name] ?? "other"
}

// A line that is only a comment, by the language's comment markers (trailing comments are not cut).
const slashComment = /^\s*(?:\/\/|\/\*|\*(?:\s|\/|$))/
const hashComment = /^\s*#(?![{![])/
const commentLine: Record<Language, RegExp | null> = {
  js: slashComment,
  go: slashComment,
  java: slashComment,
  kotlin: slashComment,
  csharp: slashComment,
  c: slashComment,
  python: hashComment,
  ruby: hashComment,
  shell: hashComment,
  php: /^\s*(?:\/\/|\/\*|\*(?:\s|\/|$)|#(?!\[))/,
  other: /^\s*(?:\/\/|\/\*|#(?![{![]))/,
  sql: /^\s*--/,
  docs: null,
}

// A statement of SQL: uppercase keywords, or lowercase ones only in shapes English prose does not take.
const sqlShape = new RegExp(
  [
    String.raw`\bSELECT\s[^;]{0,200}?\bFROM\b`,
    String.raw`\bINSERT\s+INTO\b`,
    String.raw`\bUPDATE\s+[\w."\x60[\]]+\s+SET\b`,
    String.raw`\bDELETE\s+FROM\b`,
    String.raw`\b(?:WHERE|HAVING)\b`,
    String.raw`\bVALUES\s*\(`,
    String.raw`\bORDER\s+BY\b`,
    String.raw`\b(?:AND|OR)\s+[\w.]+\s*(?:=|<|>|!=|LIKE\b|IN\b)`,
    String.raw`\bselect\s+(?:\*|distinct\s|count\s*\(|[\w.]+\s*,)[^;]{0,200}?\sfrom\s+[\w."\x60[]`,
    String.raw`\binsert\s+into\s+[\w."\x60[\]]+\s*(?:\(|values\b|select\b)`,
    String.raw`\bdelete\s+from\s+[\w."\x60[\]]+\s*(?:where\b|["'\x60]|$)`,
    String.raw`\bupdate\s+[\w."\x60[\]]+\s+set\s+[\w."\x60]+\s*=`,
    String.raw`\bwhere\s+[\w."\x60]+\s*(?:=|<>|!=|<=|>=|<|>|like\b|in\s*\()`,
  ].join("|"),
)

// An argument that is one string literal with nothing built into it: `"git status")`.
const literalArgument = String.raw`(?:"[^"\\$]*"|'[^'\\]*'|\x60[^\x60\\$]*\x60)\s*[,)\]]`
// Inside a double-quoted string of the line (quotes counted from its start, escapes ignored).
const inDoubleQuotes = (inner: string) => new RegExp(`^[^"]*(?:"[^"]*"[^"]*)*"[^"]*${inner}`)
const notLiteral = (call: string) => new RegExp(String.raw`${call}\s*\(\s*(?!${literalArgument})\S`)
// `sh -c <command>` (or `cmd /c`) as separate arguments in any language: exec.Command, spawn, ProcessBuilder.
const shellDashC = new RegExp(
  String.raw`["'\x60](?:/usr)?(?:/bin/)?(?:ba|z|da|k)?sh["'\x60]\s*,\s*\[?\s*["'\x60]-c["'\x60]\s*,\s*(?!${literalArgument})\S|["']cmd(?:\.exe)?["']\s*,\s*\[?\s*["']/[cCkK](?:["']\s*,\s*(?!${literalArgument})\S|\s[^"']*["']\s*\+)`,
)

interface CodeRule {
  reason: string
  pattern: RegExp
  /** The languages it applies to; null for all but documentation and plain SQL files. */
  languages: readonly Language[] | null
  /** Only on lines that look like SQL (sqlShape). */
  sql?: boolean
  /** A line that also matches this is safe (a safe YAML loader, weights-only model loading). */
  unless?: RegExp
}

const codeRules: readonly CodeRule[] = [
  // SQL: a statement with a value concatenated or interpolated into it; placeholders ($1, ?, :name,
  // %s with the values passed separately) and tagged templates (sql`…`) do neither.
  {
    reason: sqlConcatenation,
    sql: true,
    languages: ["js", "python", "go", "java", "kotlin", "csharp", "ruby", "c", "other"],
    pattern: /["'\x60]\s*\+\s*[\w$(]|[\w$)\]]\s*\+\s*["'\x60]/,
  },
  { reason: sqlConcatenation, sql: true, languages: ["php"], pattern: /["']\s*\.\s*[$\w(]|[\w$)\]]\s*\.\s*["']/ },
  {
    reason: sqlConcatenation,
    languages: ["ruby"],
    pattern:
      /\.(?:where|order|reorder|group|having|joins|from|select|pluck|find_by_sql|exists\?|update_all|delete_all)\s*\(?\s*["'][^"']*["']\s*\+/,
  },
  {
    reason: sqlInterpolation,
    sql: true,
    languages: null,
    pattern:
      /\b(?:Sprintf|String\.format|String\.Format|sprintf|format!|util\.format)\s*\(.*?(?:%[-+# 0-9.]*[svq]|\{\w*\})/,
  },
  {
    reason: sqlInterpolation,
    sql: true,
    languages: ["python"],
    pattern: /\b(?:[fF][rRbB]?|[rRbB][fF])(?:"[^"]*|'[^']*)\{|["']\s*\.format\s*\(|["']\s*%\s*[\w([{]/,
  },
  { reason: sqlInterpolation, sql: true, languages: ["ruby"], pattern: /#\{|["']\s*%\s*[\w([{]/ },
  {
    reason: sqlInterpolation,
    languages: ["ruby"],
    pattern:
      /\.(?:where|order|reorder|group|having|joins|from|select|pluck|find_by_sql|exists\?|update_all|delete_all)\s*\(?\s*"[^"]*#\{/,
  },
  {
    reason: sqlInterpolation,
    sql: true,
    languages: ["php"],
    pattern: inDoubleQuotes(String.raw`(?:\$[A-Za-z_]|\{\$)`),
  },
  {
    reason: sqlInterpolation,
    sql: true,
    languages: ["kotlin", "shell"],
    pattern: inDoubleQuotes(String.raw`\$[{A-Za-z_]`),
  },
  { reason: sqlInterpolation, sql: true, languages: ["kotlin"], pattern: /["']\s*\.format\s*\(/ },
  { reason: sqlInterpolation, sql: true, languages: ["java"], pattern: /"\s*\.formatted\s*\(/ },
  { reason: sqlInterpolation, sql: true, languages: ["csharp"], pattern: /(?:\$@?|@\$)"[^"]*\{/ },
  // Shell commands: through a shell, with something other than one constant string.
  { reason: shellFromInput, languages: null, pattern: shellDashC },
  {
    reason: shellFromInput,
    languages: ["js"],
    pattern: notLiteral(
      String.raw`(?:(?:^|[^\w$.])exec|\b(?:child_?process|childProcess|cp)\.exec|(?:^|[^\w$])execSync)`,
    ),
  },
  { reason: shellFromInput, languages: ["js"], pattern: /\bshell\s*:\s*true\b/ },
  { reason: shellFromInput, languages: ["python"], pattern: notLiteral(String.raw`\bos\.(?:system|popen)`) },
  {
    reason: shellFromInput,
    languages: ["python"],
    pattern: notLiteral(String.raw`\bsubprocess\.(?:getoutput|getstatusoutput)`),
  },
  { reason: shellFromInput, languages: ["python"], pattern: /\bshell\s*=\s*True\b/ },
  { reason: shellFromInput, languages: ["java", "kotlin"], pattern: notLiteral(String.raw`\bgetRuntime\(\)\s*\.exec`) },
  { reason: shellFromInput, languages: ["c"], pattern: notLiteral(String.raw`(?:^|[^\w.>$])(?:system|popen)`) },
  {
    reason: shellFromInput,
    languages: ["ruby"],
    pattern:
      /\x60[^\x60]*#\{|%x[([{][^)\]}]*#\{|\b(?:system|exec|spawn|popen[23]?|capture[23]e?)\s*\(?\s*(?:"[^"]*#\{|["'][^"']*["']\s*\+)/,
  },
  {
    reason: shellFromInput,
    languages: ["php"],
    pattern:
      /(?:^|[^\w>$:])(?:shell_exec|exec|system|passthru|popen|proc_open|pcntl_exec)\s*\(\s*(?:"[^"]*(?:\$[A-Za-z_{])|\$[A-Za-z_]|[\w:]+\s*\(\s*\$|["'][^"']*["']\s*\.)|\x60[^\x60]*\$[A-Za-z_{]/,
  },
  // Code run from a string.
  {
    reason: dynamicCode,
    languages: ["js"],
    pattern:
      /(?:^|[^\w$.]|\b(?:window|globalThis|global|self)\.)eval\s*\(|\bnew\s+Function\s*\(|(?:^|[^\w$.])Function\s*\(\s*["'\x60]|\bvm\.(?:runIn\w*Context|compileFunction)\s*\(|\bnew\s+vm\.Script\s*\(|\bset(?:Timeout|Interval)\s*\(\s*["']/,
  },
  { reason: dynamicCode, languages: ["python"], pattern: /(?:^|[^\w.])(?:eval|exec)\s*\(/ },
  {
    reason: dynamicCode,
    languages: ["ruby"],
    pattern: /(?:^|[^\w.:])eval(?:\s*\(|\s+(?!do\b)["'@$\w])|\b(?:instance|class|module)_eval\s*\(?\s*(?:["'@$]|<<)/,
  },
  { reason: dynamicCode, languages: ["php"], pattern: /(?:^|[^\w>$:])(?:eval|create_function)\s*\(/ },
  { reason: dynamicCode, languages: ["shell"], pattern: /(?:^|[;&|]\s*|\b(?:then|do|else)\s+)eval\s/ },
  {
    reason: dynamicCode,
    languages: ["java", "kotlin"],
    pattern: /\bnew\s+GroovyShell\b|\bEval\.(?:me|x|xy|xyz)\s*\(|\bScriptEngineManager\b/,
  },
  { reason: dynamicCode, languages: ["csharp"], pattern: /\bCSharpScript\.(?:Evaluate|Run)Async\b/ },
  // Deserialisers that build arbitrary objects (or run code) from their input.
  {
    reason: deserialisation,
    languages: ["python"],
    pattern:
      /\b(?:c?[Pp]ickle|_pickle|dill|cloudpickle|jsonpickle)\.(?:loads?|Unpickler|decode)\s*\(|\bmarshal\.loads?\s*\(|\bread_pickle\s*\(|\bshelve\.open\s*\(|\byaml\.unsafe_load(?:_all)?\s*\(|\ballow_pickle\s*=\s*True\b/,
  },
  {
    reason: deserialisation,
    languages: ["python"],
    pattern: /\byaml\.load(?:_all)?\s*\(/,
    unless: /\bLoader\s*=\s*(?:yaml\.)?C?(?:Safe|Base)Loader\b/,
  },
  {
    reason: deserialisation,
    languages: ["python"],
    pattern: /\btorch\.load\s*\(/,
    unless: /\bweights_only\s*=\s*True\b/,
  },
  { reason: deserialisation, languages: ["js"], pattern: /\bunserialize\s*\(|["']node-serialize["']/ },
  {
    reason: deserialisation,
    languages: ["java", "kotlin"],
    pattern:
      /\b(?:ObjectInputStream|XMLDecoder)\b|\b(?:enableDefaultTyping|activateDefaultTyping)\s*\(|\bSerializationUtils\.deserialize\s*\(|\.fromXML\s*\(/,
  },
  {
    reason: deserialisation,
    languages: ["csharp"],
    pattern:
      /\b(?:BinaryFormatter|NetDataContractSerializer|SoapFormatter|LosFormatter|ObjectStateFormatter)\b|\bTypeNameHandling\.(?:All|Auto|Objects|Arrays)\b/,
  },
  {
    reason: deserialisation,
    languages: ["ruby"],
    pattern: /\bMarshal\.(?:load|restore)\b|\b(?:YAML|Psych)\.unsafe_load\b/,
  },
  {
    reason: deserialisation,
    languages: ["php"],
    pattern: /(?:^|[^\w>$:])unserialize\s*\(/,
    unless: /["']allowed_classes["']\s*=>\s*false\b/,
  },
  // TLS verification switched off, in code, configuration and scripts alike.
  {
    reason: tlsDisabled,
    languages: null,
    pattern:
      /\brejectUnauthorized["']?\s*[:=]\s*false\b|\bNODE_TLS_REJECT_UNAUTHORIZED\b["'\]]*\s*[:=]\s*["']?0\b|\binsecure_?skip_?(?:tls_?)?verify["']?\s*[:=]\s*["']?true\b|\bstrict-?ssl["']?\s*[:=\s]\s*["']?false\b|\bssl_?verify(?:_?(?:peer|host))?["']?\s*(?:[:=\s]|=>)\s*["']?(?:false|0|no)\b|\bverify_?ssl["']?\s*(?:[:=]|=>)\s*false\b|\bvalidate_certs["']?\s*[:=]\s*["']?(?:false|no)\b|\bGIT_SSL_NO_VERIFY\b\s*[:=]\s*["']?(?:1|true)\b|\bPYTHONHTTPSVERIFY\s*[:=]\s*["']?0\b|\bCURLOPT_SSL_VERIFY(?:PEER|HOST)["']?\s*(?:,|=>)\s*(?:false|0)\b|--insecure-skip-tls-verify\b(?!=false)|--no-check-certificate\b|--no-verify-ssl\b|\bcurl\b[^|;&]*?\s(?:--insecure\b|-(?!-)[a-zA-Z]*k[a-zA-Z]*(?=\s|$))/i,
  },
  {
    reason: tlsDisabled,
    languages: null,
    pattern:
      /\bverify\s*=\s*False\b|\b(?:CERT_NONE|VERIFY_NONE|SSL_VERIFY_NONE)\b|\bcheck_hostname\s*=\s*False\b|\b_create_unverified_context\b|\b(?:InsecureTrustManagerFactory|NoopHostnameVerifier|TrustAllStrategy|TrustSelfSignedStrategy|AllowAllHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER|DangerousAcceptAnyServerCertificateValidator)\b|\bcheckServerTrusted\s*\([^)]*\)\s*(?:throws\s+[\w.]+(?:\s*,\s*[\w.]+)*\s*)?\{\s*\}|\b(?:[Hh]ostnameVerifier|ServerCertificateValidationCallback|ServerCertificateCustomValidationCallback)\b[^;]*?(?:->|=>)\s*true\b/,
  },
]

const rulesByLanguage = new Map<Language, readonly CodeRule[]>(
  (Object.keys(commentLine) as Language[]).map((language) => [
    language,
    language === "docs" || language === "sql"
      ? []
      : codeRules.filter((rule) => rule.languages === null || rule.languages.includes(language)),
  ]),
)

// Lines are scanned up to this length: the patterns stay linear, and real code lines are shorter.
const scanLimit = 2000
// An added line continued on the next one (`"… WHERE id = " +` / `  + id`) is scanned as one.
const continuedLine = /(?:[+%\\]|[^.]\.)\s*$/
const continuingLine = /^\s*(?:[+%]|\.(?!\.))/

/** The code patterns an added line of the file shows, each named once, in the order first seen. */
function riskyCode(file: DiffFile): string[] {
  const language = languageOf(file.path)
  const rules = rulesByLanguage.get(language) ?? []
  if (rules.length === 0) return []
  const comment = commentLine[language]
  const found = new Set<string>()
  const scan = (text: string) => {
    let sql: boolean | null = null
    for (const rule of rules) {
      if (found.has(rule.reason)) continue
      if (rule.sql && !(sql ??= sqlShape.test(text))) continue
      if (rule.pattern.test(text) && !rule.unless?.test(text)) found.add(rule.reason)
    }
  }
  for (const hunk of file.hunks) {
    const template: Template | null =
      language === "js" ? { open: false, tagged: false, sql: false, built: false } : null
    let pending: string | null = null
    for (const line of hunk.lines) {
      if (line.kind === "remove") continue
      const text = line.text.length > scanLimit ? line.text.slice(0, scanLimit) : line.text
      // Inside a template literal a leading `*` or `//` is text, not a comment.
      const isComment = !template?.open && comment !== null && comment.test(text)
      if (template && !isComment && readTemplates(text, line.kind === "add", template)) found.add(sqlInterpolation)
      if (line.kind === "context" || isComment) {
        if (pending !== null) scan(pending)
        pending = null
        continue
      }
      if (
        pending !== null &&
        pending.length < scanLimit &&
        (continuedLine.test(pending) || continuingLine.test(text))
      ) {
        pending = `${pending} ${text}`
        continue
      }
      if (pending !== null) scan(pending)
      pending = text
    }
    if (pending !== null) scan(pending)
    if (template?.open && !template.tagged && template.sql && template.built) found.add(sqlInterpolation)
  }
  return [...found]
}

// A JS template literal followed across the lines of a hunk (added and context lines, in order): SQL
// with `${…}` in an untagged template is built by interpolation; in a tagged one (sql`…`,
// Prisma.sql`…`) the tag makes the values parameters.
interface Template {
  open: boolean
  tagged: boolean
  sql: boolean
  /** A `${…}` on an added line of this template. */
  built: boolean
}

function readTemplates(text: string, added: boolean, state: Template): boolean {
  let hit = false
  let start = 0
  for (;;) {
    let tick = text.indexOf("`", start)
    while (tick > 0 && text[tick - 1] === "\\") tick = text.indexOf("`", tick + 1)
    if (state.open && !state.tagged) {
      const segment = text.slice(start, tick === -1 ? text.length : tick)
      if (!state.sql && sqlShape.test(segment)) state.sql = true
      if (added && segment.includes("${")) state.built = true
    }
    if (tick === -1) return hit
    if (state.open) {
      hit ||= !state.tagged && state.sql && state.built
      state.open = false
    } else {
      state.open = true
      state.tagged = taggedAt(text, tick)
      state.sql = false
      state.built = false
    }
    start = tick + 1
  }
}

const identifierChar = /[\w$]/
const templateKeywords = new Set(["return", "await", "yield", "case", "typeof", "void", "in", "of", "else", "throw"])

// Whether the backtick at `tick` opens a tagged template: an identifier (not a keyword), a call or
// type arguments (`sql<Row>`) right before it.
function taggedAt(text: string, tick: number): boolean {
  let end = tick
  while (end > 0 && (text[end - 1] === " " || text[end - 1] === "\t")) end--
  if (end === 0) return false
  const before = text[end - 1]!
  if (before === ">") return text[end - 2] !== "="
  if (before === ")") return true
  if (!identifierChar.test(before)) return false
  let begin = end - 1
  while (begin > 0 && identifierChar.test(text[begin - 1]!)) begin--
  return !templateKeywords.has(text.slice(begin, end))
}
