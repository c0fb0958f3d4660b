import { readFileSync } from "node:fs"
import { describe, expect, test } from "vitest"
import { checkAgentsMd, fillerPhraseOf, fillerPhrases } from "./checks"
import { scanMarkdown } from "./markdown"

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8")
const lineOf = (text: string) => scanMarkdown(text).lines[0]!
const filler = (text: string) => fillerPhraseOf(lineOf(text))
const shape = (findings: ReturnType<typeof checkAgentsMd>) =>
  findings.map(({ file, line, severity, category, title }) => ({ file, line, severity, category, title }))

describe("checkAgentsMd on real files", () => {
  test("this repository's own AGENTS.md (concise, every tool with its command) has no findings", () => {
    expect(checkAgentsMd("AGENTS.md", fixture("good.md"))).toEqual([])
  })

  test("a file with its commands in code blocks and concrete rules has no findings", () => {
    expect(checkAgentsMd("AGENTS.md", fixture("commands.md"))).toEqual([])
  })

  test("the shipped template is an example of what the checks reward", () => {
    const template = readFileSync(new URL("../../../templates/AGENTS.md.template", import.meta.url), "utf8")
    expect(checkAgentsMd("AGENTS.md", template)).toEqual([])
  })

  test("a filler-heavy file: one suggestion on the first filler line, the other seven listed", () => {
    const findings = checkAgentsMd("AGENTS.md", fixture("filler.md"))
    expect(shape(findings)).toEqual([
      {
        file: "AGENTS.md",
        line: 7,
        severity: "suggestion",
        category: "agents-md",
        title: "Generic filler an agent cannot act on (8 lines)",
      },
    ])
    const body = findings[0]!.body
    expect([...body.matchAll(/^- line (\d+):/gm)].map((match) => Number(match[1]))).toEqual([8, 9, 10, 11, 12, 15, 25])
    expect(body).toContain('Line 7 ("Write clean, maintainable code.")')
    // Concrete lines that share words with filler are not listed.
    expect(body).not.toMatch(/line (13|14|21):/)
  })

  test("a 260-line file: one suggestion at line 201 naming its length and its biggest sections", () => {
    const findings = checkAgentsMd("AGENTS.md", fixture("long.md"))
    expect(shape(findings)).toEqual([
      {
        file: "AGENTS.md",
        line: 201,
        severity: "suggestion",
        category: "agents-md",
        title: "AGENTS.md is 260 lines long (over 200)",
      },
    ])
    expect(findings[0]!.body).toContain("This file is 260 lines long")
    expect(findings[0]!.body).toContain('"Services" (184 lines from line 14), "Rules" (54 lines from line 203)')
    expect(findings[0]!.body).toContain("nested AGENTS.md")
  })

  test("tools named without commands: one suggestion at the first mention listing each tool", () => {
    const findings = checkAgentsMd("AGENTS.md", fixture("tools.md"))
    expect(shape(findings)).toEqual([
      {
        file: "AGENTS.md",
        line: 7,
        severity: "suggestion",
        category: "agents-md",
        title: "Tools named with no command to run them: Vitest, Playwright, ESLint, Prettier, Turborepo and pnpm",
      },
    ])
    expect(
      [...findings[0]!.body.matchAll(/^- (.+): first named on line (\d+)$/gm)].map(
        (match) => `${match[1]}@${match[2]}`,
      ),
    ).toEqual(["Vitest@7", "Playwright@7", "ESLint@8", "Prettier@8", "Turborepo@9", "pnpm@9"])
    // In a link (Storybook, Biome), ruled out (Jest), or a heading over its command block (Docker Compose): not named.
    expect(findings[0]!.body).not.toMatch(/Biome|Jest|Docker Compose|Storybook/)
  })

  test("a nested AGENTS.md keeps its own path and gets one finding per problem", () => {
    const path = "packages/api/AGENTS.md"
    expect(shape(checkAgentsMd(path, fixture("nested/packages/api/AGENTS.md")))).toEqual([
      {
        file: path,
        line: 15,
        severity: "suggestion",
        category: "agents-md",
        title: "mypy named with no command to run it",
      },
      {
        file: path,
        line: 16,
        severity: "suggestion",
        category: "agents-md",
        title: "Generic filler an agent cannot act on",
      },
    ])
  })
})

describe("generic filler", () => {
  test.each([
    ["- Write clean code.", "write clean code"],
    ["Always write readable, maintainable code", "write clean code"],
    ["* Follow industry best practices.", "follow best practices"],
    ["1. Keep things simple", "keep it simple"],
    ["Follow SOLID and DRY principles.", "follow SOLID/DRY/KISS"],
    ["- Be mindful of performance", "be careful with …"],
    ["- Ensure all tests pass before opening a merge request.", "make sure tests pass"],
    ["Write comprehensive tests.", "write good tests"],
    ["Use descriptive variable names.", "use meaningful names"],
    ["Add comments where necessary.", "comment where necessary"],
    ["Handle errors gracefully.", "handle errors properly"],
    ["Think about edge cases.", "think about performance"],
    ["Use your best judgement.", "use common sense"],
    ["Avoid technical debt.", "avoid bugs"],
    ["Be consistent.", "be consistent"],
    ["Document your code.", "document your code"],
    ["Code should be clean and readable.", "code should be clean"],
    ["Test your changes thoroughly.", "test your code"],
    ["**Keep it simple.**", "keep it simple"],
  ])("%s is filler", (line, label) => {
    expect(filler(line)).toBe(label)
  })

  test("every phrase of the list is exercised above", () => {
    const covered = new Set(
      [
        "Write clean code.",
        "Follow best practices.",
        "Keep it simple.",
        "Follow SOLID principles.",
        "Be careful with security.",
        "Make sure tests pass.",
        "Write good tests.",
        "Use meaningful names.",
        "Add comments where needed.",
        "Handle errors properly.",
        "Think about performance.",
        "Use common sense.",
        "Avoid bugs.",
        "Be consistent.",
        "Document your code.",
        "Code should be clean.",
        "Test your code.",
      ].map(filler),
    )
    expect([...covered].sort()).toEqual(fillerPhrases.map((phrase) => phrase.label).sort())
  })

  test.each([
    "- Run `bun run lint` before pushing.",
    "Make sure `pnpm test` passes before pushing.",
    "Keep it simple: one handler per route, no base classes.",
    "Be careful with security: tokens come only from the environment, never from files.",
    "Follow the best practices in docs/style.md.",
    "Follow [our best practices](https://example.com/guide).",
    "Write clean code by running the formatter on save, as configured in .editorconfig.",
    'Avoid vague rules like "write clean code" in this file.',
    "## Keep it simple",
    "Handle errors with the `Result` type from `src/result.ts`.",
    "Keep the code under src/legacy as it is; it is frozen until the migration lands in March.",
    "Tests must pass on both Node 20 and Node 22, the versions the CI matrix runs.",
    "Use descriptive names for migrations, prefixed with the ticket number and a timestamp like the existing ones.",
    "1. Fork the desired repo, develop and test your code changes.",
  ])("%s is not filler", (line) => {
    expect(filler(line)).toBeNull()
  })

  test("lines inside code blocks and HTML comments are never filler", () => {
    const text = "# x\n\n```md\n- Write clean code.\n```\n\n<!--\nFollow best practices.\n-->\n"
    expect(checkAgentsMd("AGENTS.md", text)).toEqual([])
  })
})

describe("length", () => {
  const lines = (count: number) =>
    Array.from({ length: count }, (_, index) => `- rule ${index + 1}: run \`make step${index + 1}\``).join("\n") + "\n"

  test("200 lines pass; 201 lines get one finding at line 201", () => {
    expect(checkAgentsMd("AGENTS.md", lines(200))).toEqual([])
    expect(shape(checkAgentsMd("AGENTS.md", lines(201)))).toEqual([
      {
        file: "AGENTS.md",
        line: 201,
        severity: "suggestion",
        category: "agents-md",
        title: "AGENTS.md is 201 lines long (over 200)",
      },
    ])
  })

  test("CRLF line ends and a missing final newline count the same", () => {
    expect(checkAgentsMd("AGENTS.md", lines(200).replace(/\n/g, "\r\n"))).toEqual([])
    expect(checkAgentsMd("AGENTS.md", lines(200).trimEnd())).toEqual([])
  })
})

describe("tools without commands", () => {
  const tools = (text: string) => checkAgentsMd("AGENTS.md", text).filter((finding) => finding.title.includes("named"))

  test("a script that obviously wraps the tool counts as its command", () => {
    expect(tools("Unit tests use Jest.\n\n## Commands\n\n- `npm test`\n")).toEqual([])
    expect(tools("We lint with ESLint and format with Prettier.\n\nRun `pnpm lint` and `pnpm format`.\n")).toEqual([])
    expect(tools("Type errors are caught by tsc.\n\n`bun run typecheck`\n")).toEqual([])
  })

  test("a command in the same paragraph or list item covers a name the script does not spell", () => {
    expect(tools("- Lint: ESLint via `yarn verify`.\n")).toEqual([])
    expect(tools("- Lint: ESLint.\n- Verify: `yarn verify`.\n")).toHaveLength(1)
  })

  test("a test wrapper does not cover a linter", () => {
    const found = tools("We use Vitest and ESLint.\n\n`npm test`\n")
    expect(found.map((finding) => finding.title)).toEqual(["ESLint named with no command to run it"])
    expect(found[0]!.line).toBe(1)
  })

  test("package managers count only when the file says the project uses one", () => {
    expect(tools("The library is published to npm under @acme/ui.\n")).toEqual([])
    expect(tools("Dependencies are installed with pnpm.\n").map((finding) => finding.title)).toEqual([
      "pnpm named with no command to run it",
    ])
    expect(tools("Dependencies are installed with pnpm.\n\n`npm ci`\n").map((finding) => finding.title)).toEqual([
      "pnpm named with no command to run it",
    ])
  })

  test("a heading names a tool only when its section has no command", () => {
    expect(tools("## Testing with Vitest\n\n```sh\nnpm run unit\n```\n")).toEqual([])
    expect(tools("## Testing with Vitest\n\nThe suite is fast.\n").map((finding) => finding.line)).toEqual([1])
  })

  test("names in code spans, links, URLs and quotes are not prose", () => {
    expect(tools('See https://vitest.dev and [Jest](https://jestjs.io); the old "mocha" setup is gone.\n')).toEqual([])
  })
})
