import { basename } from "node:path"
import type { CorpusCase } from "./corpus"

// `eval --from-git <range>`: a repository's own history as a corpus. A fix commit in the range (its
// message says it fixes something) names a problem; the commit that last touched the lines the fix
// changed (git blame at the fix's parent, the SZZ idea) is the change a reviewer should have caught
// it in. The case reviews that commit; its golden comment is the fix's message, at the blamed line.

/** Runs git in the repository; returns stdout, or null when git failed. */
export type RunGit = (args: string[]) => string | null

/** What a commit message must say to count as a fix. */
export const fixPattern = /\b(?:fix(?:e[sd])?|bug(?:fix)?|regression|hotfix)\b/i

/** Cases from the fix commits of `range`, oldest first, and why some fixes gave none. */
export function casesFromGit(
  repoDir: string,
  range: string,
  git: RunGit,
  options: { limit?: number } = {},
): { cases: CorpusCase[]; skipped: string[] } {
  const log = git(["log", "--reverse", "--no-merges", "--format=%H%x1f%s%x1f%b%x1e", range])
  if (log === null) return { cases: [], skipped: [`git log ${range} failed: is it a range of this repository?`] }
  const cases: CorpusCase[] = []
  const skipped: string[] = []
  for (const record of log.split("\x1e")) {
    const [sha, subject = "", body = ""] = record.trim().split("\x1f")
    if (!sha || !fixPattern.test(`${subject}\n${body}`)) continue
    if (options.limit !== undefined && cases.length >= options.limit) break
    const made = caseOf(repoDir, sha, subject.trim(), body.trim(), git)
    if (typeof made === "string") skipped.push(`${sha.slice(0, 8)} ${subject}: ${made}`)
    else cases.push(made)
  }
  return { cases, skipped }
}

function caseOf(repoDir: string, fix: string, subject: string, body: string, git: RunGit): CorpusCase | string {
  const parents = git(["rev-list", "--parents", "-n", "1", fix])?.trim().split(" ").slice(1) ?? []
  if (parents.length !== 1) return "not a commit with exactly one parent"
  const diff = git(["diff", "-U0", "--no-color", "--no-ext-diff", "-M", `${fix}^`, fix])
  if (diff === null) return "git diff failed"
  // The old-side lines the fix removed or changed, per file (a file the fix added has none).
  const changed = new Map<string, number[]>()
  let file: string | null = null
  for (const line of diff.split("\n")) {
    if (line.startsWith("--- ")) file = line === "--- /dev/null" ? null : line.slice(6)
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+/.exec(line)
    if (hunk && file) {
      const start = Number(hunk[1])
      const count = hunk[2] === undefined ? 1 : Number(hunk[2])
      for (let offset = 0; offset < count; offset += 1)
        changed.set(file, [...(changed.get(file) ?? []), start + offset])
    }
  }
  // Blame each changed line at the fix's parent: the commit that wrote it, and where it was there.
  const votes = new Map<string, { count: number; file: string; line: number }>()
  for (const [path, lines] of changed) {
    for (const line of lines.slice(0, 50)) {
      const blame = git(["blame", "--porcelain", "-L", `${line},${line}`, `${fix}^`, "--", path])
      const header = blame ? /^([0-9a-f]{40}) (\d+) \d+/.exec(blame) : null
      if (!header) continue
      const filename = /^filename (.+)$/m.exec(blame!)?.[1] ?? path
      const vote = votes.get(header[1]!) ?? { count: 0, file: filename, line: Number(header[2]) }
      vote.count += 1
      votes.set(header[1]!, vote)
    }
  }
  const [introduced, at] = [...votes].sort((a, b) => b[1].count - a[1].count)[0] ?? []
  if (!introduced || !at) return "the fix changes no earlier line (it only adds code)"
  const introducedParents = git(["rev-list", "--parents", "-n", "1", introduced])?.trim().split(" ").slice(1) ?? []
  if (introducedParents.length !== 1) return `the blamed commit ${introduced.slice(0, 8)} has no single parent`
  const title = git(["log", "-1", "--format=%s", introduced])?.trim() || introduced.slice(0, 8)
  return {
    id: `fix-${fix.slice(0, 12)}`,
    repository: basename(repoDir),
    title,
    diff: { kind: "git", base: `${introduced}^`, head: introduced },
    golden: [
      {
        text: [subject, body.split(/\n\s*\n/)[0]?.trim()].filter(Boolean).join(": "),
        severity: "warning",
        sourceSeverity: "fix commit",
        file: at.file,
        line: at.line,
      },
    ],
    note: `from fix ${fix.slice(0, 12)}; introduced by ${introduced.slice(0, 12)}`,
  }
}
