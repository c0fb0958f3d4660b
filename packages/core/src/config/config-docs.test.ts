import { describe, expect, test } from "vitest"
import {
  checkExample,
  configDocsText,
  docsFile,
  exampleConfig,
  type JsonSchema,
  renderConfigDocs,
} from "../../scripts/write-docs"
import { configJsonSchema, parseConfig, resolveConfig } from "./config"

describe("docs/configuration.md", () => {
  test("matches the config schema and defaults (run `bun run docs` after `bun run schema`)", async () => {
    const file = Bun.file(docsFile)
    const committed = (await file.exists()) ? await file.text() : "(docs/configuration.md is missing)"
    expect(committed, "docs/configuration.md is stale: run `bun run docs`").toBe(configDocsText())
  })

  test("has a section for every top-level key and a row for every nested key", () => {
    const page = configDocsText()
    const schema = configJsonSchema() as JsonSchema
    for (const key of Object.keys(schema.properties!)) expect(page, key).toContain(`### \`${key}\``)
    for (const [key, child] of Object.entries(schema.properties!)) {
      for (const nested of Object.keys(child.properties ?? {})) {
        // A keyed set (the reviewers) is documented once as <name> and lists every member.
        expect(page.includes(`| \`${key}.${nested}\``) || page.includes(`\`${nested}\``), `${key}.${nested}`).toBe(true)
      }
    }
  })

  test("shows every built-in default of resolveConfig({}) in its key's row", () => {
    const page = configDocsText()
    const rows = page.split("\n").filter((line) => line.startsWith("| `") || line.startsWith("**Type:**"))
    const scalars = leaves(resolveConfig({}) as unknown as Record<string, unknown>, [])
    expect(scalars.length).toBeGreaterThan(10)
    for (const [path, value] of scalars) {
      const row = path.includes(".")
        ? rows.find((line) => line.startsWith(`| \`${path}\` |`))
        : sectionFacts(page, path)
      expect(row, path).toBeDefined()
      expect(row, path).toContain(`\`${JSON.stringify(value)}\``)
    }
  })

  test("carries an example that the config schema accepts without warnings", () => {
    expect(checkExample(exampleConfig)).toEqual([])
    const page = configDocsText()
    const block = /## Example\n\n```json\n([\s\S]*?)\n```/.exec(page)?.[1]
    expect(block).toBeDefined()
    expect(parseConfig(JSON.parse(block!)).warnings).toEqual([])
  })

  test("reports a broken example instead of publishing it", () => {
    expect(checkExample({ failOn: "sometimes" })[0]).toContain("failOn")
    expect(checkExample({ colour: "blue" })).toEqual(['unknown key "colour" is ignored'])
  })
})

describe("renderConfigDocs", () => {
  // A made-up schema in the shape z.toJSONSchema emits: whatever keys engineers add, they appear.
  const schema: JsonSchema = {
    type: "object",
    properties: {
      retention: {
        description: "How long records stay.",
        type: "object",
        properties: {
          days: { description: "Days to keep.", type: "integer", minimum: 1, maximum: 9007199254740991 },
          mode: { description: "What happens after.", type: "string", enum: ["delete", "archive"] },
        },
      },
      hooks: {
        description: "Webhooks by name.",
        type: "object",
        propertyNames: { type: "string", description: "A hook name." },
        additionalProperties: {
          type: "object",
          required: ["url"],
          properties: {
            url: { description: "Where to post.", type: "string", format: "uri" },
            secretEnv: { description: "Variable with the <secret>.", type: "string", pattern: "^[A-Z_]+$" },
          },
        },
      },
      teams: {
        description: "Per-team settings.",
        type: "object",
        properties: Object.fromEntries(
          ["red", "green", "blue"].map((team) => [
            team,
            {
              type: "object",
              properties: { quota: { description: "Reviews a day.", type: "number", exclusiveMinimum: 0 } },
            },
          ]),
        ),
      },
      paths: { description: "Globs like **/gen/** to skip.", type: "array", items: { type: "string", minLength: 1 } },
      strict: { description: "Fail hard.", type: "boolean", default: true },
    },
  }
  const page = renderConfigDocs({
    schema,
    defaults: { retention: { days: 30, mode: "delete" }, paths: ["a/**"], strict: false },
    example: { strict: true },
  })

  test("renders nested keys as dotted paths with type, default and description", () => {
    expect(page).toContain("### `retention`")
    expect(page).toContain("| `retention.days` | integer (≥ 1) | `30` | Days to keep. |")
    expect(page).toContain('| `retention.mode` | one of `delete`, `archive` | `"delete"` | What happens after. |')
  })

  test("documents free keys as <key>, required fields, and escapes placeholders and globs", () => {
    expect(page).toContain("| `hooks.<key>.url` | URL | required | Where to post. |")
    expect(page).toContain(
      "| `hooks.<key>.secretEnv` | string, matching `^[A-Z_]+$` | — | Variable with the `<secret>`. |",
    )
    expect(page).toContain("`<key>`: A hook name.")
    expect(page).toContain("Globs like `**/gen/**` to skip.")
  })

  test("documents a set of identically shaped keys once, naming every member", () => {
    expect(page).toContain("| `teams.<name>.quota` | number (> 0) | — | Reviews a day. |")
    expect(page).toContain("`<name>` is one of `red`, `green`, `blue`.")
    expect(page).not.toContain("teams.red")
  })

  test("prefers a default written in the schema over the resolved one", () => {
    expect(page).toContain("**Type:** boolean · **Default:** `true`")
    expect(page).toContain('**Type:** list of string, non-empty · **Default:** `["a/**"]`')
  })
})

function leaves(value: Record<string, unknown>, path: string[]): [string, unknown][] {
  return Object.entries(value).flatMap(([key, child]): [string, unknown][] => {
    if (child === null || Array.isArray(child)) return []
    if (typeof child === "object") return leaves(child as Record<string, unknown>, [...path, key])
    return [[[...path, key].join("."), child]]
  })
}

function sectionFacts(page: string, key: string): string | undefined {
  const start = page.indexOf(`### \`${key}\`\n`)
  if (start < 0) return undefined
  return page
    .slice(start)
    .split("\n")
    .find((line) => line.startsWith("**Type:**"))
}
