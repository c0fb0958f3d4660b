import type { Finding } from "@opencode-reviewer/core"
import { type ScannedFile, type ScannedLine, scanMarkdown } from "./markdown"

// Deterministic AGENTS.md checks (docs/design-numbers.md#agentsmd-reviewer): generic filler, files
// over 200 lines, tools named with no runnable command. Pure functions over a file's text. Each
// check is tuned to miss rather than to accuse: a false finding on a good file costs more than a miss.

/** The category every finding of this package carries. */
export const category = "agents-md"

/** Past this many lines a file gets a length finding, anchored on the first line beyond it. */
export const maxLines = 200

/** Runs every check on one AGENTS.md / CLAUDE.md and returns its findings ordered by line. */
export function checkAgentsMd(path: string, text: string): Finding[] {
  const scanned = scanMarkdown(text)
  return [checkFiller(path, scanned), checkTools(path, scanned), checkLength(path, scanned)]
    .flatMap((finding) => (finding ? [finding] : []))
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0))
}

// ---------------------------------------------------------------------------------------------
// Generic filler

/** A phrase an agent cannot act on. The patterns run on prose with quotes and code removed. */
interface FillerPhrase {
  label: string
  pattern: RegExp
  /** Most words of their own the rest of the sentence may carry (default 4) before it counts as saying something. */
  extra?: number
}

const adjectives =
  "clean|good|quality|high[- ]quality|readable|maintainable|nice|beautiful|elegant|proper|efficient|idiomatic|robust|well[- ]structured|well[- ]written|testable|modular|scalable"

/** The curated list; each entry is covered by a test that it fires and one that it stays quiet. */
export const fillerPhrases: readonly FillerPhrase[] = [
  { label: "write clean code", pattern: new RegExp(`\\bwrite (?:(?:${adjectives})(?:,|,? and|,? or)? )+code\\b`, "i") },
  {
    label: "follow best practices",
    pattern:
      /\b(?:follow|use|apply|stick to|adhere to|respect)(?: the| all)?(?: industry| coding| general| common| standard| established| modern)? best practices\b/i,
  },
  {
    label: "keep it simple",
    pattern: /\bkeep (?:it|things|the code|code|everything) (?:simple|clean|readable|tidy|dry|maintainable|short)\b/i,
  },
  {
    label: "follow SOLID/DRY/KISS",
    pattern:
      /\b(?:follow|apply|respect|adhere to|use)(?: the)? (?:solid|dry|kiss|yagni|clean code)(?:(?:,| and|,? or) (?:solid|dry|kiss|yagni))* principles?\b/i,
  },
  {
    label: "be careful with …",
    pattern:
      /\bbe (?:very |extra )?(?:careful|mindful|cautious|thoughtful|aware)(?: (?:with|about|of|when it comes to|regarding))? (?:security|performance|edge cases|errors|error handling|changes|what you change|side effects|breaking changes)\b/i,
  },
  {
    label: "make sure tests pass",
    pattern:
      /\b(?:make sure|ensure|check|verify)(?: that)?(?: all| the)? (?:tests|unit tests|the test suite|everything|the build|ci|the pipeline|all checks)(?: still)? (?:pass(?:es)?|work(?:s)?|(?:is |are )?green|succeed(?:s)?|build(?:s)?)\b/i,
  },
  {
    label: "write good tests",
    pattern:
      /\b(?:write|add) (?:good|proper|comprehensive|thorough|adequate|sufficient|enough|meaningful|quality) (?:unit )?tests\b/i,
  },
  {
    label: "use meaningful names",
    pattern:
      /\b(?:use|choose|pick|give)(?: \w+)? (?:meaningful|descriptive|good|clear|sensible|proper|self-explanatory) (?:variable |function |class )?names\b/i,
  },
  {
    label: "comment where necessary",
    pattern:
      /\b(?:add|write|include|use) comments (?:where|when|if) (?:necessary|needed|appropriate|it makes sense|useful)\b/i,
  },
  {
    label: "handle errors properly",
    pattern: /\bhandle (?:all )?errors (?:properly|appropriately|gracefully|correctly|carefully|well)\b/i,
  },
  {
    label: "think about performance",
    pattern: /\b(?:think|care) about (?:performance|security|maintainability|scalability|edge cases|readability)\b/i,
  },
  { label: "use common sense", pattern: /\buse (?:common sense|your (?:best )?judge?ment|good judge?ment)\b/i },
  {
    label: "avoid bugs",
    pattern:
      /\b(?:avoid|don't write|do not write|don't introduce|do not introduce|never introduce) (?:bugs|bad code|code smells|technical debt|spaghetti code)\b/i,
  },
  { label: "be consistent", pattern: /\b(?:be|stay) consistent\b/i },
  { label: "document your code", pattern: /\bdocument (?:your|the|all) code\b/i },
  {
    label: "code should be clean",
    pattern:
      /\b(?:code|everything|all code) (?:should|must) be (?:clean|readable|maintainable|well[- ]tested|high[- ]quality|of high quality|simple)\b/i,
  },
  // Often one step of a longer process ("fork the repo, develop and test your changes"): alone only.
  {
    label: "test your code",
    pattern: /\btest (?:your|all|the) (?:code|changes)(?: thoroughly| properly| well)?\b/i,
    extra: 1,
  },
]

// Words that carry no instruction of their own around a filler phrase.
const emptyWords = new Set(
  "a an the and or but so to of in on at by for as is are be been it its this that these those you your we our us all any every each always never please try sure make ensure should must will would can could do does don't not also just very really well properly code codebase project repo repository changes change things stuff possible times when whenever before after while and/or etc".split(
    " ",
  ),
)

// A phrase followed by one of these and some words is explained, not filler ("keep it simple: no
// new dependencies without an issue").
const elaboration =
  /^\s*(?::|—|–|-\s|\(|;|,? (?:e\.g\.|i\.e\.|for example|such as|like|by|using|via|with|through|see|per|as (?:described|documented|defined)|according to))/i

/** Whether one line is generic filler, and which phrase made it so (null when it is not). */
export function fillerPhraseOf(line: ScannedLine): string | null {
  if (line.code || line.heading > 0 || line.prose.trim() === "") return null
  // A line with code, a path, a file name or a link says something concrete.
  if (
    line.prose !== line.text ||
    /[\w.-]+\/[\w.-]+|\b[\w-]+\.(?:md|json|ya?ml|toml|ts|js|py|go|rs|sh|txt)\b/.test(line.prose)
  )
    return null
  const text = unquoted(line.prose).replace(/[*_]{1,3}/g, "")
  for (const sentence of text.split(/(?<=[.!?])\s+|\s*;\s*/)) {
    for (const phrase of fillerPhrases) {
      const match = phrase.pattern.exec(sentence)
      if (!match) continue
      const after = sentence.slice(match.index + match[0].length)
      if (elaboration.test(after) && contentWords(after).length >= 2) continue
      const remainder = contentWords(sentence.slice(0, match.index) + " " + after)
      if (remainder.length <= (phrase.extra ?? 4)) return phrase.label
    }
  }
  return null
}

function contentWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/^\s*(?:[-*+]|\d{1,9}[.)])\s+/, "")
    .split(/[^a-z0-9'+#-]+/)
    .filter((word) => word !== "" && !emptyWords.has(word) && !/^[-']+$/.test(word))
}

// Quoted text is a mention ("avoid rules like 'write clean code'"), not a rule.
function unquoted(text: string): string {
  return text.replace(/"[^"]*"|“[^”]*”|‘[^’]*’|«[^»]*»/g, (match) => " ".repeat(match.length))
}

function checkFiller(path: string, scanned: ScannedFile): Finding | null {
  const hits = scanned.lines.flatMap((line) => {
    const label = fillerPhraseOf(line)
    return label === null ? [] : [{ line, label }]
  })
  if (hits.length === 0) return null
  const [first, ...others] = hits
  const quote = (line: ScannedLine) => `"${clip(line.text.trim().replace(/^(?:[-*+]|\d{1,9}[.)])\s+/, ""), 100)}"`
  const body = [
    `Line ${first!.line.number} (${quote(first!.line)}) is generic advice an agent cannot act on: it costs context on every task and changes nothing it does.`,
    others.length > 0
      ? `The same goes for:\n${others.map(({ line }) => `- line ${line.number}: ${quote(line)}`).join("\n")}`
      : "",
    `Replace ${hits.length === 1 ? "it" : "each"} with the concrete rule behind it (the command to run, the path or pattern to follow, what is forbidden) or delete it.`,
  ]
    .filter(Boolean)
    .join("\n\n")
  return {
    severity: "suggestion",
    file: path,
    line: first!.line.number,
    category,
    title:
      hits.length === 1
        ? "Generic filler an agent cannot act on"
        : `Generic filler an agent cannot act on (${hits.length} lines)`,
    body,
  }
}

// ---------------------------------------------------------------------------------------------
// Length

function checkLength(path: string, scanned: ScannedFile): Finding | null {
  const count = scanned.lines.length
  if (count <= maxLines) return null
  const sections = largestSections(scanned)
  const body = [
    `This file is ${count} lines long; past ${maxLines} lines agents skim it and the rules that matter get lost.`,
    sections.length > 0
      ? `Largest sections: ${sections.map(({ title, line, size }) => `"${clip(title, 60)}" (${size} lines from line ${line})`).join(", ")}.`
      : "",
    "Keep the root file to commands, layout and the rules that bite; move area-specific detail into nested AGENTS.md files next to the code it covers, and link to longer documents instead of copying them.",
  ]
    .filter(Boolean)
    .join(" ")
  return {
    severity: "suggestion",
    file: path,
    line: maxLines + 1,
    category,
    title: `AGENTS.md is ${count} lines long (over ${maxLines})`,
    body,
  }
}

function largestSections(scanned: ScannedFile): { title: string; line: number; size: number }[] {
  const headings = scanned.lines.filter((line) => line.heading > 0)
  return (
    headings
      .map((line, index) => ({
        title: line.text.replace(/^\s*#+\s*/, "").replace(/\s*#+\s*$/, ""),
        level: line.heading,
        line: line.number,
        // A section runs to the next heading of its own level or above, subsections included.
        size:
          (headings.slice(index + 1).find((next) => next.heading <= line.heading)?.number ?? scanned.lines.length + 1) -
          line.number,
      }))
      // The title heading spans the whole file and says nothing about where the bulk is.
      .filter(({ size, level }) => size >= 20 && level > 1)
      .sort((a, b) => b.size - a.size || a.line - b.line)
      .slice(0, 3)
  )
}

// ---------------------------------------------------------------------------------------------
// Tools named with no runnable command

type Role = "test" | "lint" | "format" | "typecheck" | "build" | "tasks"

/** A tool an AGENTS.md may name, how prose names it, and what in a command runs it. */
interface Tool {
  name: string
  mention: RegExp
  /** A command running the tool itself. */
  runs: RegExp
  /** Script names that obviously wrap it (`npm test` for Jest). */
  roles: readonly Role[]
}

const packageScript = /\b(?:npm|pnpm|yarn|bun|bunx|npx)\b|\bmake\b|\bjust\b|\btask\b/
const roleScripts: Record<Exclude<Role, "tasks">, RegExp> = {
  test: /\b(?:test|tests|e2e|spec)(?::[\w-]+)?\b/,
  lint: /\b(?:lint|check)(?::[\w-]+)?\b/,
  format: /\b(?:format|fmt|lint|check)(?::[\w-]+)?\b/,
  typecheck: /\b(?:typecheck|type-check|types|check|build)(?::[\w-]+)?\b/,
  build: /\bbuild(?::[\w-]+)?\b/,
}

// Package managers are named in passing ("published to npm") far more often than as the tool to
// use; only a phrase that says the project uses one counts as naming it.
const managerUse = (name: string) =>
  new RegExp(
    `\\b(?:(?:use|uses|using|with|via|through|runs? (?:on|with)|managed (?:by|with)|installed? (?:with|using|via))\\s+${name}\\b|${name}\\s+(?:workspaces?|scripts?|monorepo)\\b)`,
    "i",
  )

/** The tools the check knows; anything else is left to the model reviewer. */
export const tools: readonly Tool[] = [
  { name: "Vitest", mention: /\bvitest\b/i, runs: /\bvitest\b/i, roles: ["test"] },
  { name: "Jest", mention: /\bjest\b/i, runs: /\bjest\b/i, roles: ["test"] },
  { name: "Mocha", mention: /\bmocha\b/i, runs: /\bmocha\b/i, roles: ["test"] },
  { name: "pytest", mention: /\bpytest\b/i, runs: /\bpytest\b|\btox\b|\bnox\b/i, roles: ["test"] },
  { name: "Playwright", mention: /\bplaywright\b/i, runs: /\bplaywright\b/i, roles: ["test"] },
  { name: "Cypress", mention: /\bcypress\b/i, runs: /\bcypress\b/i, roles: ["test"] },
  { name: "ESLint", mention: /\beslint\b/i, runs: /\beslint\b/i, roles: ["lint"] },
  { name: "Prettier", mention: /\bprettier\b/i, runs: /\bprettier\b/i, roles: ["format"] },
  { name: "Biome", mention: /\bbiome\b/i, runs: /\bbiome\b/i, roles: ["lint", "format"] },
  { name: "Ruff", mention: /\bruff\b/i, runs: /\bruff\b/i, roles: ["lint", "format"] },
  { name: "mypy", mention: /\bmypy\b/i, runs: /\bmypy\b/i, roles: ["typecheck", "lint"] },
  { name: "golangci-lint", mention: /\bgolangci-lint\b/i, runs: /\bgolangci-lint\b/i, roles: ["lint"] },
  { name: "tsc", mention: /\btsc\b/, runs: /\btsc\b/, roles: ["typecheck"] },
  { name: "Cargo", mention: /\bcargo\b/i, runs: /\bcargo\b/i, roles: [] },
  { name: "Gradle", mention: /\bgradle\b/i, runs: /\bgradlew?\b/i, roles: [] },
  { name: "Maven", mention: /\bmaven\b/i, runs: /\bmvnw?\b/i, roles: [] },
  { name: "Make", mention: /\b(?:makefile|gnu make|make targets?)\b/i, runs: /(?:^|[\s;&|(])make\b/i, roles: [] },
  { name: "just", mention: /\bjustfile\b/i, runs: /(?:^|[\s;&|(])just\b/i, roles: [] },
  {
    name: "Docker Compose",
    mention: /\bdocker[ -]compose\b/i,
    runs: /\bdocker[ -]compose\b|\bcompose (?:up|run|exec)\b/i,
    roles: [],
  },
  { name: "Turborepo", mention: /\bturbo(?:repo)?\b/i, runs: /\bturbo\b/i, roles: ["tasks"] },
  { name: "Nx", mention: /\bnx\b/i, runs: /\bnx\b/i, roles: ["tasks"] },
  { name: "Bazel", mention: /\bbazel\b/i, runs: /\bbazel(?:isk)?\b/i, roles: [] },
  { name: "Poetry", mention: /\bpoetry\b/i, runs: /\bpoetry\b/i, roles: [] },
  { name: "npm", mention: managerUse("npm"), runs: /\bnpm\b|\bnpx\b/, roles: [] },
  { name: "pnpm", mention: managerUse("pnpm"), runs: /\bpnpm\b/, roles: [] },
  { name: "Yarn", mention: managerUse("yarn"), runs: /\byarn\b/, roles: [] },
  { name: "Bun", mention: managerUse("bun"), runs: /\bbunx?\b/, roles: [] },
]

// A clause that rules a tool out ("we no longer use Jest") does not ask anyone to run it.
const negation =
  /\b(?:not|never|no longer|don't|do not|doesn't|does not|instead of|rather than|replaced|removed|avoid|migrated (?:away )?from|moved (?:away )?from|deprecated|dropped)\b/i

/** Whether the file runs the tool somewhere: directly, or through a script whose name says so. */
function runsSomewhere(tool: Tool, commands: readonly string[]): boolean {
  return commands.some((command) => {
    if (tool.runs.test(command)) return true
    if (!packageScript.test(command)) return false
    return tool.roles.some((role) => role === "tasks" || roleScripts[role].test(command))
  })
}

function checkTools(path: string, scanned: ScannedFile): Finding | null {
  const missing: { tool: Tool; line: ScannedLine }[] = []
  for (const tool of tools) {
    if (runsSomewhere(tool, scanned.commands)) continue
    const line = scanned.lines.find((candidate) => namesWithoutCommand(tool, candidate, scanned))
    if (line) missing.push({ tool, line })
  }
  if (missing.length === 0) return null
  missing.sort((a, b) => a.line.number - b.line.number)
  const first = missing[0]!
  const names = missing.map(({ tool }) => tool.name)
  const body = [
    `${listNames(names)} ${names.length === 1 ? "is" : "are"} named but the file never shows how to run ${names.length === 1 ? "it" : "them"}, so an agent has to guess (and often guesses wrong).`,
    missing.length > 1
      ? missing.map(({ tool, line }) => `- ${tool.name}: first named on line ${line.number}`).join("\n")
      : "",
    "Give the exact command in a code span or block, as the project runs it (for example the package.json script or Makefile target), e.g. `npm test` or `make lint`.",
  ]
    .filter(Boolean)
    .join("\n\n")
  return {
    severity: "suggestion",
    file: path,
    line: first.line.number,
    category,
    title:
      names.length === 1
        ? `${names[0]} named with no command to run it`
        : `Tools named with no command to run them: ${listNames(names)}`,
    body,
  }
}

function namesWithoutCommand(tool: Tool, line: ScannedLine, scanned: ScannedFile): boolean {
  if (line.code || line.comment || line.prose.trim() === "") return false
  const clauses = unquoted(line.prose).split(/(?<=[.!?;])\s+/)
  if (!clauses.some((clause) => tool.mention.test(clause) && !negation.test(clause))) return false
  // A command right beside the name (same paragraph or list item, or the section under a heading) runs it.
  if (line.heading > 0) return !scanned.sectionHasCode[line.section]
  return !(line.block >= 0 && scanned.blockHasCode[line.block])
}

function listNames(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
