// Responses of the GitHub fake: the error bodies GitHub's REST API sends and its page/Link
// pagination. Every body and header here is in docs/github.md with where it was verified.

import { json, type Reply } from "./fake-http"

export { json, type Reply }

/** The documentation page GitHub names in `documentation_url`, per operation. */
export const docs = {
  root: "https://docs.github.com/rest",
  getPull: "https://docs.github.com/rest/pulls/pulls#get-a-pull-request",
  listFiles: "https://docs.github.com/rest/pulls/pulls#list-pull-requests-files",
  listIssueComments: "https://docs.github.com/rest/issues/comments#list-issue-comments",
  createIssueComment: "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
  updateIssueComment: "https://docs.github.com/rest/issues/comments#update-an-issue-comment",
  deleteIssueComment: "https://docs.github.com/rest/issues/comments#delete-an-issue-comment",
  createReview: "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request",
  listReviews: "https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request",
  dismissReview: "https://docs.github.com/rest/pulls/reviews#dismiss-a-review-for-a-pull-request",
  listReviewComments: "https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request",
  createReviewComment: "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request",
  createReply: "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment",
  issueCommentReactions: "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment",
  listIssueCommentReactions: "https://docs.github.com/rest/reactions/reactions#list-reactions-for-an-issue-comment",
  reviewCommentReactions:
    "https://docs.github.com/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment",
  listReviewCommentReactions:
    "https://docs.github.com/rest/reactions/reactions#list-reactions-for-a-pull-request-review-comment",
  collaboratorPermission:
    "https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user",
  getUser: "https://docs.github.com/rest/users/users#get-the-authenticated-user",
  getContent: "https://docs.github.com/rest/repos/contents#get-repository-content",
  /** What the reported "No commit found for the ref" 404 names (the legacy page, not the operation's). */
  contentRefNotFound: "https://docs.github.com/v3/repos/contents/",
  getTree: "https://docs.github.com/rest/git/trees#get-a-tree",
  rateLimit: "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
  secondaryRateLimit:
    "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
  anonymousRateLimit: "https://docs.github.com/rest/overview/resources-in-the-rest-api#rate-limiting",
  graphql: "https://docs.github.com/graphql",
} as const

/** GitHub's error shape since 2024: `{ message, documentation_url, status }` (status as a string). */
export function githubError(status: number, message: string, documentationUrl: string, extra: object = {}): Reply {
  return { status, body: { message, ...extra, documentation_url: documentationUrl, status: String(status) } }
}

export const badCredentials = (documentationUrl: string = docs.root): Reply =>
  githubError(401, "Bad credentials", documentationUrl)
export const requiresAuthentication = (documentationUrl: string): Reply =>
  githubError(401, "Requires authentication", documentationUrl)
export const notFound = (documentationUrl: string): Reply => githubError(404, "Not Found", documentationUrl)
/** A GitHub App or Actions token without the permission (an installation token). */
export const notAccessibleByIntegration = (documentationUrl: string): Reply =>
  githubError(403, "Resource not accessible by integration", documentationUrl)
/** A (fine-grained) personal access token without the permission. */
export const notAccessibleByToken = (documentationUrl: string): Reply =>
  githubError(403, "Resource not accessible by personal access token", documentationUrl)

/**
 * The 422 of `POST …/pulls/{n}/reviews`: `errors` is an array of strings. Measured in 2025–2026
 * without `documentation_url` (docs/github.md, "Reviews").
 */
export const unprocessable = (errors: string[]): Reply => ({
  status: 422,
  body: { message: "Unprocessable Entity", errors, status: "422" },
})

/**
 * `Validation Failed` with object errors (`resource`, `code`, `field`, `message`), as most create
 * endpoints answer, or with plain strings, as the dismissal endpoint does.
 */
export const validationFailed = (errors: (object | string)[], documentationUrl: string): Reply =>
  githubError(422, "Validation Failed", documentationUrl, { errors })

/** The body api.github.com sends with a 502 (pretty-printed JSON, 32 bytes). */
export const serverErrorText = '{\n  "message": "Server Error"\n}\n'

/** Page/Link pagination as GitHub does it: `per_page` default 30, at most 100. */
export function paginate<T>(
  items: T[],
  url: URL,
  linkBase: string,
  defaults: { perPage?: number; maxPerPage?: number } = {},
): { page: T[]; headers: Record<string, string> } {
  const maxPerPage = defaults.maxPerPage ?? 100
  const perPageRaw = Number.parseInt(url.searchParams.get("per_page") ?? "", 10)
  const pageRaw = Number.parseInt(url.searchParams.get("page") ?? "", 10)
  const perPage = Math.min(
    Number.isFinite(perPageRaw) && perPageRaw > 0 ? perPageRaw : (defaults.perPage ?? 30),
    maxPerPage,
  )
  const page = Number.isFinite(pageRaw) && pageRaw > 0 ? pageRaw : 1
  const lastPage = Math.max(1, Math.ceil(items.length / perPage))
  const slice = items.slice((page - 1) * perPage, page * perPage)
  // The link keeps the request's other parameters in their order and puts `page` last, on the
  // `/repositories/{id}/…` form of the path (GitHub's pagination docs show exactly that).
  const href = (target: number) => {
    const params = new URLSearchParams()
    for (const [key, value] of url.searchParams) if (key !== "page") params.append(key, value)
    params.append("page", String(target))
    return `<${linkBase}?${params.toString()}>`
  }
  const links: string[] = []
  if (page > 1) links.push(`${href(Math.min(page - 1, lastPage))}; rel="prev"`)
  if (page < lastPage) links.push(`${href(page + 1)}; rel="next"`)
  if (page < lastPage) links.push(`${href(lastPage)}; rel="last"`)
  if (page > 1) links.push(`${href(1)}; rel="first"`)
  return { page: slice, headers: links.length > 0 ? { Link: links.join(", ") } : {} }
}

/** A request id in GitHub's `x-github-request-id` format (five colon-separated hex groups). */
export function requestId(counter: number): string {
  const hex = (value: number, width: number) => value.toString(16).toUpperCase().padStart(width, "0")
  return `${hex(0xfa2d, 4)}:${hex(0x87b1, 4)}:${hex(counter, 6)}:${hex(counter * 7, 7)}:${hex(0x6570b7e6, 8)}`
}
