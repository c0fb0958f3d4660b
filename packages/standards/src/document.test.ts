import { describe, expect, test } from "vitest"
import { normalizeGlob, parseStandards } from "./document"

const timeouts = `---
id: ENG-014
title: Timeouts on outbound calls
paths:
  - src/clients/
  - "*.go"
status: accepted
---
# Outbound calls

1. Every outbound HTTP call MUST set a timeout of at most 10 seconds.
2. Retries SHOULD use exponential backoff.
`

describe("parseStandards", () => {
  test("front matter gives id, title, path globs and keeps the body without the front matter", () => {
    const parsed = parseStandards(timeouts, "docs/standards/timeouts.md", "timeouts.md")
    expect(parsed.warnings).toEqual([])
    expect(parsed.standards).toEqual([
      {
        id: "ENG-014",
        title: "Timeouts on outbound calls",
        paths: ["src/clients/**", "**/*.go"],
        body: "# Outbound calls\n\n1. Every outbound HTTP call MUST set a timeout of at most 10 seconds.\n2. Retries SHOULD use exponential backoff.",
        source: "docs/standards/timeouts.md",
      },
    ])
  })

  test("without front matter the id and title come from the first heading", () => {
    const text =
      "# ENG-021: Request ids in logs\r\n\r\nEvery log line of a request handler MUST carry the request id.\r\n"
    const [standard] = parseStandards(text, "x/logging.md", "logging.md").standards
    expect(standard).toMatchObject({ id: "ENG-021", title: "Request ids in logs", paths: [] })
    expect(standard!.body).toBe(
      "# ENG-021: Request ids in logs\n\nEvery log line of a request handler MUST carry the request id.",
    )
  })

  test("a document with several id headings at one level holds several standards; code blocks and sub-headings do not split it", () => {
    const text = [
      "# Platform standards",
      "Read these before shipping.",
      "",
      "## SEC-1 — Secrets come from the secret manager",
      "Secrets MUST NOT be read from files in the repository.",
      "```md",
      "## SEC-99 this is an example inside a fence",
      "```",
      "### SEC-1.1 Rotation",
      "Rotation SHOULD be automatic.",
      "## SEC-2: No shell from request input",
      "Commands MUST NOT be built from request input.",
    ].join("\n")
    const parsed = parseStandards(text, "https://standards.example/platform.md", "platform.md")
    expect(parsed.standards.map(({ id, title }) => ({ id, title }))).toEqual([
      { id: "SEC-1", title: "Secrets come from the secret manager" },
      { id: "SEC-2", title: "No shell from request input" },
    ])
    expect(parsed.standards[0]!.body).toContain("## SEC-99 this is an example inside a fence")
    expect(parsed.standards[0]!.body).toContain("### SEC-1.1 Rotation")
    expect(parsed.standards[0]!.body).not.toContain("Read these before shipping")
    expect(parsed.standards[1]!.body).toBe(
      "## SEC-2: No shell from request input\nCommands MUST NOT be built from request input.",
    )
  })

  test("the file name gives the id when the document has none: silently when it is id-shaped, with a warning otherwise", () => {
    const named = parseStandards("# Structured logging\n\nUse JSON.\n", "std/eng-007-logging.md", "eng-007-logging.md")
    expect(named.standards[0]).toMatchObject({ id: "ENG-007", title: "Structured logging" })
    expect(named.warnings).toEqual([])

    const unnamed = parseStandards(
      "Write migrations that can be rolled back.\n",
      "std/db migrations.md",
      "db migrations.md",
    )
    expect(unnamed.standards[0]).toMatchObject({ id: "DB-MIGRATIONS", title: "DB-MIGRATIONS" })
    expect(unnamed.warnings).toEqual([
      'std/db migrations.md: no id in front matter or in a heading; using "DB-MIGRATIONS" from the file name',
    ])
  })

  test("withdrawn, superseded and draft documents are skipped, with the status kept for the logs", () => {
    for (const status of ["withdrawn", "Superseded by ENG-020", "DRAFT"]) {
      const parsed = parseStandards(`---\nstatus: ${status}\n---\n# ENG-003: Old rule\n`, "s.md", "s.md")
      expect(parsed.standards).toEqual([])
      expect(parsed.skipped).toEqual([{ id: "ENG-003", status, source: "s.md" }])
    }
    expect(parseStandards("---\nstatus: accepted\n---\n# ENG-003: Rule\n", "s.md", "s.md").standards).toHaveLength(1)
  })

  test("scope entries that read like prose are dropped with a warning instead of matching nothing", () => {
    const parsed = parseStandards('---\nid: API-1\nscope: [HTTP services, "api/**"]\n---\nText\n', "a.md", "a.md")
    expect(parsed.standards[0]!.paths).toEqual(["api/**"])
    expect(parsed.warnings).toEqual(['a.md: scope entry "HTTP services" reads like prose, not a path glob; ignored'])
  })

  test("broken front matter and unusable ids are warned about, and the heading still gives the id", () => {
    const broken = parseStandards("---\nid: [unclosed\n---\n# ENG-5: Still here\n", "b.md", "b.md")
    expect(broken.standards[0]).toMatchObject({ id: "ENG-5", title: "Still here" })
    expect(broken.warnings).toEqual([expect.stringMatching(/^b\.md: front matter is not valid YAML/)])

    const badId = parseStandards('---\nid: "../../etc/passwd"\n---\n# ENG-6: Fine\n', "c.md", "c.md")
    expect(badId.standards[0]!.id).toBe("ENG-6")
    expect(badId.warnings).toEqual([expect.stringContaining("is not a usable id")])
  })

  test("a README without an id of its own is not a standard when an id is required", () => {
    expect(
      parseStandards("# Our standards\n\nHow to write one.\n", "docs/standards/README.md", "README.md", {
        idRequired: true,
      }),
    ).toEqual({ standards: [], skipped: [], warnings: [] })
    expect(
      parseStandards("# ENG-9: Readme rule\n", "README.md", "README.md", { idRequired: true }).standards[0]!.id,
    ).toBe("ENG-9")
  })

  test("globs: folders take everything below them, bare patterns match at any depth", () => {
    expect(normalizeGlob("./src/api/")).toBe("src/api/**")
    expect(normalizeGlob("/migrations/*.sql")).toBe("migrations/*.sql")
    expect(normalizeGlob("*.sql")).toBe("**/*.sql")
    expect(normalizeGlob("Dockerfile")).toBe("**/Dockerfile")
  })
})
