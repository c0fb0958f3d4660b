import { sha1 } from "./github-fake-diff"
import type {
  FakeGithubFile,
  FakeGithubPull,
  FakeGithubReaction,
  FakeGithubRepo,
  FakeGithubReview,
  FakeGithubUser,
  FakeIssueComment,
  FakeReviewComment,
  GithubPermission,
} from "./github-fake-types"
import { canWrite, type FakeWorld } from "./github-fake-world"

// GitHub's REST entities as the fake renders them: the fields of the OpenAPI schemas in
// @octokit/openapi-types (github/rest-api-description) that a reviewer reads, with URLs on the
// fake's own base URL.

export type FakeRender = ReturnType<typeof createRender>

export function createRender(world: FakeWorld) {
  const api = () => world.baseUrl
  const web = "https://github.com"

  const user = (u: FakeGithubUser) => ({
    login: u.login,
    id: u.id,
    node_id: u.nodeId,
    avatar_url: `https://avatars.githubusercontent.com/u/${u.id}?v=4`,
    gravatar_id: "",
    url: `${api()}/users/${encodeURIComponent(u.login)}`,
    html_url: u.type === "Bot" ? `${web}/apps/${u.login.replace(/\[bot\]$/, "")}` : `${web}/${u.login}`,
    type: u.type,
    site_admin: false,
    user_view_type: "public",
  })

  const owner = (login: string) => {
    const known = world.userByLogin(login)
    if (known) return user(known)
    const id = Number.parseInt(sha1(`owner\0${login}`).slice(0, 7), 16)
    return { ...user({ id, login, type: "User", nodeId: `O_kwDO${id}` }), type: "Organization" }
  }

  const repo = (r: FakeGithubRepo) => ({
    id: r.id,
    node_id: r.nodeId,
    name: r.name,
    full_name: r.fullName,
    private: r.private,
    owner: owner(r.owner),
    html_url: `${web}/${r.fullName}`,
    fork: false,
    url: `${api()}/repos/${r.fullName}`,
    default_branch: r.defaultBranch,
    visibility: r.private ? "private" : "public",
  })

  /** A fork named in `headRepo` that the fake does not model: enough for `head.repo.full_name`. */
  const forkRepo = (fullName: string, parent: FakeGithubRepo) => {
    const known = world.state.repos.find((candidate) => candidate.fullName === fullName)
    if (known) return repo(known)
    const [forkOwner = "", name = ""] = fullName.split("/")
    const id = Number.parseInt(sha1(`fork\0${fullName}`).slice(0, 7), 16)
    return {
      ...repo({ ...parent, id, nodeId: `R_kgDO${id}`, owner: forkOwner, name, fullName, private: parent.private }),
      fork: true,
    }
  }

  const association = (u: FakeGithubUser, r: FakeGithubRepo) => {
    if (u.login.toLowerCase() === r.owner.toLowerCase()) return "OWNER"
    const actor = world.actors.find((candidate) => candidate.user.id === u.id)
    return actor && canWrite(world.permission(actor, r)) ? "COLLABORATOR" : "NONE"
  }

  const rollup = (reactions: FakeGithubReaction[], url: string) => {
    const count = (content: string) => reactions.filter((reaction) => reaction.content === content).length
    return {
      url: `${url}/reactions`,
      total_count: reactions.length,
      "+1": count("+1"),
      "-1": count("-1"),
      laugh: count("laugh"),
      hooray: count("hooray"),
      confused: count("confused"),
      heart: count("heart"),
      rocket: count("rocket"),
      eyes: count("eyes"),
    }
  }

  const pull = (p: FakeGithubPull, r: FakeGithubRepo) => {
    const version = p.versions.at(-1)!
    const url = `${api()}/repos/${r.fullName}/pulls/${p.number}`
    const headRepo = p.headRepo === r.fullName ? repo(r) : forkRepo(p.headRepo, r)
    const headOwner = p.headRepo.split("/")[0] ?? r.owner
    const comments = world.state.issueComments.filter((c) => c.repo === r.fullName && c.issueNumber === p.number)
    const reviewComments = world.state.reviewComments.filter((c) => c.repo === r.fullName && c.pullNumber === p.number)
    return {
      url,
      id: p.id,
      node_id: p.nodeId,
      html_url: `${web}/${r.fullName}/pull/${p.number}`,
      diff_url: `${web}/${r.fullName}/pull/${p.number}.diff`,
      patch_url: `${web}/${r.fullName}/pull/${p.number}.patch`,
      issue_url: `${api()}/repos/${r.fullName}/issues/${p.number}`,
      commits_url: `${url}/commits`,
      review_comments_url: `${url}/comments`,
      review_comment_url: `${api()}/repos/${r.fullName}/pulls/comments{/number}`,
      comments_url: `${api()}/repos/${r.fullName}/issues/${p.number}/comments`,
      statuses_url: `${api()}/repos/${r.fullName}/statuses/${version.headSha}`,
      number: p.number,
      state: p.state,
      locked: false,
      title: p.title,
      user: user(p.author),
      body: p.body,
      labels: [],
      milestone: null,
      active_lock_reason: null,
      created_at: p.createdAt,
      updated_at: p.updatedAt,
      closed_at: null,
      merged_at: null,
      merge_commit_sha: null,
      assignee: null,
      assignees: [],
      requested_reviewers: [],
      requested_teams: [],
      head: {
        label: `${headOwner}:${p.headRef}`,
        ref: p.headRef,
        sha: version.headSha,
        user: headRepo.owner,
        repo: headRepo,
      },
      base: {
        label: `${r.owner}:${p.baseRef}`,
        ref: p.baseRef,
        sha: version.baseSha,
        user: owner(r.owner),
        repo: repo(r),
      },
      _links: {
        self: { href: url },
        html: { href: `${web}/${r.fullName}/pull/${p.number}` },
        issue: { href: `${api()}/repos/${r.fullName}/issues/${p.number}` },
        comments: { href: `${api()}/repos/${r.fullName}/issues/${p.number}/comments` },
        review_comments: { href: `${url}/comments` },
        review_comment: { href: `${api()}/repos/${r.fullName}/pulls/comments{/number}` },
        commits: { href: `${url}/commits` },
        statuses: { href: `${api()}/repos/${r.fullName}/statuses/${version.headSha}` },
      },
      author_association: association(p.author, r),
      auto_merge: null,
      draft: p.draft,
      merged: false,
      mergeable: null,
      rebaseable: null,
      mergeable_state: "unknown",
      merged_by: null,
      comments: comments.length,
      review_comments: reviewComments.length,
      maintainer_can_modify: false,
      commits: p.versions.length,
      additions: version.files.reduce((sum, file) => sum + file.additions, 0),
      deletions: version.files.reduce((sum, file) => sum + file.deletions, 0),
      changed_files: version.files.length,
    }
  }

  const file = (f: FakeGithubFile, r: FakeGithubRepo, headSha: string) => {
    const omitPatch = f.binary || new TextEncoder().encode(f.patch).length > world.maxPatchBytes
    const path = f.filename.split("/").map(encodeURIComponent).join("/")
    return {
      sha: sha1(`blob\0${headSha}\0${f.filename}`),
      filename: f.filename,
      status: f.status,
      additions: f.additions,
      deletions: f.deletions,
      changes: f.changes,
      blob_url: `${web}/${r.fullName}/blob/${headSha}/${path}`,
      raw_url: `${web}/${r.fullName}/raw/${headSha}/${path}`,
      contents_url: `${api()}/repos/${r.fullName}/contents/${path}?ref=${headSha}`,
      ...(omitPatch ? {} : { patch: f.patch }),
      ...(f.previousFilename ? { previous_filename: f.previousFilename } : {}),
    }
  }

  const issueComment = (c: FakeIssueComment, r: FakeGithubRepo) => {
    const url = `${api()}/repos/${r.fullName}/issues/comments/${c.id}`
    return {
      url,
      html_url: `${web}/${r.fullName}/pull/${c.issueNumber}#issuecomment-${c.id}`,
      issue_url: `${api()}/repos/${r.fullName}/issues/${c.issueNumber}`,
      id: c.id,
      node_id: c.nodeId,
      user: user(c.user),
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      body: c.body,
      author_association: association(c.user, r),
      reactions: rollup(c.reactions, url),
      performed_via_github_app: null,
    }
  }

  const review = (v: FakeGithubReview, r: FakeGithubRepo) => {
    const pullUrl = `${api()}/repos/${r.fullName}/pulls/${v.pullNumber}`
    const html = `${web}/${r.fullName}/pull/${v.pullNumber}#pullrequestreview-${v.id}`
    return {
      id: v.id,
      node_id: v.nodeId,
      user: user(v.user),
      body: v.body,
      state: v.state,
      html_url: html,
      pull_request_url: pullUrl,
      author_association: association(v.user, r),
      _links: { html: { href: html }, pull_request: { href: pullUrl } },
      // "Pull request reviews created in the PENDING state … do not include the submitted_at property."
      ...(v.submittedAt ? { submitted_at: v.submittedAt } : {}),
      commit_id: v.commitId,
    }
  }

  const reviewComment = (c: FakeReviewComment, r: FakeGithubRepo) => {
    const url = `${api()}/repos/${r.fullName}/pulls/comments/${c.id}`
    const html = `${web}/${r.fullName}/pull/${c.pullNumber}#discussion_r${c.id}`
    const pullUrl = `${api()}/repos/${r.fullName}/pulls/${c.pullNumber}`
    return {
      url,
      pull_request_review_id: c.reviewId,
      id: c.id,
      node_id: c.nodeId,
      diff_hunk: c.diffHunk,
      path: c.path,
      commit_id: c.commitId,
      original_commit_id: c.originalCommitId,
      user: user(c.user),
      body: c.body,
      created_at: c.createdAt,
      updated_at: c.updatedAt,
      html_url: html,
      pull_request_url: pullUrl,
      author_association: association(c.user, r),
      _links: { self: { href: url }, html: { href: html }, pull_request: { href: pullUrl } },
      reactions: rollup(c.reactions, url),
      start_line: c.startLine,
      original_start_line: c.originalStartLine,
      start_side: c.startSide,
      line: c.line,
      original_line: c.originalLine,
      side: c.side,
      ...(c.inReplyToId !== null ? { in_reply_to_id: c.inReplyToId } : {}),
      subject_type: "line",
    }
  }

  const reaction = (x: FakeGithubReaction) => ({
    id: x.id,
    node_id: x.nodeId,
    user: user(x.user),
    content: x.content,
    created_at: x.createdAt,
  })

  const collaboratorPermission = (u: FakeGithubUser, permission: GithubPermission) => ({
    // "the maintain role is mapped to write and the triage role is mapped to read"; role_name keeps it.
    permission: permission === "maintain" ? "write" : permission === "triage" ? "read" : permission,
    role_name: permission,
    user: { ...user(u), permissions: permissionFlags(permission), role_name: permission },
  })

  return { user, repo, pull, file, issueComment, review, reviewComment, reaction, collaboratorPermission }
}

function permissionFlags(permission: GithubPermission) {
  const rank = ["none", "read", "triage", "write", "maintain", "admin"].indexOf(permission)
  return { admin: rank >= 5, maintain: rank >= 4, push: rank >= 3, triage: rank >= 2, pull: rank >= 1 }
}
