import { describe, expect, test } from "vitest"
import { redactCredentials, redactDeep } from "./redact"

describe("redactCredentials", () => {
  test("a runner's origin URL loses its job token, the rest of .git/config stays", () => {
    const config =
      '[remote "origin"]\n\turl = https://gitlab-ci-token:glcbt-64_abcdefghijklmnopqrstu@gitlab.example.com/group/project.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n'
    const { text, count } = redactCredentials(config)
    expect(text).toBe(
      '[remote "origin"]\n\turl = https://[redacted]@gitlab.example.com/group/project.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n',
    )
    expect(count).toBe(1)
  })

  test("bare GitLab and GitHub tokens are redacted; prose, hashes and user-only URLs are not", () => {
    const { text, count } = redactCredentials(
      "token glpat-AbCdEfGhIjKlMnOpQrSt and ghp_0123456789abcdefghijklmnopqrstuvwxyz in a log",
    )
    expect(text).toBe("token [redacted] and [redacted] in a log")
    expect(count).toBe(2)
    const honest = "see https://user@example.com/x, the glpat- prefix, sha 9bdd1f8d6c0e and ssh://git@host:22/repo"
    expect(redactCredentials(honest)).toEqual({ text: honest, count: 0 })
  })
})

describe("redactDeep", () => {
  test("redacts strings anywhere in a tool's metadata, in place", () => {
    const metadata = { preview: "url = http://u:secret@h/x", nested: [{ line: "glcbt-0123456789abcdefXYZ" }], n: 3 }
    expect(redactDeep(metadata)).toBe(2)
    expect(metadata).toEqual({ preview: "url = http://[redacted]@h/x", nested: [{ line: "[redacted]" }], n: 3 })
  })
})
