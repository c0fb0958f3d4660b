import { posix } from "node:path"
import type { FakeTreeEntry } from "./github-fake-git"
import { docs, githubError, json, notFound, type Reply } from "./github-fake-http"
import type { FakeGithubRepo } from "./github-fake-types"
import type { FakeWorld } from "./github-fake-world"

// A repository's files as GitHub serves them: `GET /repos/{o}/{r}/contents/{path}?ref=` and
// `GET /repos/{o}/{r}/git/trees/{tree_sha}?recursive=`, read from the repository's `dir` with git
// (github-fake-git.ts). Every field and limit is in docs/github.md ("Repository contents and
// trees") with where it was verified; the shapes follow recorded github.com answers.

/** "1 MB or smaller: all features"; past it `encoding: "none"` and no content. The exact cut-off is unverified. */
const maxContentBytes = 1_048_576
/** "This API has an upper limit of 1,000 files for a directory." */
const maxDirectoryEntries = 1000

export type FakeContents = ReturnType<typeof createContents>

export function createContents(world: FakeWorld) {
  const api = () => world.baseUrl
  const web = "https://github.com"

  const gitOf = (repo: FakeGithubRepo) => {
    const git = world.gitOf(repo)
    // A test that reads files from a repository without files: loud (500 and state.fakeErrors), not a 404.
    if (!git) throw new Error(`github-fake: ${repo.fullName} has no \`dir\`: contents and trees need a repository`)
    return git
  }

  /** Shared fields of a contents object, in the order github.com sends them. */
  const links = (repo: FakeGithubRepo, ref: string, entry: FakeTreeEntry, kind: "file" | "dir" | "submodule") => {
    const path = entry.path
    const url = `${api()}/repos/${repo.fullName}/contents/${encodePath(path)}?ref=${encodeURIComponent(ref)}`
    const git =
      kind === "submodule"
        ? null
        : `${api()}/repos/${repo.fullName}/git/${kind === "dir" ? "trees" : "blobs"}/${entry.sha}`
    const html =
      kind === "submodule" ? null : `${web}/${repo.fullName}/${kind === "dir" ? "tree" : "blob"}/${ref}/${path}`
    return {
      head: {
        name: posix.basename(path),
        path,
        sha: entry.sha,
        size: kind === "file" ? (entry.size ?? 0) : 0,
        url,
        html_url: html,
        git_url: git,
        download_url: kind === "file" ? `https://raw.githubusercontent.com/${repo.fullName}/${ref}/${path}` : null,
      },
      _links: { self: url, git, html },
    }
  }

  /** One entry of a directory listing: no content; a symlink without `target`; a submodule as "file". */
  const listed = (repo: FakeGithubRepo, ref: string, entry: FakeTreeEntry) => {
    const kind = entry.type === "tree" ? "dir" : entry.type === "commit" ? "submodule" : "file"
    const { head, _links } = links(repo, ref, entry, kind)
    const type = entry.type === "tree" ? "dir" : entry.mode === "120000" ? "symlink" : "file"
    return { ...head, type, _links }
  }

  const listing = (repo: FakeGithubRepo, ref: string, entries: FakeTreeEntry[], prefix = ""): Reply =>
    json(
      200,
      entries
        .slice(0, maxDirectoryEntries)
        .map((entry) => listed(repo, ref, { ...entry, path: `${prefix}${entry.path}` })),
    )

  const file = (repo: FakeGithubRepo, ref: string, shown: FakeTreeEntry, blob: FakeTreeEntry) => {
    const { head, _links } = links(repo, ref, { ...blob, path: shown.path }, "file")
    const size = blob.size ?? 0
    const large = size > maxContentBytes
    const content = large ? "" : encode64(gitOf(repo).blob(blob.sha))
    return { ...head, type: "file", content, encoding: large ? "none" : "base64", _links }
  }

  return {
    getContent(repo: FakeGithubRepo, rawPath: string, requestedRef: string | null, accept: string): Reply {
      if (/vnd\.github(?:\.v3)?\.(?:raw|html|object)/.test(accept))
        throw new Error(`github-fake: the contents API's raw, html and object media types are not modelled (${accept})`)
      const git = gitOf(repo)
      const ref = requestedRef || repo.defaultBranch
      const commit = git.commit(ref)
      if (!commit) return githubError(404, `No commit found for the ref ${ref}`, docs.contentRefNotFound)
      const path = rawPath.split("/").filter(Boolean).join("/")
      if (path === "") return listing(repo, ref, git.list(commit))
      const entry = git.entry(commit, path)
      if (!entry) return notFound(docs.getContent)
      if (entry.type === "tree") return listing(repo, ref, git.list(entry.sha), `${path}/`)
      if (entry.type === "commit") {
        const { head, _links } = links(repo, ref, entry, "submodule")
        return json(200, { ...head, type: "submodule", submodule_git_url: git.submoduleUrl(commit, path), _links })
      }
      if (entry.mode !== "120000") return json(200, file(repo, ref, entry, entry))
      // A symlink whose target is a regular file in the repository answers as that file, under the
      // link's name (recorded: hub4j/github-api); any other symlink answers as itself.
      const target = git.blob(entry.sha).toString("utf8")
      const resolved = posix.normalize(posix.join(posix.dirname(path), target))
      const inside = !posix.isAbsolute(target) && resolved !== ".." && !resolved.startsWith("../")
      const pointed = inside ? git.entry(commit, resolved) : null
      if (pointed && pointed.type === "blob" && pointed.mode !== "120000")
        return json(200, file(repo, ref, entry, pointed))
      const { head, _links } = links(repo, ref, entry, "file")
      return json(200, { ...head, type: "symlink", target, _links })
    },

    getTree(repo: FakeGithubRepo, name: string, recursive: boolean): Reply {
      const git = gitOf(repo)
      const tree = git.tree(name)
      if (!tree) return notFound(docs.getTree)
      const entries = git.list(tree, { recursive })
      const truncated = recursive && entries.length > world.maxTreeEntries
      const kept = truncated ? entries.slice(0, world.maxTreeEntries) : entries
      return json(200, {
        sha: tree,
        url: `${api()}/repos/${repo.fullName}/git/trees/${tree}`,
        tree: kept.map((entry) => ({
          path: entry.path,
          mode: entry.mode,
          type: entry.type,
          sha: entry.sha,
          ...(entry.type === "blob" ? { size: entry.size ?? 0 } : {}),
          ...(entry.type === "commit"
            ? {}
            : { url: `${api()}/repos/${repo.fullName}/git/${entry.type}s/${entry.sha}` }),
        })),
        truncated,
      })
    },
  }
}

/** Base64 as GitHub sends it (Ruby's `Base64.encode64`): a newline after every 60 characters and at the end. */
function encode64(bytes: Uint8Array): string {
  const text = Buffer.from(bytes).toString("base64")
  let wrapped = ""
  for (let start = 0; start < text.length; start += 60) wrapped += `${text.slice(start, start + 60)}\n`
  return wrapped
}

/** A repository path in a URL: each segment escaped, the slashes kept. */
const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/")
