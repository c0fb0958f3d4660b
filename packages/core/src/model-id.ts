import * as z from "zod"

/** A model as the config and OpenCode name it: `<provider>/<model>` (the model part may hold slashes). */
export const ModelId = z.string().regex(/^[^/\s]+\/\S+$/, "must be <provider>/<model>")
export type ModelId = z.infer<typeof ModelId>

/** The provider and model of a `<provider>/<model>` id; a bare name is a model of no provider. */
export function splitModelId(id: string): { provider: string | null; model: string } {
  const slash = id.indexOf("/")
  return slash <= 0 ? { provider: null, model: id } : { provider: id.slice(0, slash), model: id.slice(slash + 1) }
}
