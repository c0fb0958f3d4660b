/**
 * Credentials a CI runner leaves where a reviewer's tools can read them: the checkout's
 * `.git/config` keeps `https://gitlab-ci-token:<CI_JOB_TOKEN>@host/…` as the origin URL on many
 * runners, and tokens have recognisable prefixes. Tool outputs pass through here before a model or
 * OpenCode's database sees them. A pure module: the runtime plugin runs it inside OpenCode.
 */

// userinfo with a password in any URL: scheme://user:secret@host
const urlCredentials = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:"'<>]+:[^\s/@"'<>]+@/gi
// GitLab (personal, project, group, deploy, runner, CI job, feed, OAuth, SCIM, incoming mail,
// agent, trigger) and GitHub token formats; long enough not to hit prose.
const tokenPrefixes =
  /\b(?:gl(?:pat|cbt|dt|rt|ptt|ft|oas|soat|imt|agent|trt|ffct)-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})/g

/** Text with credentials replaced by `[redacted]`, and how many were. */
export function redactCredentials(text: string): { text: string; count: number } {
  let count = 0
  const redacted = text
    .replace(urlCredentials, (_match, scheme: string) => {
      count += 1
      return `${scheme}[redacted]@`
    })
    .replace(tokenPrefixes, () => {
      count += 1
      return "[redacted]"
    })
  return { text: redacted, count }
}

/** Redacts every string inside a JSON-like value, in place (arrays and plain objects); returns the count. */
export function redactDeep(value: unknown, depth = 0): number {
  if (depth > 20 || value === null || typeof value !== "object") return 0
  let count = 0
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item] as const) : Object.entries(value)
  for (const [key, item] of entries) {
    if (typeof item === "string") {
      const result = redactCredentials(item)
      if (result.count > 0) {
        ;(value as Record<string | number, unknown>)[key] = result.text
        count += result.count
      }
    } else {
      count += redactDeep(item, depth + 1)
    }
  }
  return count
}
