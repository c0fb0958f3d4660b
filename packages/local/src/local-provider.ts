import { copyFile, lstat, mkdtemp, rm, stat, utimes } from "node:fs/promises"
import { tmpdir } from "node:os"
import { isAbsolute, join, relative, resolve } from "node:path"
import {
  anonymousMergeRequest,
  type Change,
  ChangeReadError,
  gitDiffArgs,
  type VcsProvider,
} from "@opencode-reviewer/core"
import pLimit from "p-limit"
import { createGit, type Git } from "./git"

/** How to pick the change in a local repository. */
export interface LocalOptions {
  repoDir: string
  /** Base ref; default: the merge base of `head` with the default branch. */
  base?: string | undefined
  /** Head ref; default HEAD. Ignored with `workingTree`. */
  head?: string | undefined
  /** Review the working tree (staged, unstaged and untracked files) against the base. */
  workingTree?: boolean | undefined
  title?: string | undefined
  description?: string | undefined
  /** Environment for git (the CLI passes its own). */
  env: Record<string, string | undefined>
}

const headBytes = 1024
const descriptionLimit = 20_000

/** A VCS provider over a local git checkout: diff between refs, or the working tree against a base. */
export function createLocalProvider(options: LocalOptions): VcsProvider {
  // The trusted side is the base the change is measured against, known once the change is read.
  let trusted: { git: Git; base: string } | null = null
  return {
    name: "local",
    // No merge request to post on: the CLI's local outputs are the whole publication.
    publish: async () => ({ files: [], lines: [] }),
    async readTrustedFile(path) {
      if (!trusted) throw new Error("readTrustedFile called before readChange")
      const result = await trusted.git.run(["cat-file", "blob", `${trusted.base}:${path}`])
      return result.code === 0 ? new TextDecoder().decode(result.stdout) : null
    },
    async listTrustedFiles(dir) {
      if (!trusted) throw new Error("listTrustedFiles called before readChange")
      return listTreeFiles(trusted.git, trusted.base, dir)
    },
    async readChange() {
      const top = await toplevel(options.repoDir, options.env)
      const git = createGit(top, options.env)
      const head = options.workingTree
        ? await resolveCommit(git, "HEAD")
        : await resolveCommit(git, options.head ?? "HEAD")
      const target = options.base ?? (await defaultBranch(git))
      const baseCommit = await resolveCommit(git, target)
      const base = await mergeBase(git, baseCommit, head)
      trusted = { git, base }
      const diff = options.workingTree ? await workingTreeDiff(git, base) : await committedDiff(git, base, head)
      const branch = (await git.text(["rev-parse", "--abbrev-ref", "HEAD"])).trim()
      const title =
        options.title ?? (options.workingTree ? `Uncommitted changes on ${branch}` : await subject(git, head))
      const description = options.description ?? (await commitMessages(git, base, head))
      const range = options.workingTree ? `${short(base)} and the working tree` : `${short(base)}..${short(head)}`
      return {
        source: `git diff ${range} in ${top}`,
        diff,
        mergeRequest: {
          ...anonymousMergeRequest(title, description),
          sourceBranch: branch === "HEAD" ? null : branch,
          targetBranch: options.base ?? target,
          baseSha: base,
          headSha: options.workingTree ? null : head,
        },
        comments: [],
        previousReview: null,
        customInstructions: null,
        readHeads: (paths) =>
          options.workingTree ? readWorkingTreeHeads(top, paths) : readCommitHeads(git, head, paths),
        readHeadFile: (path) =>
          options.workingTree ? readWorkingTreeFile(top, path) : readCommitFile(git, head, path),
      } satisfies Change
    },
  }
}

async function toplevel(dir: string, env: Record<string, string | undefined>): Promise<string> {
  const exists = await stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  )
  if (!exists)
    throw new ChangeReadError(`repository directory not found: ${dir}`, {
      source: dir,
      hint: "pass --repo DIR with an existing directory",
    })
  const result = await createGit(dir, env).run(["rev-parse", "--show-toplevel"])
  if (result.code !== 0) {
    throw new ChangeReadError(`not a git repository: ${dir}`, {
      source: dir,
      hint: "run inside a git checkout, pass --repo DIR, or give a diff with --patch FILE",
    })
  }
  return new TextDecoder().decode(result.stdout).trim()
}

async function resolveCommit(git: Git, ref: string): Promise<string> {
  const result = await git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`])
  if (result.code === 0) return new TextDecoder().decode(result.stdout).trim()
  const empty = (await git.run(["rev-parse", "--verify", "--quiet", "HEAD"])).code !== 0
  if (empty && ref === "HEAD")
    throw new ChangeReadError(`the repository at ${git.dir} has no commits yet`, {
      source: git.dir,
      hint: "commit something, or use --patch FILE",
    })
  const shallow =
    new TextDecoder().decode((await git.run(["rev-parse", "--is-shallow-repository"])).stdout).trim() === "true"
  throw new ChangeReadError(`unknown ref "${ref}" in ${git.dir}`, {
    source: git.dir,
    hint: shallow
      ? `this is a shallow clone: fetch the ref (git fetch --depth=1000 origin ${ref}) or clone with full history`
      : `check the name, or fetch it first (git fetch origin ${ref})`,
  })
}

async function defaultBranch(git: Git): Promise<string> {
  const remoteHead = await git.run(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"])
  if (remoteHead.code === 0) return new TextDecoder().decode(remoteHead.stdout).trim()
  for (const candidate of ["main", "master", "origin/main", "origin/master", "trunk", "develop"]) {
    const found = await git.run(["rev-parse", "--verify", "--quiet", "--end-of-options", `${candidate}^{commit}`])
    if (found.code === 0) return candidate
  }
  throw new ChangeReadError(`cannot tell the default branch of ${git.dir}`, {
    source: git.dir,
    hint: "pass --base REF",
  })
}

async function mergeBase(git: Git, base: string, head: string): Promise<string> {
  const result = await git.run(["merge-base", base, head])
  // Unrelated histories have no merge base; the plain two-ref diff is then the honest answer.
  if (result.code !== 0) return base
  return new TextDecoder().decode(result.stdout).trim()
}

async function committedDiff(git: Git, base: string, head: string): Promise<Uint8Array> {
  const result = await git.run([...gitDiffArgs, base, head, "--"])
  if (result.code !== 0) throw new ChangeReadError(`git diff failed: ${result.stderr.trim()}`, { source: git.dir })
  return result.stdout
}

// The working tree, untracked files included, diffed through a throwaway copy of the index so the
// user's own staging area is never touched.
async function workingTreeDiff(git: Git, base: string): Promise<Uint8Array> {
  const scratch = await mkdtemp(join(tmpdir(), "opencode-reviewer-index-"))
  try {
    const index = join(scratch, "index")
    const current = (await git.text(["rev-parse", "--path-format=absolute", "--git-path", "index"])).trim()
    // The copy keeps the index's mtime: git trusts cached stat data only for files older than the
    // index file, so a fresh mtime would hide edits made in the same second as the last `git add`.
    await copyFile(current, index).then(
      async () => {
        const { atime, mtime } = await stat(current)
        await utimes(index, atime, mtime)
      },
      () => undefined,
    )
    const env = { GIT_INDEX_FILE: index }
    const added = await git.run(["add", "--all", "--", "."], { env })
    if (added.code !== 0)
      throw new ChangeReadError(`cannot stage the working tree: ${added.stderr.trim()}`, { source: git.dir })
    const result = await git.run([...gitDiffArgs, "--cached", base, "--"], { env })
    if (result.code !== 0) throw new ChangeReadError(`git diff failed: ${result.stderr.trim()}`, { source: git.dir })
    return result.stdout
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function subject(git: Git, commit: string): Promise<string> {
  return (await git.text(["log", "-1", "--format=%s", commit])).trim()
}

async function commitMessages(git: Git, base: string, head: string): Promise<string> {
  if (base === head) return ""
  const log = await git.text(["log", "--max-count=50", "--format=%B%x00", `${base}..${head}`])
  const messages = log
    .split("\0")
    .map((message) => message.trim())
    .filter(Boolean)
  const text = messages.join("\n\n---\n\n")
  return text.length > descriptionLimit ? `${text.slice(0, descriptionLimit)}\n[commit messages truncated]` : text
}

/** The first bytes of each path at a commit, read in one `git cat-file --batch`; missing paths are absent. */
export async function readCommitHeads(
  git: Git,
  commit: string,
  paths: readonly string[],
): Promise<Map<string, string>> {
  const usable = paths.filter((path) => !path.includes("\n"))
  if (usable.length === 0) return new Map()
  const input = usable.map((path) => `${commit}:${path}\n`).join("")
  const result = await git.run(["cat-file", "--batch"], { input })
  const heads = new Map<string, string>()
  const bytes = result.stdout
  const decoder = new TextDecoder()
  let offset = 0
  for (const path of usable) {
    const end = bytes.indexOf(10, offset)
    if (end < 0) break
    const header = decoder.decode(bytes.subarray(offset, end))
    offset = end + 1
    const size = Number(header.split(" ")[2])
    if (header.endsWith(" missing") || !Number.isFinite(size)) continue
    heads.set(path, decoder.decode(bytes.subarray(offset, offset + Math.min(size, headBytes))))
    offset += size + 1
  }
  return heads
}

/**
 * Regular files (blobs that are not symlinks) under `dir` at `commit`, repository-relative; null
 * when `dir` is not a folder there. Reads the tree object, so the working tree never matters.
 */
async function listTreeFiles(git: Git, commit: string, dir: string): Promise<string[] | null> {
  const folder = dir.replace(/^\.?\/+/, "").replace(/\/+$/, "")
  if (folder.split("/").some((part) => part === "..")) return null
  const tree = folder === "" || folder === "." ? `${commit}^{tree}` : `${commit}:${folder}`
  const kind = await git.run(["cat-file", "-t", tree])
  if (kind.code !== 0 || new TextDecoder().decode(kind.stdout).trim() !== "tree") return null
  const listed = await git.run(["ls-tree", "-r", "-z", tree])
  if (listed.code !== 0) return null
  const prefix = folder === "" || folder === "." ? "" : `${folder}/`
  // "<mode> SP <type> SP <object> TAB <path>" NUL-terminated; -z leaves the path unquoted.
  return new TextDecoder()
    .decode(listed.stdout)
    .split("\0")
    .flatMap((entry) => {
      const tab = entry.indexOf("\t")
      if (tab < 0) return []
      const [mode, type] = entry.slice(0, tab).split(" ")
      return type === "blob" && mode !== "120000" ? [`${prefix}${entry.slice(tab + 1)}`] : []
    })
}

/** A whole file at a commit (`git cat-file blob`), or null when the commit has no such file. */
export async function readCommitFile(git: Git, commit: string, path: string): Promise<string | null> {
  if (path.includes("\n")) return null
  const result = await git.run(["cat-file", "blob", `${commit}:${path}`])
  return result.code === 0 ? new TextDecoder().decode(result.stdout) : null
}

// A regular file inside the checkout; symlinks and paths that leave it are not followed.
async function readWorkingTreeFile(top: string, path: string): Promise<string | null> {
  const target = resolve(top, path)
  if (relative(top, target).startsWith("..") || isAbsolute(relative(top, target))) return null
  const info = await lstat(target).catch(() => null)
  if (!info?.isFile()) return null
  return Bun.file(target)
    .text()
    .catch(() => null)
}

async function readWorkingTreeHeads(top: string, paths: readonly string[]): Promise<Map<string, string>> {
  const limit = pLimit(32)
  const entries = await Promise.all(
    paths.map((path) =>
      limit(async () => {
        const file = Bun.file(join(top, path))
        const text = await file
          .slice(0, headBytes)
          .text()
          .catch(() => null)
        return [path, text] as const
      }),
    ),
  )
  return new Map(entries.filter((entry): entry is readonly [string, string] => entry[1] !== null))
}

function short(sha: string): string {
  return sha.slice(0, 12)
}
