/** A compiled set of globs; `match` returns the first glob that matches, or null. */
export interface GlobSet {
  match(path: string): string | null
}

const globChars = /[*?[\]{}!]/

/**
 * Compiles globs once so matching thousands of paths stays cheap: `**\/<name>` patterns (most of
 * the built-in rules) become one basename lookup, the rest go through Bun.Glob.
 */
export function compileGlobs(patterns: readonly string[], options: { caseInsensitive?: boolean } = {}): GlobSet {
  const fold = options.caseInsensitive === true
  const names = new Map<string, string>()
  const globs: { pattern: string; glob: Bun.Glob }[] = []
  for (const pattern of patterns) {
    const subject = fold ? pattern.toLowerCase() : pattern
    const name = subject.startsWith("**/") ? subject.slice(3) : null
    if (name !== null && !globChars.test(name) && !name.includes("/")) {
      if (!names.has(name)) names.set(name, pattern)
      continue
    }
    globs.push({ pattern, glob: new Bun.Glob(subject) })
  }
  return {
    match(path) {
      const subject = fold ? path.toLowerCase() : path
      const byName = names.get(subject.slice(subject.lastIndexOf("/") + 1))
      // Keep the declared order: a glob listed before the basename rule still wins.
      const first = globs.find(({ glob }) => glob.match(subject))?.pattern ?? null
      if (byName === undefined) return first
      if (first === null) return byName
      return patterns.indexOf(first) < patterns.indexOf(byName) ? first : byName
    },
  }
}
