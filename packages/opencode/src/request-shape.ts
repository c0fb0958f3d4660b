// What OpenCode 1.18.33 puts into every model request besides our own text, and how the plugin
// hooks `tool.definition` and `experimental.chat.system.transform` trim it (docs/opencode.md,
// "What every request carries"). Pure: the runtime plugin applies these in its hooks.

/**
 * Short descriptions for the built-in tools our agents keep (read, glob, grep). OpenCode's own run
 * to 500–1,200 characters each, with advice for a coding agent (the Task tool, bash, edits) that a
 * read-only reviewer never uses, and they travel in every request of every session. The parameters
 * keep OpenCode's own descriptions.
 */
export const toolDescriptions: Readonly<Record<string, string>> = {
  read: [
    "Reads a file by absolute path (a directory lists its entries).",
    "Each line comes back as `N: text` (N = the file's line number); at most 2000 lines a call, continue with `offset`;",
    "lines over 2000 characters are cut. Read several files in one turn with several calls.",
  ].join(" "),
  glob: "Finds files by glob pattern (`src/**/*.ts`) under the repository, or under `path`. Returns matching paths.",
  grep: [
    "Searches file contents with a regular expression under the repository, or under `path`; `include` filters",
    "file names (`*.{ts,tsx}`). Returns matching files with line numbers and lines.",
  ].join(" "),
}

const text = (description: string) => ({ type: "string", description })
const lines = (description: string) => ({ type: "integer", minimum: 0, description })

/**
 * The JSON schemas the model sees for read, glob and grep: OpenCode's own, with its parameter
 * descriptions shortened (glob's `path` alone runs to 250 characters) and without the `$schema`
 * line. Same names, types and required fields, so OpenCode's own schema still validates every call.
 */
export const toolSchemas: Readonly<Record<string, Record<string, unknown>>> = {
  read: {
    type: "object",
    properties: {
      filePath: text("Absolute path of the file or directory"),
      offset: lines("First line to read (1-based)"),
      limit: lines("Most lines to read (default 2000)"),
    },
    required: ["filePath"],
  },
  glob: {
    type: "object",
    properties: { pattern: text("Glob pattern"), path: text("Directory to search; omit for the repository") },
    required: ["pattern"],
  },
  grep: {
    type: "object",
    properties: {
      pattern: text("Regular expression"),
      path: text("Directory to search; omit for the repository"),
      include: text("File name pattern, e.g. *.{ts,tsx}"),
    },
    required: ["pattern"],
  },
}

/**
 * Applies our description and JSON schema to one `tool.definition` hook output. Besides the typed
 * `description` and `parameters` (an Effect schema for built-in tools), OpenCode 1.18.33 reads a
 * `jsonSchema` field from that output and sends it instead of converting `parameters`, as long as
 * `parameters` is left as it was (docs/opencode.md, "What every request carries").
 */
export function shapeToolDefinition(toolID: string, output: { description: string }): void {
  const description = toolDescriptions[toolID]
  if (description !== undefined) output.description = description
  const schema = toolSchemas[toolID]
  if (schema !== undefined) (output as { jsonSchema?: unknown }).jsonSchema = structuredClone(schema)
}

/**
 * Removes what OpenCode appends to an agent's prompt in the system message: the line naming the
 * model and the `<env>` block (working directory, git, platform, today's date). It changes with
 * the checkout path, the model of a failback and the day, so a provider's prompt cache could not
 * reuse anything after it; the runtime gives the same facts in the first user message instead,
 * after the stable part. Mutates and returns `system`; text that does not match is left alone.
 */
export function stripEnvironment(system: string[]): { system: string[]; removed: number } {
  let removed = 0
  for (let index = 0; index < system.length; index += 1) {
    const part = system[index]!
    const cut = part.replace(environmentBlock, "")
    if (cut !== part) {
      system[index] = cut
      removed += 1
    }
  }
  return { system, removed }
}

// "\nYou are powered by the model named m. The exact model ID is p/m\nHere is some useful
// information about the environment you are running in:\n<env>\n…\n</env>" (1.18.33).
const environmentBlock =
  /\n?You are powered by the model named [^\n]*\nHere is some useful information about the environment you are running in:\n<env>\n[\s\S]*?\n<\/env>/
