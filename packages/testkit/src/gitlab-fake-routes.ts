import {
  coerceBoolean,
  coerceInteger,
  coerceString,
  grapeError,
  json,
  message,
  notFound,
  recordNotFound,
  unauthorized,
} from "./gitlab-fake-http"
import { type FakeNotes, labelsIn } from "./gitlab-fake-notes"
import { type FakePlumbing, mrPath, type Route } from "./gitlab-fake-plumbing"
import type { FakeRender } from "./gitlab-fake-render"
import type { FakeUser } from "./gitlab-fake-types"
import { type FakeWorld, titleCase } from "./gitlab-fake-world"

// Routes of the user, the instance, the project and its repository, and the merge request itself:
// diffs, commits, versions, reviewers and approvals. The note and discussion routes are in
// gitlab-fake-routes-notes.ts and come after these in the table.

export function createRoutes(world: FakeWorld, notes: FakeNotes, render: FakeRender, plumbing: FakePlumbing): Route[] {
  const { options, git, state, mr, users, projectId, projectPath, iid, now, current } = world
  const { systemNote, approvedBy, canApprove, approve, unapprove, setReviewers } = notes
  const { userBasic, renderMember, renderDiff, renderCommit, renderVersion, renderMergeRequest, approvalsEntity } =
    render
  const { projectMatches, target, mustWrite, list } = plumbing

  const routes: Route[] = [
    {
      method: "GET",
      pattern: ["user"],
      auth: "authenticate",
      run: ({ caller }) =>
        json(200, {
          ...userBasic(caller.user!),
          created_at: mr.createdAt,
          bio: "",
          location: "",
          public_email: null,
          skype: "",
          linkedin: "",
          twitter: "",
          discord: "",
          website_url: "",
          organization: "",
          job_title: "",
          pronouns: null,
          bot: caller.user!.bot,
          work_information: null,
          local_time: null,
          last_sign_in_at: null,
          confirmed_at: mr.createdAt,
          last_activity_on: mr.createdAt.slice(0, 10),
          email: `${caller.user!.username}@noreply.example.test`,
          theme_id: 1,
          color_scheme_id: 1,
          projects_limit: 0,
          current_sign_in_at: null,
          identities: [],
          can_create_group: !caller.user!.bot,
          can_create_project: !caller.user!.bot,
          two_factor_enabled: false,
          external: false,
          private_profile: false,
          commit_email: `${caller.user!.username}@noreply.example.test`,
        }),
    },
    {
      method: "GET",
      pattern: ["version"],
      auth: "authenticate",
      run: () => json(200, { version: options.version ?? "17.6.0-ee", revision: "0000000" }),
    },
    {
      method: "GET",
      pattern: ["metadata"],
      auth: "authenticate",
      run: () =>
        json(200, {
          version: options.version ?? "17.6.0-ee",
          revision: "0000000",
          kas: { enabled: false, externalUrl: null, version: null },
          enterprise: (options.version ?? "17.6.0-ee").endsWith("-ee"),
        }),
    },
    {
      method: "GET",
      pattern: ["projects", ":id"],
      auth: "none",
      run: ({ path, caller }) => {
        if (!projectMatches(path.id ?? "") || (caller.user === null && (options.visibility ?? "private") === "private"))
          return notFound("Project")
        const name = projectPath.split("/").pop() ?? projectPath
        return json(200, {
          id: projectId,
          description: null,
          name,
          name_with_namespace: projectPath.split("/").map(titleCase).join(" / "),
          path: name,
          path_with_namespace: projectPath,
          created_at: mr.createdAt,
          default_branch: mr.targetBranch,
          web_url: `${world.baseUrl}/${projectPath}`,
          http_url_to_repo: `${world.baseUrl}/${projectPath}.git`,
          visibility: options.visibility ?? "private",
          only_allow_merge_if_all_discussions_are_resolved: options.onlyAllowMergeIfAllDiscussionsAreResolved ?? false,
          only_allow_merge_if_pipeline_succeeds: false,
        })
      },
    },
    {
      // Repository files API: a file's raw content at a ref (branch, tag or sha); the provider reads
      // the config and review instructions from the target branch through it.
      method: "GET",
      pattern: ["projects", ":id", "repository", "files", ":file_path", "raw"],
      auth: "authenticate",
      run: ({ path, query }) => {
        if (!projectMatches(path.id ?? "")) return notFound("Project")
        const ref = query.get("ref")
        if (!ref) return grapeError(400, "ref is missing")
        const commit = git.resolveCommit(ref)
        if (!commit) return notFound("Commit")
        const blob = git.run(["cat-file", "blob", `${commit}:${path.file_path ?? ""}`])
        if (blob.code !== 0) return notFound("File")
        return { status: 200, text: blob.stdout, contentType: "text/plain; charset=utf-8" }
      },
    },
    {
      // Repository tree API (lib/api/repositories.rb): a folder's entries at a ref, trees first,
      // then blobs, then submodules (Gitlab::Git::Tree#sorted_entries); offset ("legacy")
      // pagination by default. An unknown ref is "404 Tree Not Found"; a path that is missing at
      // the ref, or is a file, is "404 invalid revision or path Not Found" (Gitaly's IndexError).
      method: "GET",
      pattern: ["projects", ":id", "repository", "tree"],
      auth: "authenticate",
      run: (context) => {
        const { path, query } = context
        if (!projectMatches(path.id ?? "")) return notFound("Project")
        const errors: string[] = []
        const recursive = coerceBoolean(query.get("recursive") ?? undefined, "recursive", errors) ?? false
        const pagination = query.get("pagination") ?? "legacy"
        if (!["legacy", "keyset", "none"].includes(pagination)) errors.push("pagination does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        if (pagination === "none" && !recursive)
          return grapeError(400, 'pagination cannot be "none" unless "recursive" is true')
        if (pagination === "keyset")
          throw new Error("gitlab-fake: keyset pagination of repository/tree is not implemented")
        const commit = git.resolveCommit(query.get("ref") ?? mr.targetBranch)
        if (!commit) return notFound("Tree")
        const folder = (query.get("path") ?? "").replace(/\/+$/, "")
        const treeish = folder === "" ? `${commit}^{tree}` : `${commit}:${folder}`
        if (git.run(["cat-file", "-t", treeish]).stdout.trim() !== "tree") return notFound("invalid revision or path")
        const listed = git.run(["ls-tree", "-z", ...(recursive ? ["-r", "-t"] : []), treeish])
        if (listed.code !== 0) return notFound("invalid revision or path")
        const entries = listed.stdout.split("\0").flatMap((line) => {
          const tab = line.indexOf("\t")
          if (tab < 0) return []
          const [mode = "", type = "", id = ""] = line.slice(0, tab).split(" ")
          const relativePath = line.slice(tab + 1)
          const full = folder === "" ? relativePath : `${folder}/${relativePath}`
          return [{ id, name: full.slice(full.lastIndexOf("/") + 1), type, path: full, mode }]
        })
        const sorted = ["tree", "blob", "commit"].flatMap((type) => entries.filter((entry) => entry.type === type))
        if (pagination === "none") return json(200, sorted)
        return list(
          context,
          sorted,
          { id: path.id!, pagination: "legacy", recursive: String(recursive) },
          (entry) => entry,
        )
      },
    },
    // Members (lib/api/members.rb): `before { authenticate! }`, then Grape's `user_id` Integer check,
    // the project, and `find_by!(user_id:)`, whose RecordNotFound is "404 Not found". The fake has no
    // groups, so the direct and the inherited ("/all") routes answer alike.
    ...["members", "members/all"].map(
      (tail): Route => ({
        method: "GET",
        pattern: ["projects", ":id", ...tail.split("/")],
        auth: "authenticate",
        run: (context) => {
          if (!projectMatches(context.path.id ?? "")) return notFound("Project")
          const ids = context.query.getAll("user_ids[]").concat(context.query.get("user_ids")?.split(",") ?? [])
          const members = state.members.filter(
            (member) => ids.length === 0 || ids.map((id) => id.trim()).includes(String(member.user.id)),
          )
          return list(context, members, { id: context.path.id! }, renderMember)
        },
      }),
    ),
    ...["members", "members/all"].map(
      (tail): Route => ({
        method: "GET",
        pattern: ["projects", ":id", ...tail.split("/"), ":user_id"],
        auth: "authenticate",
        run: ({ path }) => {
          const errors: string[] = []
          const userId = coerceInteger(path.user_id, "user_id", errors)
          if (errors.length > 0) return grapeError(400, errors.join(", "))
          if (!projectMatches(path.id ?? "")) return notFound("Project")
          const member = state.members.find((candidate) => candidate.user.id === userId)
          return member ? json(200, renderMember(member)) : recordNotFound()
        },
      }),
    ),
    {
      method: "GET",
      pattern: ["projects", ":id", "merge_requests"],
      auth: "non_get",
      jobToken: true,
      run: (context) => {
        if (
          !projectMatches(context.path.id ?? "") ||
          (context.caller.user === null && (options.visibility ?? "private") === "private")
        )
          return notFound("Project")
        const stateFilter = context.query.get("state") ?? "all"
        const sourceFilter = context.query.get("source_branch")
        const targetFilter = context.query.get("target_branch")
        const iids = context.query.getAll("iids[]")
        const matches =
          (stateFilter === "all" || stateFilter === mr.state) &&
          (!sourceFilter || sourceFilter === mr.sourceBranch) &&
          (!targetFilter || targetFilter === mr.targetBranch) &&
          (iids.length === 0 || iids.includes(String(iid)))
        return list(
          context,
          matches ? [mr] : [],
          {
            id: context.path.id!,
            order_by: "created_at",
            sort: "desc",
            state: "all",
            with_labels_details: "false",
            with_merge_status_recheck: "false",
          },
          () => renderMergeRequest(context.caller, false),
        )
      },
    },
    {
      method: "GET",
      pattern: mrPath,
      auth: "non_get",
      jobToken: true,
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const diverged = coerceBoolean(
          context.query.get("include_diverged_commits_count") ?? undefined,
          "include_diverged_commits_count",
          errors,
        )
        const rebase = coerceBoolean(
          context.query.get("include_rebase_in_progress") ?? undefined,
          "include_rebase_in_progress",
          errors,
        )
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return json(
          200,
          renderMergeRequest(context.caller, true, {
            divergedCommits: diverged === true,
            rebaseInProgress: rebase === true,
          }),
        )
      },
    },
    {
      method: "PUT",
      pattern: mrPath,
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        const updatable = [
          "title",
          "description",
          "reviewer_ids",
          "labels",
          "add_labels",
          "remove_labels",
          "state_event",
          "discussion_locked",
          "squash",
          "target_branch",
          "assignee_id",
          "assignee_ids",
          "milestone_id",
          "remove_source_branch",
          "allow_collaboration",
          "allow_maintainer_to_push",
        ]
        if (!updatable.some((key) => key in context.params)) {
          return grapeError(400, `${updatable.join(", ")} are missing, at least one parameter must be provided`)
        }
        const errors: string[] = []
        const title = coerceString(context.params.title, "title", errors)
        const description = coerceString(context.params.description, "description", errors)
        const reviewerIds =
          "reviewer_ids" in context.params ? integerList(context.params.reviewer_ids, "reviewer_ids", errors) : null
        const stateEvent = coerceString(context.params.state_event, "state_event", errors)
        if (stateEvent !== null && !["close", "reopen"].includes(stateEvent))
          errors.push("state_event does not have a valid value")
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        if (title !== null) mr.title = title
        if (description !== null) mr.description = description
        if ("labels" in context.params) mr.labels = labelsIn(String(arrayOrString(context.params.labels)))
        if ("add_labels" in context.params)
          mr.labels = [...new Set([...mr.labels, ...labelsIn(String(arrayOrString(context.params.add_labels)))])]
        if ("remove_labels" in context.params) {
          const remove = labelsIn(String(arrayOrString(context.params.remove_labels)))
          mr.labels = mr.labels.filter((label) => !remove.includes(label))
        }
        if (reviewerIds !== null)
          setReviewers(
            reviewerIds.map((id) => users.find((user) => user.id === id)).filter((user): user is FakeUser => !!user),
            actor,
          )
        if (stateEvent === "close" && mr.state === "opened") {
          mr.state = "closed"
          mr.closedAt = now()
          systemNote("closed", actor)
        }
        if (stateEvent === "reopen" && mr.state === "closed") {
          mr.state = "opened"
          mr.closedAt = null
          systemNote("reopened", actor)
        }
        mr.updatedAt = now()
        return json(200, renderMergeRequest(context.caller, true))
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "diffs"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return list(
          context,
          current().files,
          { id: context.path.id!, merge_request_iid: context.path.iid!, unidiff: "false" },
          (file) => renderDiff(file, unidiff === true),
        )
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "changes"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        return json(200, {
          ...renderMergeRequest(context.caller, true),
          changes: current().files.map((file) => renderDiff(file, unidiff === true)),
          overflow: current().overflow,
        })
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "raw_diffs"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const version = current()
        return {
          status: 200,
          text: git.rawDiff(version.baseSha, version.headSha),
          contentType: "text/plain; charset=utf-8",
        }
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "commits"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(
          context,
          current().commits,
          { id: context.path.id!, merge_request_iid: context.path.iid! },
          renderCommit,
        )
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "versions"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(
          context,
          [...state.versions].reverse(),
          { id: context.path.id!, merge_request_iid: context.path.iid! },
          renderVersion,
        )
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "versions", ":version_id"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const errors: string[] = []
        const versionId = coerceInteger(context.path.version_id, "version_id", errors)
        const unidiff = coerceBoolean(context.query.get("unidiff") ?? undefined, "unidiff", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        const version = state.versions.find((candidate) => candidate.id === versionId)
        if (!version) return recordNotFound()
        return json(200, {
          ...renderVersion(version),
          commits: version.commits.map(renderCommit),
          diffs: version.files.map((file) => renderDiff(file, unidiff === true)),
        })
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "reviewers"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        return list(
          context,
          state.reviewers,
          { id: context.path.id!, merge_request_iid: context.path.iid! },
          (reviewer) => ({
            user: userBasic(reviewer.user),
            state: reviewer.state,
            created_at: reviewer.createdAt,
          }),
        )
      },
    },
    {
      method: "GET",
      pattern: [...mrPath, "approvals"],
      auth: "non_get",
      run: (context) => target(context, "merge_request_iid") ?? json(200, approvalsEntity(context.caller)),
    },
    {
      method: "POST",
      pattern: [...mrPath, "approve"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        const errors: string[] = []
        const sha = coerceString(context.params.sha, "sha", errors)
        if (errors.length > 0) return grapeError(400, errors.join(", "))
        // check_sha_param!: the message names the MR's actual head, not the SHA sent.
        if (sha && sha !== current().headSha)
          return message(409, `SHA does not match HEAD of source branch: ${current().headSha}`)
        // ApprovalService returns nothing when the user cannot approve (already approved, author, merged) → unauthorized!
        if (!canApprove(actor)) return unauthorized()
        approve(actor, "api")
        return json(201, approvalsEntity(context.caller))
      },
    },
    {
      method: "POST",
      pattern: [...mrPath, "unapprove"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        if (!approvedBy(actor)) return notFound()
        unapprove(actor, "api")
        return json(201, approvalsEntity(context.caller))
      },
    },
    {
      method: "PUT",
      pattern: [...mrPath, "reset_approvals"],
      auth: "non_get",
      run: (context) => {
        const failed = target(context, "merge_request_iid")
        if (failed) return failed
        const actor = mustWrite(context)
        if (!actor.bot || mr.state === "merged") return unauthorized()
        for (const approval of state.approvals)
          state.approvalEvents.push({
            action: "reset",
            user: approval.user,
            sha: current().headSha,
            at: now(),
            via: "api",
          })
        state.approvals.length = 0
        // `status :accepted` is the endpoint's last expression, so Grape renders it as the body.
        return json(202, 202)
      },
    },
  ]
  return routes
}

/** API::Validations::Types::CommaSeparatedToIntegerArray: [1, 2], "1,2" or reviewer_ids[]=1. */
function integerList(value: unknown, name: string, errors: string[]): number[] {
  if (value === "" || value === null || value === undefined) return []
  const items = Array.isArray(value) ? value : String(value).split(",")
  const out: number[] = []
  for (const item of items) {
    const parsed = coerceInteger(typeof item === "string" ? item.trim() : item, name, errors)
    if (parsed !== null) out.push(parsed)
  }
  return out
}

function arrayOrString(value: unknown): string {
  return Array.isArray(value) ? value.join(",") : String(value ?? "")
}
