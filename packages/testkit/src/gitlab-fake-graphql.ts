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
  const variables = (typeof request.variables === "object" && request.variables !== null ? request.variables : {}) as Record<string, unknown>
  let operations: Operation[]
  try {
    operations = new Parser(query).document()
  } catch (error) {
    const parseError = error as ParseError
    return { status: 200, body: { errors: [{ message: parseError.message, locations: [{ line: parseError.line, column: parseError.column }] }] } }
  }
  const wanted = typeof request.operationName === "string" ? operations.find((op) => op.name === request.operationName) : operations[0]
  if (!wanted) return { status: 200, body: { errors: [{ message: "No operation named \"" + String(request.operationName) + "\"" }] } }
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
      return { status: 200, body: { errors: [{ message: result.argumentError, locations: [{ line: field.line, column: field.column }], path: [pathRoot, field.name] }] } }
    }
    data[key] = result.value
    if (result.error) errors.push({ message: result.error, locations: [{ line: field.line, column: field.column }], path: [key] })
  }
  return { status: 200, body: errors.length > 0 ? { data, errors } : { data } }
}

type RootResult = { value: unknown; error?: string } | { undefinedField: true } | { argumentError: string }

const notFoundMessage = "The resource that you are attempting to access does not exist or you don't have permission to perform this action"

function resolveRoot(field: Field, rootType: string, variables: Record<string, unknown>, context: GraphqlContext): RootResult {
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
      value: select(field.selection, { id: `gid://gitlab/User/${user.id}`, username: user.username, name: user.name, bot: user.bot, __typename: "CurrentUser" }),
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
    const payload = { mergeRequest: outcome.mergeRequest, errors: outcome.errors, clientMutationId: null, __typename: "MergeRequestRequestChangesPayload" }
    return { value: select(field.selection, payload) }
  }
  return { undefinedField: true }
}

function evaluateInput(node: ValueNode, variables: Record<string, unknown>): { projectPath: string; iid: string } | { error: string } {
  const inputType = "MergeRequestRequestChangesInput"
  const value = node.kind === "variable" ? variables[node.name] : undefined
  if (node.kind === "variable") {
    if (typeof value !== "object" || value === null) return { error: `Variable $${node.name} of type ${inputType}! was provided invalid value` }
    const record = value as Record<string, unknown>
    for (const key of ["projectPath", "iid"]) {
      if (typeof record[key] !== "string") return { error: `Variable $${node.name} of type ${inputType}! was provided invalid value for ${key} (Expected value to not be null)` }
    }
    return { projectPath: record.projectPath as string, iid: record.iid as string }
  }
  if (node.kind !== "object") return { error: `Argument 'input' on Field 'mergeRequestRequestChanges' has an invalid value. Expected type '${inputType}!'.` }
  const out: Record<string, string> = {}
  for (const [key, type] of [["projectPath", "ID!"], ["iid", "String!"]] as const) {
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
      return { error: `Argument '${key}' on InputObject '${inputType}' has an invalid value (${JSON.stringify(literal)}). Expected type '${type}'.` }
    }
    out[key] = literal
  }
  return { projectPath: out.projectPath!, iid: out.iid! }
}

function mutationTypeObject(context: GraphqlContext) {
  const names = [...baseMutations, ...(context.requestChangesAvailable ? ["mergeRequestRequestChanges"] : [])].sort()
  return { name: "Mutation", kind: "OBJECT", fields: names.map((name) => ({ name, description: null, __typename: "__Field" })), __typename: "__Type" }
}

function typeObject(name: string, context: GraphqlContext): unknown {
  if (name === "Mutation") return mutationTypeObject(context)
  if (name === "Query") return { name: "Query", kind: "OBJECT", fields: [{ name: "currentUser" }, { name: "project" }], __typename: "__Type" }
  if (!context.requestChangesAvailable) return null
  if (name === "MergeRequestRequestChangesInput") {
    return { name, kind: "INPUT_OBJECT", inputFields: ["clientMutationId", "projectPath", "iid"].map((field) => ({ name: field })), fields: null, __typename: "__Type" }
  }
  if (name === "MergeRequestRequestChangesPayload") {
    return { name, kind: "OBJECT", fields: ["clientMutationId", "errors", "mergeRequest"].map((field) => ({ name: field })), __typename: "__Type" }
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

class ParseError extends Error {
  constructor(
    message: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(message)
  }
}

interface Token {
  kind: "name" | "punct" | "string" | "number" | "eof"
  value: string
  line: number
  column: number
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  let line = 1
  let lineStart = 0
  while (i < source.length) {
    const char = source[i]!
    if (char === "\n") {
      line += 1
      i += 1
      lineStart = i
      continue
    }
    if (/[\s,\ufeff]/.test(char)) {
      i += 1
      continue
    }
    if (char === "#") {
      while (i < source.length && source[i] !== "\n") i += 1
      continue
    }
    const column = i - lineStart + 1
    if (source.startsWith("...", i)) {
      tokens.push({ kind: "punct", value: "...", line, column })
      i += 3
      continue
    }
    if ("{}()[]:!$=@|&".includes(char)) {
      tokens.push({ kind: "punct", value: char, line, column })
      i += 1
      continue
    }
    if (source.startsWith('"""', i)) {
      const end = source.indexOf('"""', i + 3)
      if (end < 0) throw new ParseError("Unterminated block string", line, column)
      tokens.push({ kind: "string", value: source.slice(i + 3, end), line, column })
      i = end + 3
      continue
    }
    if (char === '"') {
      let j = i + 1
      let text = ""
      while (j < source.length && source[j] !== '"') {
        if (source[j] === "\\") {
          const next = source[j + 1] ?? ""
          if (next === "u") {
            text += String.fromCharCode(Number.parseInt(source.slice(j + 2, j + 6), 16))
            j += 6
            continue
          }
          text += ({ n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" } as Record<string, string>)[next] ?? next
          j += 2
          continue
        }
        text += source[j]
        j += 1
      }
      if (j >= source.length) throw new ParseError("Unterminated string", line, column)
      tokens.push({ kind: "string", value: text, line, column })
      i = j + 1
      continue
    }
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(source.slice(i))
    if (number) {
      tokens.push({ kind: "number", value: number[0], line, column })
      i += number[0].length
      continue
    }
    const name = /^[_A-Za-z][_0-9A-Za-z]*/.exec(source.slice(i))
    if (name) {
      tokens.push({ kind: "name", value: name[0], line, column })
      i += name[0].length
      continue
    }
    throw new ParseError(`Parse error on "${char}" at [${line}, ${column}]`, line, column)
  }
  tokens.push({ kind: "eof", value: "", line, column: i - lineStart + 1 })
  return tokens
}

class Parser {
  private readonly tokens: Token[]
  private position = 0

  constructor(source: string) {
    this.tokens = tokenize(source)
  }

  document(): Operation[] {
    const operations: Operation[] = []
    while (this.peek().kind !== "eof") {
      if (this.peek().kind === "name" && this.peek().value === "fragment") throw this.error("fragments are not supported by the GitLab fake")
      operations.push(this.operation())
    }
    if (operations.length === 0) throw this.error("Unexpected end of document")
    return operations
  }

  private operation(): Operation {
    const token = this.peek()
    if (token.kind === "punct" && token.value === "{") return { type: "query", name: null, selection: this.selectionSet() }
    if (token.kind !== "name" || (token.value !== "query" && token.value !== "mutation")) throw this.error(`Parse error on "${token.value}"`)
    this.position += 1
    const type = token.value
    let name: string | null = null
    if (this.peek().kind === "name") name = this.next().value
    if (this.isPunct("(")) this.skipBalanced("(", ")")
    while (this.isPunct("@")) this.directive()
    return { type, name, selection: this.selectionSet() }
  }

  private selectionSet(): Field[] {
    this.expect("{")
    const fields: Field[] = []
    while (!this.isPunct("}")) {
      if (this.peek().kind === "eof") throw this.error("Unexpected end of document")
      if (this.isPunct("...")) throw this.error("fragments are not supported by the GitLab fake")
      fields.push(this.field())
    }
    this.expect("}")
    return fields
  }

  private field(): Field {
    const first = this.next()
    if (first.kind !== "name") throw this.error(`Parse error on "${first.value}"`, first)
    let alias: string | null = null
    let nameToken = first
    if (this.isPunct(":")) {
      this.position += 1
      alias = first.value
      nameToken = this.next()
      if (nameToken.kind !== "name") throw this.error(`Parse error on "${nameToken.value}"`, nameToken)
    }
    const args: Record<string, ValueNode> = {}
    if (this.isPunct("(")) {
      this.position += 1
      while (!this.isPunct(")")) {
        const argName = this.next()
        if (argName.kind !== "name") throw this.error(`Parse error on "${argName.value}"`, argName)
        this.expect(":")
        args[argName.value] = this.value()
      }
      this.expect(")")
    }
    while (this.isPunct("@")) this.directive()
    const selection = this.isPunct("{") ? this.selectionSet() : null
    return { alias, name: nameToken.value, args, selection, line: nameToken.line, column: nameToken.column }
  }

  private value(): ValueNode {
    const token = this.next()
    if (token.kind === "punct" && token.value === "$") return { kind: "variable", name: this.next().value }
    if (token.kind === "string") return { kind: "literal", value: token.value }
    if (token.kind === "number") return { kind: "literal", value: Number(token.value) }
    if (token.kind === "name") {
      if (token.value === "true") return { kind: "literal", value: true }
      if (token.value === "false") return { kind: "literal", value: false }
      if (token.value === "null") return { kind: "literal", value: null }
      return { kind: "literal", value: token.value }
    }
    if (token.kind === "punct" && token.value === "[") {
      const items: ValueNode[] = []
      while (!this.isPunct("]")) items.push(this.value())
      this.expect("]")
      return { kind: "list", items }
    }
    if (token.kind === "punct" && token.value === "{") {
      const fields: Record<string, ValueNode> = {}
      while (!this.isPunct("}")) {
        const key = this.next()
        this.expect(":")
        fields[key.value] = this.value()
      }
      this.expect("}")
      return { kind: "object", fields }
    }
    throw this.error(`Parse error on "${token.value}"`, token)
  }

  private directive(): void {
    this.expect("@")
    this.next()
    if (this.isPunct("(")) this.skipBalanced("(", ")")
  }

  private skipBalanced(open: string, close: string): void {
    let depth = 0
    do {
      const token = this.next()
      if (token.kind === "eof") throw this.error("Unexpected end of document")
      if (token.kind === "punct" && token.value === open) depth += 1
      if (token.kind === "punct" && token.value === close) depth -= 1
    } while (depth > 0)
  }

  private peek(): Token {
    return this.tokens[this.position]!
  }

  private next(): Token {
    const token = this.tokens[this.position]!
    if (token.kind !== "eof") this.position += 1
    return token
  }

  private isPunct(value: string): boolean {
    const token = this.peek()
    return token.kind === "punct" && token.value === value
  }

  private expect(value: string): void {
    const token = this.next()
    if (token.kind !== "punct" || token.value !== value) throw this.error(`Parse error on "${token.value || "end of document"}" (expected "${value}")`, token)
  }

  private error(message: string, token: Token = this.peek()): ParseError {
    return new ParseError(`${message} at [${token.line}, ${token.column}]`, token.line, token.column)
  }
}
