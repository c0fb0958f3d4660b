import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { reviewers } from "../plan/agents"

/** The prompt texts an assembly needs, read once from the prompts directory. */
export interface PromptLibrary {
  coordinator: string
  shared: string
  reviewers: Record<string, string>
}

/** The prompts directory shipped with the project (`prompts/` at the repository root). */
export const defaultPromptsDir = fileURLToPath(new URL("../../../../prompts/", import.meta.url))

/** Reads coordinator.md, REVIEWER_SHARED.md and one file per known reviewer; a missing file is an error. */
export async function loadPrompts(dir: string = defaultPromptsDir): Promise<PromptLibrary> {
  const read = async (name: string) => {
    const file = Bun.file(join(dir, name))
    if (!(await file.exists())) throw new Error(`prompt file missing: ${join(dir, name)}`)
    return file.text()
  }
  const [coordinator, shared, ...own] = await Promise.all([
    read("coordinator.md"),
    read("REVIEWER_SHARED.md"),
    ...reviewers.map((spec) => read(`${spec.name}.md`)),
  ])
  return {
    coordinator: coordinator!,
    shared: shared!,
    reviewers: Object.fromEntries(reviewers.map((spec, index) => [spec.name, own[index]!])),
  }
}
