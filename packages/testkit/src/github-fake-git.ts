// The GitHub fake's view of a repository on disk (`GithubRepoOptions.dir`): names resolved to
// commits and trees the way the contents and trees APIs accept them, tree entries and blob bytes.
// git runs through Bun.spawnSync with no user or system configuration, as everywhere in testkit
// (AGENTS.md); nothing here knows GitHub's answer shapes (github-fake-contents.ts renders them).
import { isolatedGitEnv } from "./gitlab-fake-git"

/** One entry of `git ls-tree --long`: what GitHub's trees API lists. */
export interface FakeTreeEntry {
  /** As git prints it: "100644", "100755", "120000" (symlink), "040000" (tree), "160000" (submodule). */
  mode: string
  type: "blob" | "tree" | "commit"
  sha: string
  /** Blob size in bytes; null for trees and submodules. */
  size: number | null
  /** From the root of the tree that was listed. */
  path: string
}

/** A branch, tag or sha, never a revision expression (`main~1`, `HEAD^{tree}`, `@{u}`). */
const hexName = /^[0-9a-f]{7,40}$/i

export class FakeRepoGit {
  private readonly env: Record<string, string>

  constructor(readonly dir: string) {
    this.env = isolatedGitEnv(dir)
    if (this.run(["rev-parse", "--git-dir"]).code !== 0)
      throw new Error(`github-fake: ${dir} is not a git repository (GithubRepoOptions.dir)`)
  }

  /** The commit a branch, tag or (at least 7 hex digits of a) sha names, or null. */
  commit(name: string): string | null {
    return this.resolve(name, "commit")
  }

  /** The tree a branch, tag, commit sha or tree sha names, or null. */
  tree(name: string): string | null {
    return this.resolve(name, "tree")
  }

  /** The entry at `path` (no leading or trailing slash) in a commit, or null when there is none. */
  entry(commit: string, path: string): FakeTreeEntry | null {
    return this.list(commit, { path }).find((candidate) => candidate.path === path) ?? null
  }

  /** A tree's entries in git's order; with `recursive`, every subtree and its entries too (`-r -t`). */
  list(treeish: string, options: { recursive?: boolean; path?: string } = {}): FakeTreeEntry[] {
    const args = ["ls-tree", "-z", "--long", "--full-tree", ...(options.recursive ? ["-r", "-t"] : []), treeish]
    if (options.path !== undefined) args.push("--", options.path)
    const result = this.run(args)
    if (result.code !== 0) throw new Error(`github-fake: git ls-tree ${treeish} failed: ${result.stderr.trim()}`)
    return result.stdout
      .toString("utf8")
      .split("\0")
      .filter((record) => record !== "")
      .map(parseEntry)
  }

  /** A blob's bytes. */
  blob(sha: string): Buffer {
    const result = this.run(["cat-file", "blob", sha])
    if (result.code !== 0) throw new Error(`github-fake: git cat-file blob ${sha} failed: ${result.stderr.trim()}`)
    return result.stdout
  }

  /** The `url` `.gitmodules` (at that commit) gives the submodule at `path`, or null. */
  submoduleUrl(commit: string, path: string): string | null {
    const blob = `${commit}:.gitmodules`
    const paths = this.run(["config", "--blob", blob, "--get-regexp", "^submodule\\..*\\.path$"])
    if (paths.code !== 0) return null
    for (const line of paths.stdout.toString("utf8").split("\n")) {
      const space = line.indexOf(" ")
      if (space < 0 || line.slice(space + 1) !== path) continue
      const name = line.slice("submodule.".length, space - ".path".length)
      const url = this.run(["config", "--blob", blob, "--get", `submodule.${name}.url`])
      return url.code === 0 ? url.stdout.toString("utf8").trim() : null
    }
    return null
  }

  private resolve(name: string, kind: "commit" | "tree"): string | null {
    if (name === "") return null
    // Exact ref names first (show-ref --verify takes no patterns and no revision syntax), then shas.
    const refs = [`refs/heads/${name}`, `refs/tags/${name}`, ...(name.startsWith("refs/") ? [name] : [])]
    const ref = refs.find((candidate) => this.run(["show-ref", "--verify", "--quiet", candidate]).code === 0)
    const target = ref ?? (hexName.test(name) ? name.toLowerCase() : null)
    if (target === null) return null
    const peeled = this.run(["rev-parse", "--verify", "--quiet", `${target}^{${kind}}`])
    return peeled.code === 0 ? peeled.stdout.toString("utf8").trim() : null
  }

  private run(args: string[]): { code: number; stdout: Buffer; stderr: string } {
    // spawnSync on purpose (AGENTS.md): Bun's async pipe reader holds many times the output in memory.
    const child = Bun.spawnSync(["git", "-c", "core.quotePath=false", "--literal-pathspecs", ...args], {
      cwd: this.dir,
      env: this.env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    })
    return { code: child.exitCode ?? 128, stdout: Buffer.from(child.stdout), stderr: child.stderr.toString() }
  }
}

function parseEntry(record: string): FakeTreeEntry {
  // "<mode> SP <type> SP <sha> SP+ <size or -> TAB <path>", the size right-aligned.
  const match = /^(\d{6}) (blob|tree|commit) ([0-9a-f]+) +(-|\d+)\t([\s\S]+)$/.exec(record)
  if (!match) throw new Error(`github-fake: unexpected git ls-tree record ${JSON.stringify(record)}`)
  const [, mode = "", type = "blob", sha = "", size = "-", path = ""] = match
  return { mode, type: type as FakeTreeEntry["type"], sha, size: size === "-" ? null : Number(size), path }
}
