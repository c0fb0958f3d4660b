import { splitModelId } from "@opencode-reviewer/opencode/model-id"

// The `<provider>/<model>` format is OpenCode's: its pattern, schema and split live in the adapter.
export { ModelId, modelIdPattern, modelIdSchema, splitModelId } from "@opencode-reviewer/opencode/model-id"

/** The provider of a `<provider>/<model>` id, or null for a bare model name. */
export function providerOf(id: string): string | null {
  return splitModelId(id).provider
}
