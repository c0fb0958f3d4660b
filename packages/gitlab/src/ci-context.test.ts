import { describe, expect, test } from "vitest"
import { isMergeRequestPipeline, readCiContext } from "./ci-context"
import { GitlabAuthError, GitlabContextError } from "./errors"

const pipeline = {
  CI_API_V4_URL: "https://gitlab.example.com/api/v4/",
  CI_SERVER_URL: "https://gitlab.example.com",
  CI_PROJECT_ID: "99",
  CI_MERGE_REQUEST_PROJECT_ID: "42",
  CI_MERGE_REQUEST_IID: "7",
  CI_MERGE_REQUEST_DIFF_BASE_SHA: "abc",
  CI_PIPELINE_SOURCE: "merge_request_event",
  GITLAB_TOKEN: "glpat-secret",
  CI_JOB_TOKEN: "job",
}

describe("readCiContext", () => {
  test("reads a merge request pipeline, preferring the MR's project over the pipeline's", () => {
    expect(readCiContext(pipeline)).toEqual({
      apiUrl: "https://gitlab.example.com/api/v4",
      serverUrl: "https://gitlab.example.com",
      projectId: "42",
      iid: 7,
      diffBaseSha: "abc",
      pipelineSource: "merge_request_event",
      token: "glpat-secret",
      note: null,
    })
    expect(readCiContext({ ...pipeline, CI_MERGE_REQUEST_PROJECT_ID: undefined }).projectId).toBe("99")
    expect(readCiContext({ ...pipeline, CI_API_V4_URL: undefined }).apiUrl).toBe("https://gitlab.example.com/api/v4")
    expect(isMergeRequestPipeline(pipeline)).toBe(true)
  })

  test("without CI_MERGE_REQUEST_IID it is not a merge request pipeline", () => {
    const env = { ...pipeline, CI_MERGE_REQUEST_IID: undefined, CI_PIPELINE_SOURCE: "push" }
    expect(isMergeRequestPipeline(env)).toBe(false)
    expect(() => readCiContext(env)).toThrow(GitlabContextError)
    expect(() => readCiContext(env)).toThrow(/not a merge request pipeline.*CI_PIPELINE_SOURCE=push/)
  })

  test("CI_JOB_TOKEN alone is refused with what to do", () => {
    const error = (() => {
      try {
        readCiContext({ ...pipeline, GITLAB_TOKEN: "" })
      } catch (caught) {
        return caught
      }
    })() as GitlabAuthError
    expect(error).toBeInstanceOf(GitlabAuthError)
    expect(error.data.reason).toBe("job-token")
    expect(error.message).toContain("CI_JOB_TOKEN cannot post merge request notes")
    expect(error.message).toContain("project access token")
    expect(error.message).toContain("`api` scope")
    expect(error.message).toContain("masked CI/CD variable named GITLAB_TOKEN")
  })

  test("no token at all, or no GitLab URL, is named", () => {
    expect(() => readCiContext({ ...pipeline, GITLAB_TOKEN: undefined, CI_JOB_TOKEN: undefined })).toThrow(
      /GITLAB_TOKEN is not set/,
    )
    expect(() => readCiContext({ ...pipeline, CI_API_V4_URL: undefined, CI_SERVER_URL: undefined })).toThrow(
      /CI_API_V4_URL and CI_SERVER_URL/,
    )
    expect(() => readCiContext({ ...pipeline, CI_MERGE_REQUEST_IID: "x" })).toThrow(/not a merge request number/)
  })
})

describe("readCiContext in a pipeline a note webhook triggered", () => {
  const triggered = {
    CI_API_V4_URL: "https://gitlab.example.com/api/v4",
    CI_SERVER_URL: "https://gitlab.example.com",
    CI_PROJECT_ID: "42",
    CI_PIPELINE_SOURCE: "trigger",
    TRIGGER_PAYLOAD: "/builds/tmp/TRIGGER_PAYLOAD",
    GITLAB_TOKEN: "glpat-secret",
  }
  const note = {
    object_kind: "note",
    event_type: "note",
    user: { id: 5, username: "alice" },
    project_id: 42,
    project: { id: 42, path_with_namespace: "acme/widgets" },
    object_attributes: {
      id: 901,
      note: "/review full",
      noteable_type: "MergeRequest",
      author_id: 5,
      discussion_id: "abc123",
      type: null,
    },
    merge_request: { iid: 7 },
  }
  const reading = (payload: unknown) => (path: string) => {
    expect(path).toBe(triggered.TRIGGER_PAYLOAD)
    return JSON.stringify(payload)
  }

  test("the merge request and the note come from the payload file", () => {
    expect(isMergeRequestPipeline(triggered)).toBe(true)
    const context = readCiContext(triggered, reading(note))
    expect(context).toMatchObject({ projectId: "42", iid: 7, pipelineSource: "trigger" })
    expect(context.note).toEqual({
      id: 901,
      body: "/review full",
      authorId: 5,
      authorUsername: "alice",
      discussionId: "abc123",
      type: null,
      action: null,
    })
  })

  test("another event, a note on an issue, or an unreadable file is said, not reviewed", () => {
    const unrelated = (payload: unknown) => {
      try {
        readCiContext(triggered, reading(payload))
      } catch (error) {
        return error instanceof GitlabContextError ? error.data.unrelated === true : "not a context error"
      }
      return "no error"
    }
    expect(() => readCiContext(triggered, reading({ object_kind: "push" }))).toThrow(
      /the trigger payload is a push event, not a note on a merge request/,
    )
    expect(unrelated({ object_kind: "push" })).toBe(true)
    expect(() => readCiContext(triggered, reading({ object_kind: "note" }))).toThrow(
      /the trigger payload is not a note event/,
    )
    expect(unrelated({ object_kind: "note" })).toBe(false)
    expect(() =>
      readCiContext(
        triggered,
        reading({
          ...note,
          object_attributes: { ...note.object_attributes, noteable_type: "Issue" },
          merge_request: undefined,
        }),
      ),
    ).toThrow(/on an Issue, not a merge request/)
    expect(() =>
      readCiContext(triggered, () => {
        throw new Error("ENOENT")
      }),
    ).toThrow(GitlabContextError)
  })

  test("a trigger pipeline without a payload is no merge request pipeline", () => {
    expect(isMergeRequestPipeline({ ...triggered, TRIGGER_PAYLOAD: undefined })).toBe(false)
  })
})
