import { type DiffFile, isLockfile, type Mechanic, type MechanicsKind, mechanicsKindOf } from "@opencode-reviewer/core"

// What the change does to how the project is installed, built, tested or run: the facts the
// agents-md reviewer starts from. Core only classifies paths (it decides whether this reviewer runs).

/** How much a change to project mechanics matters for AGENTS.md (docs/design-numbers.md#agentsmd-reviewer). */
export type Significance = "high" | "medium" | "low"

/** One fact about how the change alters the way the project is installed, built, tested or run. */
export interface MechanicsChange {
  kind: MechanicsKind
  level: Significance
  /** The files behind it. */
  paths: string[]
  /** One line a reviewer can start from, e.g. "lockfile switch: package-lock.json deleted, bun.lock added". */
  detail: string
}

/** At this many renamed files a change counts as a directory restructure. */
export const restructureRenames = 10

/**
 * What the change does to the project's mechanics, at the significance levels of
 * docs/design-numbers.md#agentsmd-reviewer: high (package manager, test framework, build tool,
 * restructure, new environment variables, CI), medium (new dependencies, lint rules, API clients,
 * scripts and toolchain versions), low (edits that rarely need AGENTS.md: lockfile refreshes,
 * version bumps, config tweaks). Sorted high first.
 */
export function projectMechanics(files: readonly { file: DiffFile }[]): MechanicsChange[] {
  const changes: MechanicsChange[] = []
  const lockfiles: DiffFile[] = []
  for (const { file } of files) {
    const kind = mechanicsKindOf(file.path)
    if (kind === null) continue
    if (kind === "package-manager" && isLockfile(file.path)) lockfiles.push(file)
    else if (kind === "manifest") changes.push(...manifestChanges(file))
    else changes.push(fileChange(kind, file))
  }
  // A lockfile switch is the clearest package-manager fact: it leads its level.
  changes.unshift(...lockfileChanges(lockfiles))
  const renamed = files.filter(({ file }) => file.status === "renamed")
  if (renamed.length >= restructureRenames) {
    const moves = [...new Set(renamed.map(({ file }) => `${dirOf(file.oldPath)} → ${dirOf(file.path)}`))]
    changes.push({
      kind: "restructure",
      level: "high",
      paths: renamed.map(({ file }) => file.path),
      detail: `${renamed.length} files moved (${moves.slice(0, 3).join(", ")}${moves.length > 3 ? `, ${moves.length - 3} more` : ""})`,
    })
  }
  const rank: Record<Significance, number> = { high: 0, medium: 1, low: 2 }
  return changes
    .map((change, index) => ({ change, index }))
    .sort((a, b) => rank[a.change.level] - rank[b.change.level] || a.index - b.index)
    .map(({ change }) => change)
}

const kindNames: Record<Mechanic, string> = {
  ci: "CI configuration",
  "package-manager": "package manager configuration",
  environment: "environment template",
  "test-framework": "test framework configuration",
  "build-tool": "build tool configuration",
  "task-runner": "task runner file",
  lint: "lint or format rules",
  toolchain: "toolchain version file",
  manifest: "manifest",
  typescript: "TypeScript configuration",
  container: "container set-up",
  "api-client": "API schema or client configuration",
}

function fileChange(kind: Mechanic, file: DiffFile): MechanicsChange {
  const wholeFile = file.status === "added" || file.status === "deleted"
  const level: Significance =
    kind === "ci" || (wholeFile && ["package-manager", "test-framework", "build-tool", "task-runner"].includes(kind))
      ? "high"
      : ["lint", "toolchain", "api-client", "task-runner", "package-manager"].includes(kind) ||
          (wholeFile && ["typescript", "container"].includes(kind))
        ? "medium"
        : "low"
  if (kind === "environment") {
    const names = addedMatches(file, /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/).filter(
      (name) => !removedMatches(file, /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=/).includes(name),
    )
    if (names.length > 0)
      return {
        kind,
        level: "high",
        paths: [file.path],
        detail: `new environment variables in ${file.path}: ${names.join(", ")}`,
      }
    return { kind, level: "medium", paths: [file.path], detail: `${kindNames[kind]} ${file.status}: ${file.path}` }
  }
  return {
    kind,
    level,
    paths: [file.path],
    detail: `${kindNames[kind]} ${file.status}: ${file.path}${file.status === "renamed" ? ` (was ${file.oldPath})` : ""}`,
  }
}

function lockfileChanges(lockfiles: readonly DiffFile[]): MechanicsChange[] {
  if (lockfiles.length === 0) return []
  const swapped = lockfiles.filter((file) => file.status === "added" || file.status === "deleted")
  const updated = lockfiles.filter((file) => !swapped.includes(file))
  const changes: MechanicsChange[] = []
  if (swapped.length > 0) {
    const removed = swapped.filter((file) => file.status === "deleted").map((file) => file.path)
    const added = swapped.filter((file) => file.status === "added").map((file) => file.path)
    const parts = [
      ...(removed.length ? [`${removed.join(", ")} deleted`] : []),
      ...(added.length ? [`${added.join(", ")} added`] : []),
    ]
    const what =
      removed.length > 0 && added.length > 0
        ? "lockfile switch (package manager changed)"
        : removed.length > 0
          ? "lockfile removed"
          : "lockfile added"
    changes.push({
      kind: "package-manager",
      level: "high",
      paths: swapped.map((file) => file.path),
      detail: `${what}: ${parts.join(", ")}`,
    })
  }
  if (updated.length > 0) {
    changes.push({
      kind: "package-manager",
      level: "low",
      paths: updated.map((file) => file.path),
      detail: `lockfile updated: ${updated.map((file) => file.path).join(", ")}`,
    })
  }
  return changes
}

const jsonEntry = /^\s*"([^"]+)"\s*:\s*"([^"]*)"\s*,?\s*$/
const versionSpec =
  /^(?:[~^<>=*]|\d|x\b|latest$|next$|workspace:|npm:|file:|link:|portal:|catalog:|git[+:]|https?:|github:)/
const engineKeys = new Set(["node", "npm", "pnpm", "yarn", "bun", "deno"])
const metadataKeys = new Set([
  "name",
  "version",
  "description",
  "main",
  "module",
  "types",
  "typings",
  "type",
  "license",
  "author",
  "homepage",
  "bugs",
  "repository",
  "private",
  "sideEffects",
  "url",
  "email",
])

function manifestChanges(file: DiffFile): MechanicsChange[] {
  const isPackageJson = /(?:^|\/)package\.json$/i.test(file.path)
  if (file.status === "added" || file.status === "deleted") {
    return [
      {
        kind: "manifest",
        level: "medium",
        paths: [file.path],
        detail: `manifest ${file.status}: ${file.path} (a package or workspace ${file.status === "added" ? "appears" : "goes away"})`,
      },
    ]
  }
  const changes: MechanicsChange[] = []
  if (isPackageJson) {
    const entries = (kind: "add" | "remove") =>
      changedLines(file, kind).flatMap((text) => {
        const match = jsonEntry.exec(text)
        return match ? [{ key: match[1]!, value: match[2]! }] : []
      })
    const added = entries("add")
    const removed = entries("remove")
    const manager =
      added.find((entry) => entry.key === "packageManager") ?? removed.find((entry) => entry.key === "packageManager")
    if (manager) {
      const now = added.find((entry) => entry.key === "packageManager")
      changes.push({
        kind: "package-manager",
        level: "high",
        paths: [file.path],
        detail: `packageManager in ${file.path} ${now ? `set to ${now.value}` : "removed"}`,
      })
    }
    const plain = (entry: { key: string }) => entry.key !== "packageManager" && !metadataKeys.has(entry.key)
    const isEngine = (entry: { key: string; value: string }) =>
      plain(entry) && engineKeys.has(entry.key) && versionSpec.test(entry.value.trim())
    const isDependency = (entry: { key: string; value: string }) =>
      plain(entry) && !isEngine(entry) && versionSpec.test(entry.value.trim())
    const isScript = (entry: { key: string; value: string }) => plain(entry) && !isEngine(entry) && !isDependency(entry)
    const engines = [...new Set([...added, ...removed].filter(isEngine).map((entry) => entry.key))]
    if (engines.length > 0)
      changes.push({
        kind: "toolchain",
        level: "medium",
        paths: [file.path],
        detail: `engine versions changed in ${file.path}: ${engines.join(", ")}`,
      })
    const scripts = [...new Set([...added, ...removed].filter(isScript).map((entry) => entry.key))]
    if (scripts.length > 0)
      changes.push({
        kind: "scripts",
        level: "medium",
        paths: [file.path],
        detail: `scripts changed in ${file.path}: ${scripts.join(", ")}`,
      })
    const before = new Set(removed.filter(isDependency).map((entry) => entry.key))
    const fresh = added
      .filter(isDependency)
      .map((entry) => entry.key)
      .filter((name) => !before.has(name))
    const bumped = added
      .filter(isDependency)
      .map((entry) => entry.key)
      .filter((name) => before.has(name))
    if (fresh.length > 0)
      changes.push({
        kind: "dependencies",
        level: "medium",
        paths: [file.path],
        detail: `new dependencies in ${file.path}: ${fresh.join(", ")}`,
      })
    if (bumped.length > 0)
      changes.push({
        kind: "dependencies",
        level: "low",
        paths: [file.path],
        detail: `dependency versions changed in ${file.path}: ${bumped.join(", ")}`,
      })
  } else if (/requirements[^/]*\.txt$/i.test(file.path)) {
    const name = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/
    const before = new Set(removedMatches(file, name).map((entry) => entry.toLowerCase()))
    const fresh = addedMatches(file, name).filter((entry) => !before.has(entry.toLowerCase()))
    if (fresh.length > 0)
      changes.push({
        kind: "dependencies",
        level: "medium",
        paths: [file.path],
        detail: `new dependencies in ${file.path}: ${fresh.join(", ")}`,
      })
  }
  if (changes.length === 0)
    changes.push({ kind: "manifest", level: "low", paths: [file.path], detail: `manifest edited: ${file.path}` })
  return changes
}

function changedLines(file: DiffFile, kind: "add" | "remove"): string[] {
  return file.hunks.flatMap((hunk) => hunk.lines.filter((line) => line.kind === kind).map((line) => line.text))
}

function addedMatches(file: DiffFile, pattern: RegExp): string[] {
  return [...new Set(changedLines(file, "add").flatMap((text) => pattern.exec(text)?.[1] ?? []))]
}

function removedMatches(file: DiffFile, pattern: RegExp): string[] {
  return [...new Set(changedLines(file, "remove").flatMap((text) => pattern.exec(text)?.[1] ?? []))]
}

function dirOf(path: string): string {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "." : path.slice(0, slash)
}
