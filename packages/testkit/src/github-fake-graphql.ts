import {
  buildSchema,
  type DocumentNode,
  execute,
  FieldsOnCorrectTypeRule,
  GraphQLError,
  getNamedType,
  parse,
  specifiedRules,
  type ValidationContext,
  type ValidationRule,
  validate,
} from "graphql"
import type { Reply } from "./github-fake-http"
import type { FakeReviews } from "./github-fake-reviews"
import type {
  FakeGithubActor,
  FakeGithubPull,
  FakeGithubRepo,
  FakeGithubUser,
  FakeReviewComment,
  FakeReviewThread,
} from "./github-fake-types"
import { canRead, canWrite, type FakeWorld } from "./github-fake-world"

// POST /graphql: a subset of GitHub's public schema (types and fields copied from
// octokit/graphql-schema's schema.graphql) executed by graphql-js, with errors in GitHub's shape:
// HTTP 200 and a top-level `errors` array whose entries carry `type`, `path`, `locations` and
// `message` (docs/github.md, "GraphQL").

const sdl = /* GraphQL */ `
  scalar DateTime
  scalar URI
  scalar GitObjectID

  interface Node { id: ID! }
  interface Actor { login: String! url: URI! avatarUrl(size: Int): URI! resourcePath: URI! }
  interface RepositoryOwner { id: ID! login: String! url: URI! }

  type User implements Actor & Node & RepositoryOwner {
    id: ID! login: String! url: URI! avatarUrl(size: Int): URI! resourcePath: URI! databaseId: Int name: String
  }
  type Bot implements Actor & Node {
    id: ID! login: String! url: URI! avatarUrl(size: Int): URI! resourcePath: URI! databaseId: Int
  }
  type Organization implements Actor & Node & RepositoryOwner {
    id: ID! login: String! url: URI! avatarUrl(size: Int): URI! resourcePath: URI! databaseId: Int
  }

  type RateLimit { cost: Int! limit: Int! nodeCount: Int! remaining: Int! resetAt: DateTime! used: Int! }

  type Query {
    repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
    rateLimit(dryRun: Boolean = false): RateLimit
  }

  type Repository implements Node {
    id: ID! databaseId: Int name: String! nameWithOwner: String! isPrivate: Boolean! owner: RepositoryOwner! url: URI!
    pullRequest(number: Int!): PullRequest
  }

  enum PullRequestState { CLOSED MERGED OPEN }
  enum DiffSide { LEFT RIGHT }
  enum PullRequestReviewThreadSubjectType { FILE LINE }
  enum PullRequestReviewState { APPROVED CHANGES_REQUESTED COMMENTED DISMISSED PENDING }

  type PullRequest implements Node {
    id: ID! databaseId: Int number: Int! title: String! body: String! url: URI! state: PullRequestState!
    isDraft: Boolean! author: Actor headRefName: String! headRefOid: GitObjectID! baseRefName: String!
    baseRefOid: GitObjectID! repository: Repository!
    reviewThreads(after: String, before: String, first: Int, last: Int): PullRequestReviewThreadConnection!
  }

  type PageInfo { endCursor: String hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String }

  type PullRequestReviewThreadConnection {
    edges: [PullRequestReviewThreadEdge] nodes: [PullRequestReviewThread] pageInfo: PageInfo! totalCount: Int!
  }
  type PullRequestReviewThreadEdge { cursor: String! node: PullRequestReviewThread }

  type PullRequestReviewThread implements Node {
    id: ID! path: String! line: Int originalLine: Int startLine: Int originalStartLine: Int
    diffSide: DiffSide! startDiffSide: DiffSide isResolved: Boolean! isOutdated: Boolean! isCollapsed: Boolean!
    resolvedBy: User subjectType: PullRequestReviewThreadSubjectType! viewerCanReply: Boolean!
    viewerCanResolve: Boolean! viewerCanUnresolve: Boolean! pullRequest: PullRequest! repository: Repository!
    comments(after: String, before: String, first: Int, last: Int, skip: Int): PullRequestReviewCommentConnection!
  }

  type PullRequestReviewCommentConnection {
    edges: [PullRequestReviewCommentEdge] nodes: [PullRequestReviewComment] pageInfo: PageInfo! totalCount: Int!
  }
  type PullRequestReviewCommentEdge { cursor: String! node: PullRequestReviewComment }

  type PullRequestReviewComment implements Node {
    id: ID! databaseId: Int fullDatabaseId: String body: String! author: Actor createdAt: DateTime! updatedAt: DateTime!
    path: String! line: Int originalLine: Int startLine: Int originalStartLine: Int diffHunk: String! outdated: Boolean!
    replyTo: PullRequestReviewComment url: URI! pullRequestReview: PullRequestReview
  }

  type PullRequestReview implements Node {
    id: ID! databaseId: Int body: String! state: PullRequestReviewState! author: Actor submittedAt: DateTime
  }

  input ResolveReviewThreadInput { clientMutationId: String threadId: ID! }
  type ResolveReviewThreadPayload { clientMutationId: String thread: PullRequestReviewThread }
  input UnresolveReviewThreadInput { clientMutationId: String threadId: ID! }
  type UnresolveReviewThreadPayload { clientMutationId: String thread: PullRequestReviewThread }

  type Mutation {
    resolveReviewThread(input: ResolveReviewThreadInput!): ResolveReviewThreadPayload
    unresolveReviewThread(input: UnresolveReviewThreadInput!): UnresolveReviewThreadPayload
  }
`

const schema = buildSchema(sdl)

export interface GraphqlRequestContext {
  actor: FakeGithubActor
  rateLimit: { limit: number; remaining: number; used: number; reset: number }
}

/** Runs one GraphQL request body (`{ query, variables, operationName }`) for an authenticated actor. */
export function answerGraphql(
  world: FakeWorld,
  reviews: FakeReviews,
  body: unknown,
  context: GraphqlRequestContext,
): Reply {
  const request = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>
  if (typeof request.query !== "string")
    return { status: 200, body: { errors: [{ message: "A query attribute must be specified and must be a string." }] } }
  let document: DocumentNode
  try {
    document = parse(request.query)
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    return { status: 200, body: { errors: [{ message: error.message, locations: error.locations ?? [] }] } }
  }
  const rules = [...specifiedRules.filter((rule) => rule !== FieldsOnCorrectTypeRule), undefinedFieldRule]
  const invalid = validate(schema, document, rules)
  if (invalid.length > 0) return { status: 200, body: { errors: invalid.map(formatError) } }
  const resolvers = createResolvers(world, reviews, context)
  const result = execute({
    schema,
    document,
    rootValue: resolvers,
    variableValues: (request.variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: typeof request.operationName === "string" ? request.operationName : undefined,
  }) as { data?: unknown; errors?: readonly GraphQLError[] }
  const out: Record<string, unknown> = {}
  if (result.data !== undefined) out.data = result.data
  if (result.errors && result.errors.length > 0) out.errors = result.errors.map(formatError)
  return { status: 200, body: out }
}

/** graphql-ruby's wording for an unknown field, with GitHub's `extensions.code`. */
const undefinedFieldRule: ValidationRule = (context: ValidationContext) => {
  const path: string[] = []
  return {
    OperationDefinition: {
      enter(node) {
        path.push(node.name ? `${node.operation} ${node.name.value}` : node.operation)
      },
      leave() {
        path.pop()
      },
    },
    Field: {
      enter(node) {
        path.push(node.name.value)
        const parent = context.getParentType()
        if (parent && !context.getFieldDef() && node.name.value !== "__typename") {
          const typeName = getNamedType(parent).name
          context.reportError(
            new GraphQLError(`Field '${node.name.value}' doesn't exist on type '${typeName}'`, {
              nodes: node,
              path: [...path],
              extensions: { code: "undefinedField", typeName, fieldName: node.name.value },
            }),
          )
        }
      },
      leave() {
        path.pop()
      },
    },
  }
}

function formatError(error: GraphQLError): Record<string, unknown> {
  const { type, ...extensions } = (error.extensions ?? {}) as Record<string, unknown>
  return {
    ...(typeof type === "string" ? { type } : {}),
    ...(error.path ? { path: error.path } : {}),
    ...(Object.keys(extensions).length > 0 ? { extensions } : {}),
    ...(error.locations ? { locations: error.locations } : {}),
    message: error.message,
  }
}

const notFound = (message: string) => new GraphQLError(message, { extensions: { type: "NOT_FOUND" } })
const forbidden = (message: string) =>
  new GraphQLError(message, { extensions: { type: "FORBIDDEN", saml_failure: false } })

const cursorOf = (index: number) => Buffer.from(`cursor:v2:${index}`).toString("base64")
const indexOf = (cursor: string) => {
  const match = /^cursor:v2:(\d+)$/.exec(Buffer.from(cursor, "base64").toString())
  if (!match)
    throw new GraphQLError(`\`${cursor}\` does not appear to be a valid cursor.`, {
      extensions: { type: "INVALID_CURSOR_ARGUMENTS" },
    })
  return Number(match[1])
}

/** A Relay connection with GitHub's limits: `first` or `last` is required, and at most 100. */
function connection<T, R>(name: string, items: T[], args: Record<string, unknown>, render: (item: T) => R) {
  const first = typeof args.first === "number" ? args.first : null
  const last = typeof args.last === "number" ? args.last : null
  if (first === null && last === null)
    throw new GraphQLError(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${name}\` connection.`,
      {
        extensions: { type: "MISSING_PAGINATION_BOUNDARIES" },
      },
    )
  for (const [key, value] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (value !== null && value > 100)
      throw new GraphQLError(
        `Requesting ${value} records on the \`${name}\` connection exceeds the \`${key}\` limit of 100 records.`,
        {
          extensions: { type: "EXCESSIVE_PAGINATION" },
        },
      )
  }
  let start = typeof args.after === "string" ? indexOf(args.after) + 1 : 0
  let end = typeof args.before === "string" ? indexOf(args.before) : items.length
  if (typeof args.skip === "number") start += args.skip
  if (first !== null) end = Math.min(end, start + first)
  if (last !== null) start = Math.max(start, end - last)
  const slice = items
    .slice(start, end)
    .map((item, offset) => ({ cursor: cursorOf(start + offset), node: render(item) }))
  return {
    edges: slice,
    nodes: slice.map((edge) => edge.node),
    totalCount: items.length,
    pageInfo: {
      startCursor: slice[0]?.cursor ?? null,
      endCursor: slice.at(-1)?.cursor ?? null,
      hasNextPage: end < items.length,
      hasPreviousPage: start > 0,
    },
  }
}

function createResolvers(world: FakeWorld, reviews: FakeReviews, context: GraphqlRequestContext) {
  const { state } = world
  const web = "https://github.com"

  // GitHub's GraphQL names an App by its slug: REST "github-actions[bot]" is "github-actions" here.
  const actor = (user: FakeGithubUser) => ({
    __typename: user.type === "Bot" ? "Bot" : "User",
    id: user.nodeId,
    databaseId: user.id,
    login: user.type === "Bot" ? user.login.replace(/\[bot\]$/, "") : user.login,
    name: null,
    url: user.type === "Bot" ? `${web}/apps/${user.login.replace(/\[bot\]$/, "")}` : `${web}/${user.login}`,
    resourcePath: user.type === "Bot" ? `/apps/${user.login.replace(/\[bot\]$/, "")}` : `/${user.login}`,
    avatarUrl: () => `https://avatars.githubusercontent.com/u/${user.id}?v=4`,
  })

  const repository = (repo: FakeGithubRepo): Record<string, unknown> => ({
    __typename: "Repository",
    id: repo.nodeId,
    databaseId: repo.id,
    name: repo.name,
    nameWithOwner: repo.fullName,
    isPrivate: repo.private,
    url: `${web}/${repo.fullName}`,
    owner: () => {
      const known = world.userByLogin(repo.owner)
      return known
        ? actor(known)
        : { __typename: "Organization", id: `O_${repo.owner}`, login: repo.owner, url: `${web}/${repo.owner}` }
    },
    pullRequest: ({ number }: { number: number }) => {
      const pull = world.findPull(repo, number)
      if (!pull) throw notFound(`Could not resolve to a PullRequest with the number of ${number}.`)
      return pullRequest(repo, pull)
    },
  })

  const pullRequest = (repo: FakeGithubRepo, pull: FakeGithubPull): Record<string, unknown> => {
    const head = pull.versions.at(-1)!
    return {
      __typename: "PullRequest",
      id: pull.nodeId,
      databaseId: pull.id,
      number: pull.number,
      title: pull.title,
      body: pull.body ?? "",
      url: `${web}/${repo.fullName}/pull/${pull.number}`,
      state: pull.state === "open" ? "OPEN" : "CLOSED",
      isDraft: pull.draft,
      author: actor(pull.author),
      headRefName: pull.headRef,
      headRefOid: head.headSha,
      baseRefName: pull.baseRef,
      baseRefOid: head.baseSha,
      repository: () => repository(repo),
      reviewThreads: (args: Record<string, unknown>) => {
        const threads = state.threads.filter(
          (thread) =>
            thread.repo === repo.fullName &&
            thread.pullNumber === pull.number &&
            // threads of someone else's pending review are invisible
            !threadComments(thread).every(
              (comment) => reviews.isPending(comment) && comment.user.id !== context.actor.user.id,
            ),
        )
        return connection("reviewThreads", threads, args, (thread) => reviewThread(repo, pull, thread))
      },
    }
  }

  const threadComments = (thread: FakeReviewThread) =>
    thread.commentIds.map((id) => state.reviewComments.find((comment) => comment.id === id)!).filter(Boolean)

  const mayResolve = (repo: FakeGithubRepo, pull: FakeGithubPull) =>
    canWrite(world.permission(context.actor, repo)) || pull.author.id === context.actor.user.id

  const reviewThread = (
    repo: FakeGithubRepo,
    pull: FakeGithubPull,
    thread: FakeReviewThread,
  ): Record<string, unknown> => ({
    __typename: "PullRequestReviewThread",
    id: thread.nodeId,
    path: thread.path,
    line: thread.line,
    originalLine: thread.originalLine,
    startLine: thread.startLine,
    originalStartLine: thread.originalStartLine,
    diffSide: thread.side,
    startDiffSide: thread.startSide,
    isResolved: thread.isResolved,
    isOutdated: thread.isOutdated,
    isCollapsed: thread.isResolved,
    resolvedBy: thread.resolvedBy ? actor(thread.resolvedBy) : null,
    subjectType: "LINE",
    viewerCanReply: canRead(world.permission(context.actor, repo)),
    viewerCanResolve: !thread.isResolved && mayResolve(repo, pull),
    viewerCanUnresolve: thread.isResolved && mayResolve(repo, pull),
    pullRequest: () => pullRequest(repo, pull),
    repository: () => repository(repo),
    comments: (args: Record<string, unknown>) =>
      connection("comments", threadComments(thread), args, (comment) => reviewComment(repo, comment)),
  })

  const reviewComment = (repo: FakeGithubRepo, comment: FakeReviewComment): Record<string, unknown> => {
    const review = state.reviews.find((candidate) => candidate.id === comment.reviewId)
    const parent = comment.inReplyToId === null ? null : state.reviewComments.find((c) => c.id === comment.inReplyToId)
    return {
      __typename: "PullRequestReviewComment",
      id: comment.nodeId,
      databaseId: comment.id,
      fullDatabaseId: String(comment.id),
      body: comment.body,
      author: actor(comment.user),
      createdAt: comment.createdAt,
      updatedAt: comment.updatedAt,
      path: comment.path,
      line: comment.line,
      originalLine: comment.originalLine,
      startLine: comment.startLine,
      originalStartLine: comment.originalStartLine,
      diffHunk: comment.diffHunk,
      outdated: comment.line === null,
      url: `${web}/${repo.fullName}/pull/${comment.pullNumber}#discussion_r${comment.id}`,
      replyTo: () => (parent ? reviewComment(repo, parent) : null),
      pullRequestReview: review
        ? {
            __typename: "PullRequestReview",
            id: review.nodeId,
            databaseId: review.id,
            body: review.body,
            state: review.state,
            author: actor(review.user),
            submittedAt: review.submittedAt,
          }
        : null,
    }
  }

  const visibleRepo = (owner: string, name: string) => {
    const repo = world.findRepo(owner, name)
    return repo && canRead(world.permission(context.actor, repo)) ? repo : undefined
  }

  const setResolved = (threadId: string, resolved: boolean, mutation: string) => {
    const thread = state.threads.find((candidate) => candidate.nodeId === threadId)
    const repo = thread ? state.repos.find((candidate) => candidate.fullName === thread.repo) : undefined
    const pull = thread && repo ? world.findPull(repo, thread.pullNumber) : undefined
    if (!thread || !repo || !pull || !canRead(world.permission(context.actor, repo)))
      throw notFound(`Could not resolve to a node with the global id of '${threadId}'`)
    if (
      context.actor.user.type === "Bot" &&
      (!context.actor.resolveThreads || !canWrite(world.permission(context.actor, repo)))
    )
      throw forbidden("Resource not accessible by integration")
    if (!mayResolve(repo, pull))
      throw forbidden(`${context.actor.user.login} does not have the correct permissions to execute \`${mutation}\``)
    thread.isResolved = resolved
    thread.resolvedBy = resolved ? context.actor.user : null
    return reviewThread(repo, pull, thread)
  }

  return {
    repository: ({ owner, name }: { owner: string; name: string }) => {
      const repo = visibleRepo(owner, name)
      if (!repo) throw notFound(`Could not resolve to a Repository with the name '${owner}/${name}'.`)
      return repository(repo)
    },
    rateLimit: () => ({
      cost: 1,
      limit: context.rateLimit.limit,
      nodeCount: 0,
      remaining: context.rateLimit.remaining,
      used: context.rateLimit.used,
      resetAt: new Date(context.rateLimit.reset * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    }),
    resolveReviewThread: ({ input }: { input: { threadId: string; clientMutationId?: string } }) => ({
      clientMutationId: input.clientMutationId ?? null,
      thread: setResolved(input.threadId, true, "ResolveReviewThread"),
    }),
    unresolveReviewThread: ({ input }: { input: { threadId: string; clientMutationId?: string } }) => ({
      clientMutationId: input.clientMutationId ?? null,
      thread: setResolved(input.threadId, false, "UnresolveReviewThread"),
    }),
  }
}
