/**
 * A small model of how GitLab turns a CI/CD component into pipeline configuration, enough to test
 * templates/review/template.yml without a GitLab instance:
 * - the file is two YAML documents, the `spec:` header and the content;
 * - given inputs are validated against `spec:inputs` (unknown input, missing required input,
 *   `type`, `options`, `regex`; defaults are validated too), then defaults fill the gaps;
 * - `$[[ inputs.name ]]` blocks are interpolated. GitLab has two interpolators: the default one
 *   walks the parsed YAML and replaces string nodes (keys and values), where a node that is exactly
 *   one block takes the input's type and anything else becomes a string; the newer one (feature flag
 *   `ci_text_interpolation`) substitutes into the text before parsing, strings raw and other types
 *   as JSON. A template should render the same under both, so both are implemented here.
 * - `mergeIncluded` is the deep merge GitLab applies between included configuration and the
 *   project's own .gitlab-ci.yml (hashes merge at any depth, anything else is replaced).
 * Sources: GitLab's lib/gitlab/ci/config/interpolation/{template,text_template,inputs/*}.rb and
 * doc/ci/inputs/_index.md, doc/ci/yaml/includes.md ("Merge method for include").
 */
import { parse, parseAllDocuments } from "yaml"

export type InputType = "string" | "number" | "boolean" | "array"
export type InputValue = string | number | boolean | unknown[]

export interface InputSpec {
  type?: InputType
  default?: InputValue
  description?: string
  options?: InputValue[]
  regex?: string
}

export interface ComponentFile {
  inputs: Record<string, InputSpec>
  /** The content document, exactly as written (uninterpolated). */
  body: string
}

export type InterpolationMode = "tree" | "text"

/** A configuration GitLab would reject at pipeline creation, with GitLab's kind of message. */
export class ComponentError extends Error {
  override name = "ComponentError"
}

/** GitLab loads CI YAML with Ruby's Psych, a YAML 1.1 parser (`on`, `yes` are booleans there). */
export const yamlOptions = { version: "1.1" } as const

const specKeys = new Set(["type", "default", "description", "options", "regex"])
const blockPattern = /\$\[\[\s*(\S.*?\S)\s*\]\]/g

/** Splits a component file into its `spec:inputs` header and its content document. */
export function readComponent(text: string): ComponentFile {
  const documents = parseAllDocuments(text, yamlOptions)
  if (!Array.isArray(documents) || documents.length !== 2) {
    throw new ComponentError("a component with inputs is two YAML documents: the spec header, then the jobs after ---")
  }
  for (const document of documents) {
    if (document.errors.length > 0) throw new ComponentError(`YAML error: ${document.errors[0]!.message}`)
  }
  const header = documents[0]!.toJS() as { spec?: { inputs?: Record<string, InputSpec | null> } } | null
  const rawInputs = header?.spec?.inputs
  if (!header || Object.keys(header).join() !== "spec" || !rawInputs || typeof rawInputs !== "object") {
    throw new ComponentError("the header must be exactly `spec: inputs: ...`")
  }
  const inputs: Record<string, InputSpec> = {}
  for (const [name, spec] of Object.entries(rawInputs)) {
    const value = spec ?? {}
    for (const key of Object.keys(value)) {
      if (!specKeys.has(key)) throw new ComponentError(`\`${name}\` input: unknown key ${key}`)
    }
    inputs[name] = value
  }
  const contentStart = documents[1]!.range[0]
  return { inputs, body: text.slice(contentStart) }
}

/** Validates given inputs against the spec and returns every input's value (defaults applied). */
export function resolveInputs(
  spec: Record<string, InputSpec>,
  given: Record<string, InputValue>,
): Record<string, InputValue> {
  const unknown = Object.keys(given).filter((name) => !(name in spec))
  if (unknown.length > 0) throw new ComponentError(`unknown input arguments: ${unknown.join(", ")}`)
  const errors: string[] = []
  const values: Record<string, InputValue> = {}
  for (const [name, input] of Object.entries(spec)) {
    const required = !("default" in input)
    const value = given[name]
    if (required && value === undefined) {
      errors.push(`\`${name}\` input: required value has not been provided`)
      continue
    }
    if (!required) errors.push(...check(name, input, input.default as InputValue, "default"))
    if (value !== undefined) errors.push(...check(name, input, value, "provided"))
    values[name] = value ?? (input.default as InputValue)
  }
  if (errors.length > 0) throw new ComponentError(errors.join("; "))
  return values
}

function check(name: string, input: InputSpec, value: InputValue, which: "default" | "provided"): string[] {
  const type = input.type ?? "string"
  const errors: string[] = []
  const typeOk =
    type === "string"
      ? typeof value === "string"
      : type === "number"
        ? typeof value === "number" && Number.isFinite(value)
        : type === "boolean"
          ? typeof value === "boolean"
          : Array.isArray(value)
  if (!typeOk) return [`\`${name}\` input: ${which} value is not a${type === "array" ? "n" : ""} ${type}`]
  if (input.options !== undefined) {
    if (type !== "string" && type !== "number")
      errors.push(`\`${name}\` input: Options can only be used with string and number inputs`)
    else if (!input.options.includes(value))
      errors.push(
        `\`${name}\` input: \`${String(value)}\` cannot be used because it is not in the list of allowed options`,
      )
  }
  if (input.regex !== undefined) {
    if (type !== "string") errors.push(`\`${name}\` input: RegEx validation can only be used with string inputs`)
    // GitLab uses RE2 with an unanchored match: the pattern itself must carry ^ and $.
    else if (!new RegExp(input.regex).test(value as string))
      errors.push(`\`${name}\` input: ${which} value does not match required RegEx pattern`)
  }
  return errors
}

function lookup(values: Record<string, InputValue>, data: string): InputValue {
  if (data.includes("|")) throw new ComponentError(`interpolation functions are not modelled here: ${data}`)
  const match = /^inputs\.([A-Za-z0-9_-]+)$/.exec(data)
  if (!match) throw new ComponentError(`unknown interpolation key: \`${data}\``)
  const value = values[match[1]!]
  if (value === undefined) throw new ComponentError(`unknown interpolation key: \`${match[1]}\``)
  return value
}

function interpolateNode(node: unknown, values: Record<string, InputValue>): unknown {
  if (typeof node === "string") {
    const blocks = [...node.matchAll(blockPattern)]
    if (blocks.length === 0) return node
    if (blocks.length === 1 && blocks[0]![0].length === node.length) return lookup(values, blocks[0]![1]!)
    return node.replace(blockPattern, (_, data: string) => String(lookup(values, data)))
  }
  if (Array.isArray(node)) return node.map((item) => interpolateNode(item, values))
  if (node !== null && typeof node === "object") {
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      const newKey = interpolateNode(key, values)
      out[String(newKey)] = interpolateNode(value, values)
    }
    return out
  }
  return node
}

/** Renders a component with the given inputs into the configuration GitLab would merge into the pipeline. */
export function renderComponent(
  text: string,
  given: Record<string, InputValue> = {},
  mode: InterpolationMode = "tree",
): Record<string, unknown> {
  const component = readComponent(text)
  const values = resolveInputs(component.inputs, given)
  if (mode === "text") {
    const substituted = component.body.replace(blockPattern, (_, data: string) => {
      const value = lookup(values, data)
      return typeof value === "string" ? value : JSON.stringify(value)
    })
    return parse(substituted, yamlOptions) as Record<string, unknown>
  }
  return interpolateNode(parse(component.body, yamlOptions), values) as Record<string, unknown>
}

function isHash(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
}

/** GitLab's merge of included configuration (`base`) with the project's own configuration (`local`). */
export function mergeIncluded(base: Record<string, unknown>, local: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(local)) {
    const existing = out[key]
    out[key] = isHash(existing) && isHash(value) ? mergeIncluded(existing, value) : value
  }
  return out
}
