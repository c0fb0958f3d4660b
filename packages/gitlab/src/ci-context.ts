import { readFileSync } from "node:fs"
import * as z from "zod"
import { GitlabAuthError, GitlabContextError } from "./errors"

/** The environment the provider reads; the CLI passes its own `process.env`. */
export type Environment = Record<string, string | undefined>

/** Where the merge request lives and how to talk to GitLab, as the CI job describes it. */
export interface CiContext {
  /** REST base, e.g. `https://gitlab.example.com/api/v4` (no trailing slash). */
  apiUrl: string
  /** Instance URL, e.g. `https://gitlab.example.com`; GraphQL lives at `<serverUrl>/api/graphql`. */
  serverUrl: string
  /** The project that owns the merge request (the target project, also in fork pipelines). */
  projectId: string
  iid: number
  /** `CI_MERGE_REQUEST_DIFF_BASE_SHA`, a fallback when GitLab has not computed `diff_refs` yet. */
  diffBaseSha: string | null
  pipelineSource: string | null
  /** The review bot's token (`GITLAB_TOKEN`). */
  token: string
  /**
   * The merge request note that started this pipeline: a project webhook for comment events posts
   * to the pipeline trigger API, and the pipeline reads the event from TRIGGER_PAYLOAD
   * (docs/gitlab.md, "Comment-triggered pipelines"). Null in a merge request pipeline.
   */
  note: NoteEvent | null
}

/** A note on a merge request as GitLab's note webhook describes it. Its text is untrusted. */
export interface NoteEvent {
  id: number
  body: string
  authorId: number
  authorUsername: string
  discussionId: string | null
  /** `DiffNote` for a note on the diff, `DiscussionNote` for a thread reply, null for a plain comment. */
  type: string | null
  /** `create` or `update` where GitLab says (newer versions); null when the payload does not say. */
  action: string | null
}

const tokenHint =
  "create a project access token with the `api` scope and the Developer role (Settings > Access tokens), " +
  "then store it as a masked CI/CD variable named GITLAB_TOKEN (Settings > CI/CD > Variables)"

/**
 * True when the environment is a GitLab merge request pipeline, or a pipeline a note webhook
 * triggered (`CI_PIPELINE_SOURCE=trigger` with TRIGGER_PAYLOAD); `--vcs auto` picks gitlab then.
 */
export function isMergeRequestPipeline(env: Environment): boolean {
  return present(env.CI_MERGE_REQUEST_IID) !== null || isNoteTrigger(env)
}

function isNoteTrigger(env: Environment): boolean {
  return present(env.CI_PIPELINE_SOURCE) === "trigger" && present(env.TRIGGER_PAYLOAD) !== null
}

/**
 * Reads the CI context from the environment. Throws GitlabContextError outside a merge request
 * pipeline or when the API URL/project is missing, GitlabAuthError when there is no usable token
 * (CI_JOB_TOKEN alone cannot post notes or approve).
 */
export function readCiContext(env: Environment, readFile: (path: string) => string = readUtf8): CiContext {
  if (present(env.CI_MERGE_REQUEST_IID) === null && isNoteTrigger(env)) return readTriggerContext(env, readFile)
  const iidText = present(env.CI_MERGE_REQUEST_IID)
  if (iidText === null) {
    const source = present(env.CI_PIPELINE_SOURCE)
    throw new GitlabContextError(
      `not a merge request pipeline: CI_MERGE_REQUEST_IID is not set${source ? ` (CI_PIPELINE_SOURCE=${source})` : ""}`,
      {
        missing: ["CI_MERGE_REQUEST_IID"],
        hint: "run the review job only in merge request pipelines: rules: - if: $CI_PIPELINE_SOURCE == 'merge_request_event'",
      },
    )
  }
  const iid = Number(iidText)
  if (!Number.isInteger(iid) || iid <= 0) {
    throw new GitlabContextError(`CI_MERGE_REQUEST_IID is not a merge request number: ${JSON.stringify(iidText)}`, {
      missing: ["CI_MERGE_REQUEST_IID"],
      hint: "CI_MERGE_REQUEST_IID must be the merge request's number (its !N)",
    })
  }

  const urls = readUrls(env)
  const projectId = present(env.CI_MERGE_REQUEST_PROJECT_ID) ?? present(env.CI_PROJECT_ID)
  if (projectId === null) {
    throw new GitlabContextError(
      "cannot tell the merge request's project: CI_MERGE_REQUEST_PROJECT_ID and CI_PROJECT_ID are not set",
      {
        missing: ["CI_MERGE_REQUEST_PROJECT_ID", "CI_PROJECT_ID"],
        hint: "set CI_MERGE_REQUEST_PROJECT_ID to the project's id or path",
      },
    )
  }

  return {
    ...urls,
    projectId,
    iid,
    diffBaseSha: present(env.CI_MERGE_REQUEST_DIFF_BASE_SHA),
    pipelineSource: present(env.CI_PIPELINE_SOURCE),
    token: readToken(env),
    note: null,
  }
}

// The note webhook's payload (GitLab's Gitlab::DataBuilder::Note; docs/gitlab.md): only what the
// review needs, checked, so a payload of another event says so instead of reviewing nothing.
const notePayload = z.object({
  object_kind: z.literal("note"),
  project_id: z.number().int().optional(),
  project: z.object({ id: z.number().int(), path_with_namespace: z.string().optional() }).optional(),
  user: z.object({ id: z.number().int().optional(), username: z.string().min(1) }),
  object_attributes: z.object({
    id: z.number().int(),
    note: z.string(),
    noteable_type: z.string(),
    author_id: z.number().int(),
    discussion_id: z.string().nullish(),
    type: z.string().nullish(),
    action: z.string().nullish(),
  }),
  merge_request: z.object({ iid: z.number().int().positive() }).optional(),
})

function readTriggerContext(env: Environment, readFile: (path: string) => string): CiContext {
  const path = present(env.TRIGGER_PAYLOAD) as string
  const hint =
    "point the project's comment webhook at the pipeline trigger API (docs/gitlab.md, Comment-triggered pipelines); TRIGGER_PAYLOAD then holds the note event"
  let payload: unknown
  try {
    payload = JSON.parse(readFile(path))
  } catch (error) {
    throw new GitlabContextError(
      `cannot read the trigger payload TRIGGER_PAYLOAD=${path}: ${error instanceof Error ? error.message : String(error)}`,
      { missing: ["TRIGGER_PAYLOAD"], hint },
      error,
    )
  }
  const parsed = notePayload.safeParse(payload)
  if (!parsed.success) {
    const kind = (payload as { object_kind?: unknown } | null)?.object_kind
    if (typeof kind === "string" && kind !== "note") {
      throw new GitlabContextError(
        `the trigger payload is a ${kind} event, not a note on a merge request: nothing to review`,
        { missing: [], hint, unrelated: true },
      )
    }
    throw new GitlabContextError(
      `the trigger payload is not a note event${typeof kind === "string" ? ` (object_kind ${kind})` : ""}: ${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
        .join("; ")}`,
      { missing: [], hint },
    )
  }
  const event = parsed.data
  if (event.object_attributes.noteable_type !== "MergeRequest" || !event.merge_request) {
    throw new GitlabContextError(
      `the note that triggered this pipeline is on ${article(event.object_attributes.noteable_type)}, not a merge request: nothing to review`,
      { missing: [], hint: "the review answers notes on merge requests only", unrelated: true },
    )
  }
  const projectId = event.project?.id ?? event.project_id
  if (projectId === undefined) {
    throw new GitlabContextError("the trigger payload names no project (project.id, project_id)", { missing: [], hint })
  }
  const attributes = event.object_attributes
  return {
    ...readUrls(env),
    projectId: String(projectId),
    iid: event.merge_request.iid,
    diffBaseSha: null,
    pipelineSource: present(env.CI_PIPELINE_SOURCE),
    token: readToken(env),
    note: {
      id: attributes.id,
      body: attributes.note,
      authorId: attributes.author_id,
      authorUsername: event.user.username,
      discussionId: attributes.discussion_id ?? null,
      type: attributes.type ?? null,
      action: attributes.action ?? null,
    },
  }
}

function readUtf8(path: string): string {
  return readFileSync(path, "utf8")
}

function readUrls(env: Environment): { apiUrl: string; serverUrl: string } {
  const api = present(env.CI_API_V4_URL)
  const server = present(env.CI_SERVER_URL)
  if (api === null && server === null) {
    throw new GitlabContextError("cannot tell where GitLab is: CI_API_V4_URL and CI_SERVER_URL are not set", {
      missing: ["CI_API_V4_URL", "CI_SERVER_URL"],
      hint: "set CI_SERVER_URL to the instance URL, e.g. https://gitlab.example.com",
    })
  }
  const apiUrl = trimSlash(api ?? `${trimSlash(server as string)}/api/v4`)
  const serverUrl = trimSlash(server ?? apiUrl.replace(/\/api\/v4$/, ""))
  return { apiUrl, serverUrl }
}

function readToken(env: Environment): string {
  const token = present(env.GITLAB_TOKEN)
  if (token !== null) return token
  if (present(env.CI_JOB_TOKEN) !== null) {
    throw new GitlabAuthError(
      `GITLAB_TOKEN is not set, and CI_JOB_TOKEN cannot post merge request notes, threads or approvals: ${tokenHint}`,
      { reason: "job-token", status: null, hint: tokenHint },
    )
  }
  throw new GitlabAuthError(
    `GITLAB_TOKEN is not set (a protected variable is not passed to pipelines of unprotected branches): ${tokenHint}`,
    { reason: "missing", status: null, hint: tokenHint },
  )
}

/** The hint for a token GitLab rejected (401/403), shared with the provider. */
export function rejectedTokenHint(): string {
  return `check that GITLAB_TOKEN is valid, not expired, has the \`api\` scope and at least the Developer role; ${tokenHint}`
}

function present(value: string | undefined): string | null {
  const trimmed = value?.trim()
  return trimmed ? trimmed : null
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "")
}

function article(noun: string): string {
  return `${/^[AEIOU]/i.test(noun) ? "an" : "a"} ${noun}`
}
