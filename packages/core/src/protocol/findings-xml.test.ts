import { describe, expect, test } from "vitest"
import type { Finding } from "../model/finding"
import { normalizeCategory } from "../model/finding"
import { parseFindings, parseReview, renderFindingsXml, renderReviewXml } from "./findings-xml"

const sql: Finding = {
  severity: "warning",
  file: "src/db.ts",
  line: 12,
  category: "security",
  title: "SQL built from request input",
  body: "The query concatenates `req.query.id`; use a parameterised query.",
}

const block = `<findings>
  <finding severity="warning" file="src/db.ts" line="12" category="security">
    <title>SQL built from request input</title>
    <body>The query concatenates \`req.query.id\`; use a parameterised query.</body>
  </finding>
</findings>`

function findings(text: string): Finding[] {
  const result = parseFindings(text)
  if (!result.ok) throw new Error(`expected findings, got error: ${result.error}`)
  return result.findings
}

function error(text: string): string {
  const result = parseFindings(text)
  if (result.ok) throw new Error(`expected an error, got ${JSON.stringify(result.findings)}`)
  return result.error
}

describe("parseFindings", () => {
  test("reads the documented block", () => {
    expect(findings(block)).toEqual([sql])
  })

  test.each([
    ["self-closing", "<findings/>"],
    ["self-closing with a space", "Nothing to report.\n<findings />"],
    ["empty pair", "<findings></findings>"],
    ["whitespace only", "<findings>\n  \n</findings>"],
  ])("an empty block means nothing to report: %s", (_name, text) => {
    expect(findings(text)).toEqual([])
  })

  test("ignores prose and fences around the block, and a trailing sentence", () => {
    const text = `I read diff/src__db.ts.patch.\n\n\`\`\`xml\n${block}\n\`\`\`\n\nThat is all I found.`
    expect(findings(text)).toEqual([sql])
  })

  test("uses the last block when the tag is mentioned earlier in prose", () => {
    const text = `I will end with a <findings> block as instructed; an empty <findings/> would mean nothing.\n\n${block}`
    expect(findings(text)).toEqual([sql])
  })

  test("a mention of the tag inside the real block's text does not break it", () => {
    const text = `<findings>
<finding severity="suggestion" file="prompts/security.md" line="3" category="documentation">
<title>Prompt does not say how to end</title>
<body>Tell the reviewer to end with one <findings> block.</body>
</finding>
</findings>`
    expect(findings(text)).toEqual([
      {
        severity: "suggestion",
        file: "prompts/security.md",
        line: 3,
        category: "documentation",
        title: "Prompt does not say how to end",
        body: "Tell the reviewer to end with one <findings> block.",
      },
    ])
  })

  test("a broken real block is not replaced by an earlier prose mention", () => {
    const text = `If clean I answer <findings/>.\n<findings><finding severity="high" file="a.ts" category="security"><title>x</title></finding></findings>`
    expect(error(text)).toBe('finding 1: severity "high" is not one of critical, warning, suggestion')
  })

  test("escapes a lone & and keeps entities and character references", () => {
    const text = `<findings><finding severity="suggestion" file="a&b.ts" line="" category="code-quality">
<title>Use &amp;&amp; &lt;not&gt; &#38; &#x3C;</title>
<body>a && b & c; &nbsp; stays</body></finding></findings>`
    const [finding] = findings(text)
    expect(finding).toMatchObject({
      file: "a&b.ts",
      line: null,
      title: "Use && <not> & <",
      body: "a && b & c; &nbsp; stays",
    })
  })

  test("decodes only once: an escaped reference stays literal", () => {
    const [finding] = findings(
      `<findings><finding severity="suggestion" file="a.ts" category="x"><title>&amp;lt;b&amp;gt;</title></finding></findings>`,
    )
    expect(finding!.title).toBe("&lt;b&gt;")
  })

  test("takes < inside title and body as text (generics, comparisons, HTML)", () => {
    const text = `<findings><finding severity="warning" file="src/list.ts" line="4" category="code-quality">
<title>Array<string> compared with a < b</title>
<body>Replace <div> with <section>; if (i < n) loops forever.</body>
</finding></findings>`
    const [finding] = findings(text)
    expect(finding!.title).toBe("Array<string> compared with a < b")
    expect(finding!.body).toBe("Replace <div> with <section>; if (i < n) loops forever.")
  })

  test("keeps CDATA content literally, in place", () => {
    const text = `<findings><finding severity="suggestion" file="a.ts" line="1" category="performance">
<title>t</title><body>Use <![CDATA[if (a < b && c) { x = "&amp;" }]]> here.</body></finding></findings>`
    expect(findings(text)[0]!.body).toBe('Use if (a < b && c) { x = "&amp;" } here.')
  })

  test("keeps line breaks inside the body and trims its ends", () => {
    const text = `<findings><finding severity="suggestion" file="a.ts" line="1" category="x"><title> t </title><body>
  first line
  second line
</body></finding></findings>`
    expect(findings(text)[0]!.body).toBe("first line\n  second line")
  })

  test("reads several findings in order, with case slips in severity and category", () => {
    const text = `<findings>
<finding severity="Critical" file="./src/a.ts" line="7" category="Code Quality"><title>A</title><body>a</body></finding>
<finding severity="suggestion" file="src/b.ts" category="agents_md"><title>B</title></finding>
<finding severity="warning" file="src/c.ts" line="9" category="accessibility"><title>C</title><body>c</body></finding>
</findings>`
    expect(findings(text)).toEqual([
      { severity: "critical", file: "src/a.ts", line: 7, category: "code-quality", title: "A", body: "a" },
      { severity: "suggestion", file: "src/b.ts", line: null, category: "agents-md", title: "B", body: "" },
      { severity: "warning", file: "src/c.ts", line: 9, category: "accessibility", title: "C", body: "c" },
    ])
  })

  test("accepts severity, file, line and category as child elements", () => {
    const text = `<findings><finding><severity>warning</severity><file>src/db.ts</file><line>12</line><category>security</category>
<title>SQL built from request input</title><body>The query concatenates \`req.query.id\`; use a parameterised query.</body></finding></findings>`
    expect(findings(text)).toEqual([sql])
  })

  test("uses the default category only when the finding names none", () => {
    const text = `<findings><finding severity="warning" file="a.ts" line="1"><title>t</title></finding>
<finding severity="warning" file="b.ts" line="2" category="security"><title>u</title></finding></findings>`
    const result = parseFindings(text, { defaultCategory: "performance" })
    expect(result.ok && result.findings.map((finding) => finding.category)).toEqual(["performance", "security"])
    expect(error(text)).toBe('finding 1: category is missing (e.g. category="security")')
  })

  test.each([
    ["no block", "The change looks fine to me.", "no <findings> block found: end your answer with"],
    [
      "bare finding elements",
      `<finding severity="warning" file="a.ts"><title>t</title></finding>`,
      "found <finding> elements without the enclosing <findings> element",
    ],
    [
      "unclosed finding",
      `<findings><finding severity="warning" file="a.ts"><title>t</title></findings>`,
      "the <findings> block is not well-formed XML (line 1, column",
    ],
    [
      "bad severity",
      `<findings><finding severity="warning" file="a.ts"><title>t</title></finding><finding severity="high" file="b.ts" category="x"><title>u</title></finding></findings>`,
      'finding 2: severity "high" is not one of critical, warning, suggestion',
    ],
    [
      "missing severity",
      `<findings><finding file="a.ts" category="x"><title>t</title></finding></findings>`,
      "finding 1: severity is missing (one of critical, warning, suggestion)",
    ],
    [
      "missing file",
      `<findings><finding severity="warning" category="x"><title>t</title></finding></findings>`,
      "finding 1: file is missing",
    ],
    [
      "empty title",
      `<findings><finding severity="warning" file="a.ts" category="x"><title> </title></finding></findings>`,
      "finding 1: <title> is missing or empty",
    ],
    [
      "missing title",
      `<findings><finding severity="warning" file="a.ts" category="x"/></findings>`,
      "finding 1: <title> is missing or empty",
    ],
    [
      "line range",
      `<findings><finding severity="warning" file="a.ts" line="12-15" category="x"><title>t</title></finding></findings>`,
      'finding 1: line "12-15" is not a line number',
    ],
    [
      "line zero",
      `<findings><finding severity="warning" file="a.ts" line="0" category="x"><title>t</title></finding></findings>`,
      'finding 1: line "0" is not a line number',
    ],
    [
      "two titles",
      `<findings><finding severity="warning" file="a.ts" category="x"><title>t</title><title>u</title></finding></findings>`,
      "finding 1: more than one <title>",
    ],
    [
      "text instead of findings",
      `<findings>- SQL injection in db.ts</findings>`,
      "the <findings> block holds text but no <finding> elements",
    ],
    [
      "text-only finding",
      `<findings><finding>SQL injection</finding></findings>`,
      "finding 1: give severity, file, line and category as attributes",
    ],
  ])("reports a specific error: %s", (_name, text, message) => {
    expect(error(text)).toContain(message)
  })

  test("reports every broken finding, each with its number", () => {
    const text = `<findings>
<finding severity="warning" file="a.ts" category="x"><title>ok</title></finding>
<finding severity="bad" category="x"><title>t</title></finding>
<finding severity="warning" file="c.ts" line="x" category="x"><title>t</title></finding>
</findings>`
    expect(error(text)).toBe(
      'finding 2: severity "bad" is not one of critical, warning, suggestion, file is missing (the changed file\'s path, e.g. file="src/db.ts"); ' +
        'finding 3: line "x" is not a line number (one positive integer, e.g. the first line of a range; leave it out for a file-level finding)',
    )
  })

  test("never expands entities declared in a DOCTYPE", () => {
    const text = `<?xml version="1.0"?><!DOCTYPE findings [<!ENTITY boom "BOOM">]>
<findings><finding severity="warning" file="a.ts" category="x"><title>&boom;</title></finding></findings>`
    expect(findings(text)[0]!.title).toBe("&boom;")
  })

  test("never throws on hostile or odd input", () => {
    const inputs = [
      "",
      "<findings>",
      "<findings><finding severity='warning' file='a.ts'><title><![CDATA[unterminated</title></finding></findings>",
      "<findings><__proto__ polluted='1'/><finding severity='warning' file='a.ts' category='x'><title>t</title></finding></findings>",
      "<findings>" + "<x>".repeat(500) + "</findings>",
      "<findings><finding severity='warning' file='a.ts' line='1e3' category='x'><title>t</title></finding></findings>",
    ]
    for (const input of inputs) expect(() => parseFindings(input)).not.toThrow()
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})

describe("suggestions", () => {
  const block = (suggestion: string, line = 'line="14"') =>
    `<findings><finding severity="suggestion" file="src/a.ts" ${line} category="code-quality"><title>Use a parameter</title><body>Bind it.</body>${suggestion}</finding></findings>`

  test("a <suggestion> is read verbatim: indentation kept, entities decoded, the tag newlines dropped", () => {
    const parsed = parseFindings(
      block('<suggestion start_line="13">\n  if (a &lt; b) {\n    run(a & b)\n  }\n    </suggestion>'),
    )
    expect(parsed.ok && parsed.findings[0]!.suggestion).toEqual({
      startLine: 13,
      lines: ["  if (a < b) {", "    run(a & b)", "  }"],
    })
  })

  test("start_line defaults to the finding's line; an empty suggestion is none", () => {
    const one = parseFindings(block("<suggestion>const x = 1</suggestion>"))
    expect(one.ok && one.findings[0]!.suggestion).toEqual({ startLine: 14, lines: ["const x = 1"] })
    const empty = parseFindings(block("<suggestion>\n  </suggestion>"))
    expect(empty.ok && empty.findings[0]!.suggestion).toBeUndefined()
  })

  test("a suggestion without a line, after its line, or too long is an error the model can fix", () => {
    const errors = [
      parseFindings(block("<suggestion>x</suggestion>", "")),
      parseFindings(block('<suggestion start_line="15">x</suggestion>')),
      parseFindings(
        block(`<suggestion start_line="1">${Array.from({ length: 31 }, () => "x").join("\n")}</suggestion>`),
      ),
    ].map((parsed) => (parsed.ok ? "ok" : parsed.error))
    expect(errors[0]).toContain("a <suggestion> needs the finding's line")
    expect(errors[1]).toContain(`<suggestion start_line="15"> must be a line number from 1 up to the finding's line 14`)
    expect(errors[2]).toContain("<suggestion> has 31 lines; at most 30")
  })

  test("renders and reads back the same suggestion", () => {
    const finding: Finding = {
      severity: "suggestion",
      file: "src/a.ts",
      line: 3,
      category: "code-quality",
      title: "t",
      body: "b",
      suggestion: { startLine: 2, lines: ["  const q = `<${x}>` && y", "", "  return q"] },
    }
    const parsed = parseFindings(renderFindingsXml([finding]))
    expect(parsed.ok && parsed.findings).toEqual([finding])
  })
})

describe("renderFindingsXml", () => {
  test("round-trips through parseFindings, escaping markup in every field", () => {
    const tricky: Finding[] = [
      sql,
      {
        severity: "critical",
        file: 'src/"odd" & <name>.ts',
        line: null,
        category: "agents-md",
        title: "</findings> & <b>",
        body: "line one\nline two <review>",
      },
    ]
    const xml = renderFindingsXml(tricky)
    expect(xml).not.toContain("</findings> &")
    expect(findings(xml)).toEqual(tricky)
  })

  test("renders no findings as an empty element and honours the indent", () => {
    expect(renderFindingsXml([])).toBe("<findings/>")
    expect(
      renderFindingsXml([sql], { indent: "  " })
        .split("\n")
        .every((line) => line.startsWith("  ")),
    ).toBe(true)
  })
})

describe("parseReview", () => {
  const review = `<review>
  <summary>One SQL injection risk in the new endpoint; the rest is fine.</summary>
  ${block}
  <answer>Yes, the migration is reversible.</answer>
</review>`

  test("reads summary, findings and answer", () => {
    expect(parseReview(review)).toEqual({
      ok: true,
      review: {
        summary: "One SQL injection risk in the new endpoint; the rest is fine.",
        findings: [sql],
        answer: "Yes, the migration is reversible.",
      },
    })
  })

  test("no findings and no answer", () => {
    expect(parseReview("Done.\n<review><summary>Small refactor.</summary><findings/></review>")).toEqual({
      ok: true,
      review: { summary: "Small refactor.", findings: [], answer: null },
    })
    expect(parseReview("<review><summary>Small refactor.</summary><answer> </answer></review>")).toEqual({
      ok: true,
      review: { summary: "Small refactor.", findings: [], answer: null },
    })
  })

  test("tolerates fences, prose mentioning <review>, markdown and a lone & in the summary", () => {
    const text = `I will now submit my <review>.\n\`\`\`xml\n<review><summary>Adds \`Map<string, User>\` cache & TTL.</summary><findings/></review>\n\`\`\``
    const result = parseReview(text)
    expect(result.ok && result.review.summary).toBe("Adds `Map<string, User>` cache & TTL.")
  })

  test("round-trips through renderReviewXml", () => {
    const value = { summary: "S & <t>", findings: [sql], answer: null }
    expect(parseReview(renderReviewXml(value))).toEqual({ ok: true, review: value })
  })

  test.each([
    ["no block", "Here is my review: all good.", "no <review> block found"],
    ["no summary", "<review><findings/></review>", "<summary> is missing or empty"],
    ["empty review", "<review/>", "<summary> is missing"],
    [
      "bad finding",
      `<review><summary>s</summary><findings><finding severity="major" file="a.ts" category="x"><title>t</title></finding></findings></review>`,
      'finding 1: severity "major" is not one of',
    ],
    [
      "findings outside",
      `<review><summary>s</summary></review>\n<findings><finding severity="warning" file="a.ts" category="x"><title>t</title></finding></findings>`,
      "the <findings> block is outside <review>",
    ],
    [
      "two findings blocks",
      `<review><summary>s</summary><findings/><findings/></review>`,
      "more than one <findings> element",
    ],
    [
      "malformed",
      `<review><summary>s</summary><findings><finding></findings></review>`,
      "the <review> block is not well-formed XML",
    ],
  ])("reports a specific error: %s", (_name, text, message) => {
    const result = parseReview(text)
    expect(result.ok ? "parsed" : result.error).toContain(message)
  })
})

describe("normalizeCategory", () => {
  test.each([
    ["Security", "security"],
    [" Code Quality ", "code-quality"],
    ["code_quality", "code-quality"],
    ["codequality", "code-quality"],
    ["AGENTS-MD", "agents-md"],
    ["Accessibility", "Accessibility"],
    ["  error   handling ", "error handling"],
  ])("%s → %s", (input, expected) => {
    expect(normalizeCategory(input)).toBe(expected)
  })
})
