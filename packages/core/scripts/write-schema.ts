// Regenerates the editor JSON schema of opencode-reviewer.json from the zod config schema.
import { schemaFile, schemaText } from "../src/config/schema-file"

await Bun.write(schemaFile, schemaText())
console.log(`wrote ${schemaFile}`)
