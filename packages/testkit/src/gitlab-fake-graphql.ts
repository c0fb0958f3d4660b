import {
  type FieldNode,
  GraphQLError,
  getLocation,
  Kind,
  type Location,
  parse,
  type SelectionSetNode,
  type ValueNode as ValueAstNode,
} from "graphql"
import type { Reply } from "./gitlab-fake-http"

// Just enough GraphQL for the reviewer: the `mergeRequestRequestChanges` mutation (input
// `{ projectPath: ID!, iid: String! }`, Mutations::MergeRequests::RequestChanges in GitLab),
// `currentUser`, and introspection of the Mutation type for feature detection. Errors follow
// graphql-ruby's shapes (HTTP 200 with a top-level `errors` array).

/** What the GraphQL layer needs from the fake. */
export interface GraphqlContext {
  /** False simulates an instance without the mutation (older GitLab). */
  requestChangesAvailable: boolean
  /** null for an anonymous request. */
  currentUser: { id: number; username: string; name: string; bot: boolean } | null
  /** Runs the mutation; null when the project/MR is not found or not visible. */
  requestChanges(projectPath: string, iid: string): { errors: string[]; mergeRequest: Record<string, unknown> } | null
}

interface Field {
  alias: string | null
  name: string
  args: Record<string, ValueNode>
  selection: Field[] | null
  line: number
  column: number
}

type ValueNode =
  | { kind: "variable"; name: string }
  | { kind: "literal"; value: unknown }
  | { kind: "object"; fields: Record<string, ValueNode> }
  | { kind: "list"; items: ValueNode[] }

interface Operation {
  type: "query" | "mutation"
  name: string | null
  selection: Field[]
}

const baseMutations = [
  "createNote",
  "updateNote",
  "destroyNote",
  "discussionToggleResolve",
  "mergeRequestAccept",
  "mergeRequestCreate",
  "mergeRequestReviewerRereview",
  "mergeRequestSetAssignees",
  "mergeRequestSetDraft",
  "mergeRequestSetLabels",
  "mergeRequestSetReviewers",
  "mergeRequestUpdate",
  "mergeRequestUpdateApprovalRule",
]

export function answerGraphql(body: unknown, context: GraphqlContext): Reply {
  const request = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  const query = typeof request.query === "string" ? request.query : null
  if (!query) return { status: 200, body: { errors: [{ message: "No query string was present" }] } }
  const variables = (
    typeof request.variables === "object" && request.variables !== null ? request.variables : {}
  ) as Record<string, unknown>
  let operations: Operation[]
  try {
    operations = parseDocument(query)
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    return { status: 200, body: { errors: [{ message: error.message, locations: error.locations ?? [] }] } }
  }
  const wanted =
    typeof request.operationName === "string"
      ? operations.find((op) => op.name === request.operationName)
      : operations[0]
  if (!wanted)
    return {
      status: 200,
      body: { errors: [{ message: 'No operation named "' + String(request.operationName) + '"' }] },
    }
  const rootType = wanted.type === "mutation" ? "Mutation" : "Query"
  const pathRoot = wanted.name ? `${wanted.type} ${wanted.name}` : wanted.type
  const errors: unknown[] = []
  const data: Record<string, unknown> = {}
  for (const field of wanted.selection) {
    const key = field.alias ?? field.name
    const result = resolveRoot(field, rootType, variables, context)
    if ("undefinedField" in result) {
      return {
        status: 200,
        body: {
          errors: [
            {
              message: `Field '${field.name}' doesn't exist on type '${rootType}'`,
              locations: [{ line: field.line, column: field.column }],
              path: [pathRoot, field.name],
              extensions: { code: "undefinedField", typeName: rootType, fieldName: field.name },
            },
          ],
        },
      }
    }
    if ("argumentError" in result) {
      return {
        status: 200,
        body: {
          errors: [
            {
              message: result.argumentError,
              locations: [{ line: field.line, column: field.column }],
              path: [pathRoot, field.name],
            },
          ],
        },
      }
    }
    data[key] = result.value
    if (result.error)
      errors.push({ message: result.error, locations: [{ line: field.line, column: field.column }], path: [key] })
  }
  return { status: 200, body: errors.length > 0 ? { data, errors } : { data } }
}

type RootResult = { value: unknown; error?: string } | { undefinedField: true } | { argumentError: string }

const notFoundMessage =
  "The resource that you are attempting to access does not exist or you don't have permission to perform this action"

function resolveRoot(
  field: Field,
  rootType: string,
  variables: Record<string, unknown>,
  context: GraphqlContext,
): RootResult {
  if (field.name === "__typename") return { value: rootType }
  if (field.name === "__schema") {
    const schema = { queryType: { name: "Query" }, mutationType: mutationTypeObject(context) }
    return { value: select(field.selection, schema) }
  }
  if (field.name === "__type") {
    const name = evaluate(field.args.name, variables)
    return { value: select(field.selection, typeObject(String(name), context)) }
  }
  if (rootType === "Query" && field.name === "currentUser") {
    const user = context.currentUser
    if (!user) return { value: null }
    return {
      value: select(field.selection, {
        id: `gid://gitlab/User/${user.id}`,
        username: user.username,
        name: user.name,
        bot: user.bot,
        __typename: "CurrentUser",
      }),
    }
  }
  if (rootType === "Mutation" && field.name === "mergeRequestRequestChanges" && context.requestChangesAvailable) {
    const input = field.args.input
    if (!input) return { argumentError: "Field 'mergeRequestRequestChanges' is missing required arguments: input" }
    const resolved = evaluateInput(input, variables)
    if ("error" in resolved) return { argumentError: resolved.error }
    if (!context.currentUser) return { value: null, error: notFoundMessage }
    const outcome = context.requestChanges(resolved.projectPath, resolved.iid)
    if (!outcome) return { value: null, error: notFoundMessage }
    const payload = {
      mergeRequest: outcome.mergeRequest,
      errors: outcome.errors,
      clientMutationId: null,
      __typename: "MergeRequestRequestChangesPayload",
    }
    return { value: select(field.selection, payload) }
  }
  return { undefinedField: true }
}

function evaluateInput(
  node: ValueNode,
  variables: Record<string, unknown>,
): { projectPath: string; iid: string } | { error: string } {
  const inputType = "MergeRequestRequestChangesInput"
  const value = node.kind === "variable" ? variables[node.name] : undefined
  if (node.kind === "variable") {
    if (typeof value !== "object" || value === null)
      return { error: `Variable $${node.name} of type ${inputType}! was provided invalid value` }
    const record = value as Record<string, unknown>
    for (const key of ["projectPath", "iid"]) {
      if (typeof record[key] !== "string")
        return {
          error: `Variable $${node.name} of type ${inputType}! was provided invalid value for ${key} (Expected value to not be null)`,
        }
    }
    return { projectPath: record.projectPath as string, iid: record.iid as string }
  }
  if (node.kind !== "object")
    return {
      error: `Argument 'input' on Field 'mergeRequestRequestChanges' has an invalid value. Expected type '${inputType}!'.`,
    }
  const out: Record<string, string> = {}
  for (const [key, type] of [
    ["projectPath", "ID!"],
    ["iid", "String!"],
  ] as const) {
    const entry = node.fields[key]
    if (!entry) return { error: `Argument '${key}' on InputObject '${inputType}' is required. Expected type ${type}` }
    if (entry.kind === "variable") {
      const given = variables[entry.name]
      // graphql-ruby does not coerce an Int variable into String!/ID! for iid (a common mistake).
      if (typeof given !== "string" && !(type === "ID!" && typeof given === "number")) {
        return { error: `Variable $${entry.name} of type ${type} was provided invalid value` }
      }
      out[key] = String(given)
      continue
    }
    const literal = entry.kind === "literal" ? entry.value : undefined
    if (typeof literal !== "string") {
      return {
        error: `Argument '${key}' on InputObject '${inputType}' has an invalid value (${JSON.stringify(literal)}). Expected type '${type}'.`,
      }
    }
    out[key] = literal
  }
  return { projectPath: out.projectPath!, iid: out.iid! }
}

function mutationTypeObject(context: GraphqlContext) {
  const names = [...baseMutations, ...(context.requestChangesAvailable ? ["mergeRequestRequestChanges"] : [])].sort()
  return {
    name: "Mutation",
    kind: "OBJECT",
    fields: names.map((name) => ({ name, description: null, __typename: "__Field" })),
    __typename: "__Type",
  }
}

function typeObject(name: string, context: GraphqlContext): unknown {
  if (name === "Mutation") return mutationTypeObject(context)
  if (name === "Query")
    return {
      name: "Query",
      kind: "OBJECT",
      fields: [{ name: "currentUser" }, { name: "project" }],
      __typename: "__Type",
    }
  if (!context.requestChangesAvailable) return null
  if (name === "MergeRequestRequestChangesInput") {
    return {
      name,
      kind: "INPUT_OBJECT",
      inputFields: ["clientMutationId", "projectPath", "iid"].map((field) => ({ name: field })),
      fields: null,
      __typename: "__Type",
    }
  }
  if (name === "MergeRequestRequestChangesPayload") {
    return {
      name,
      kind: "OBJECT",
      fields: ["clientMutationId", "errors", "mergeRequest"].map((field) => ({ name: field })),
      __typename: "__Type",
    }
  }
  return null
}

/** Picks the selected keys (aliases honoured) out of a plain value; unknown fields come back null. */
function select(selection: Field[] | null, value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (Array.isArray(value)) return value.map((item) => select(selection, item))
  if (!selection || typeof value !== "object") return value
  const record = value as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const field of selection) out[field.alias ?? field.name] = select(field.selection, record[field.name] ?? null)
  return out
}

function evaluate(node: ValueNode | undefined, variables: Record<string, unknown>): unknown {
  if (!node) return null
  if (node.kind === "variable") return variables[node.name]
  if (node.kind === "literal") return node.value
  if (node.kind === "list") return node.items.map((item) => evaluate(item, variables))
  return Object.fromEntries(Object.entries(node.fields).map(([key, item]) => [key, evaluate(item, variables)]))
}

// graphql-js parses; the fake keeps its own small tree of what it resolves. A syntax error answers
// as graphql-ruby does (HTTP 200, a top-level `errors` entry with the location).
function parseDocument(query: string): Operation[] {
  const document = parse(query, { noLocation: false })
  const operations: Operation[] = []
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      throw located("fragments are not supported by the GitLab fake", definition)
    if (definition.kind !== Kind.OPERATION_DEFINITION)
      throw located(`${definition.kind} is not an executable definition`, definition)
    if (definition.operation === "subscription") throw located("subscriptions are not supported", definition)
    operations.push({
      type: definition.operation,
      name: definition.name?.value ?? null,
      selection: fieldsOf(definition.selectionSet),
    })
  }
  return operations
}

function fieldsOf(set: SelectionSetNode): Field[] {
  return set.selections.map((selection) => {
    if (selection.kind !== Kind.FIELD) throw located("fragments are not supported by the GitLab fake", selection)
    return fieldOf(selection)
  })
}

function fieldOf(node: FieldNode): Field {
  const start = node.name.loc ? getLocation(node.name.loc.source, node.name.loc.start) : { line: 1, column: 1 }
  return {
    alias: node.alias?.value ?? null,
    name: node.name.value,
    args: Object.fromEntries(
      (node.arguments ?? []).map((argument) => [argument.name.value, argumentValue(argument.value)]),
    ),
    selection: node.selectionSet ? fieldsOf(node.selectionSet) : null,
    line: start.line,
    column: start.column,
  }
}

function argumentValue(node: ValueAstNode): ValueNode {
  switch (node.kind) {
    case Kind.VARIABLE:
      return { kind: "variable", name: node.name.value }
    case Kind.LIST:
      return { kind: "list", items: node.values.map(argumentValue) }
    case Kind.OBJECT:
      return {
        kind: "object",
        fields: Object.fromEntries(node.fields.map((field) => [field.name.value, argumentValue(field.value)])),
      }
    case Kind.INT:
    case Kind.FLOAT:
      return { kind: "literal", value: Number(node.value) }
    case Kind.NULL:
      return { kind: "literal", value: null }
    default:
      return { kind: "literal", value: node.value }
  }
}

function located(message: string, node: { loc?: Location | undefined }): GraphQLError {
  return new GraphQLError(message, { nodes: node.loc ? [node as never] : [] })
}
