import * as z from "zod"

// How OpenCode names a model in its config (`model`, `small_model`, an agent's `model`):
// `<provider>/<model>`, split at the first slash, since model ids may hold more (openrouter's do).

/** `<provider>/<model>`: a provider id without slashes or spaces, then a model id (which may hold slashes). */
export const modelIdPattern = /^[^/\s]+\/\S+$/

/** A model as the config and OpenCode name it; the message names an example when given one. */
export function modelIdSchema(example?: string) {
  return z.string().regex(modelIdPattern, `must be <provider>/<model>${example ? `, e.g. ${example}` : ""}`)
}

/** A `<provider>/<model>` id. */
export const ModelId = modelIdSchema()
export type ModelId = z.infer<typeof ModelId>

/** The provider and model of an id, split at the first slash; a bare name is a model of no provider. */
export function splitModelId(id: string): { provider: string | null; model: string } {
  const slash = id.indexOf("/")
  return slash <= 0 ? { provider: null, model: id } : { provider: id.slice(0, slash), model: id.slice(slash + 1) }
}
