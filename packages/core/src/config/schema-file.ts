import { fileURLToPath } from "node:url"
import { configJsonSchema } from "./config"

/** Where the generated JSON schema for `opencode-reviewer.json` lives in the repository. */
export const schemaFile = fileURLToPath(new URL("../../schema/opencode-reviewer.schema.json", import.meta.url))

/** The schema file's exact content: generated from the zod config schema, so it cannot drift. */
export function schemaText(): string {
  const schema = { title: "opencode-reviewer configuration", ...configJsonSchema() }
  return JSON.stringify(schema, null, 2) + "\n"
}
