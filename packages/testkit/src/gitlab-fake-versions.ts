import type { FakeVersion } from "./gitlab-fake-types"
import type { FakeWorld } from "./gitlab-fake-world"

// Versions (from git): a merge request diff version read from the repository's two branches, once
// at the start and on every push(), with the per-file flags GitLab computes for the API.

export type FakeVersions = ReturnType<typeof createVersions>

export function createVersions(world: FakeWorld) {
  const { git, options, now, maxPatchBytes, maxDiffFiles, current } = world

  const readVersion = (): FakeVersion => {
    const head = git.resolveCommit(`refs/heads/${options.sourceBranch}`) ?? git.resolveCommit(options.sourceBranch)
    const start = git.resolveCommit(`refs/heads/${options.targetBranch}`) ?? git.resolveCommit(options.targetBranch)
    if (!head) throw new Error(`gitlab-fake: source branch ${options.sourceBranch} not found in ${options.repoDir}`)
    if (!start) throw new Error(`gitlab-fake: target branch ${options.targetBranch} not found in ${options.repoDir}`)
    const base = git.mergeBase(start, head)
    if (!base) throw new Error(`gitlab-fake: ${options.sourceBranch} and ${options.targetBranch} have no merge base`)
    const changed = git.diffFiles(base, head)
    // Gitaly stops the collection at diff_max_files; GitLab persists what it got and marks the overflow.
    const files = changed.slice(0, maxDiffFiles)
    const generated = git.generatedByAttributes(
      head,
      files.map((file) => file.newPath),
    )
    return {
      id: world.ids.version++,
      headSha: head,
      baseSha: base,
      startSha: start,
      createdAt: now(),
      files: files.map((file) => {
        const tooLarge = Buffer.byteLength(file.diff) >= maxPatchBytes
        const collapsed = !tooLarge && (options.collapsedPaths ?? []).includes(file.newPath)
        return {
          ...file,
          diff: tooLarge || collapsed ? "" : file.diff,
          generated:
            generated.has(file.newPath) ||
            (options.generatedPaths ?? []).includes(file.newPath) ||
            looksGenerated(file.newPath),
          collapsed,
          tooLarge,
        }
      }),
      overflow: changed.length > files.length,
      commits: git.commits(base, head),
      patchIdSha: git.patchId(base, head),
    }
  }
  const conflictCache = new Map<string, boolean>()
  const hasConflicts = () => {
    const version = current()
    const key = `${version.startSha}\0${version.headSha}`
    if (!conflictCache.has(key)) conflictCache.set(key, git.hasConflicts(version.startSha, version.headSha))
    return conflictCache.get(key)!
  }

  return { readVersion, hasConflicts }
}

// Gitlab::Git::DiffCollection#real_size: the stored count, with "+" when the collection overflowed.
export const realSize = (version: FakeVersion) => `${version.files.length}${version.overflow ? "+" : ""}`

// A few files Linguist always treats as generated (GitLab's generated_file also reads gitattributes).
function looksGenerated(path: string): boolean {
  const name = path.split("/").pop() ?? path
  return (
    ["package-lock.json", "npm-shrinkwrap.json", "composer.lock", "Pipfile.lock", "poetry.lock", "Cargo.lock"].includes(
      name,
    ) ||
    /\.min\.(js|css)$/.test(name) ||
    /\.(js|css)\.map$/.test(name) ||
    /\.pb\.go$/.test(name) ||
    /_pb2\.py$/.test(name)
  )
}
