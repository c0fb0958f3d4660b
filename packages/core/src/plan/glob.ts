/** A compiled set of globs; `match` returns the first glob that matches, or null. */
export interface GlobSet {
  match(path: string): string | null
}

const globChars = /[*?[\]{}!]/

/**
 * Compiles globs once so matching thousands of paths stays cheap: `**\/<name>` patterns (most of
 * the built-in rules) become one basename lookup, the rest go through Bun.Glob, asked only about a
 * path that holds every literal part of the pattern.
 */
export function compileGlobs(patterns: readonly string[], options: { caseInsensitive?: boolean } = {}): GlobSet {
  const fold = options.caseInsensitive === true
  const names = new Map<string, string>()
  const globs: CompiledGlob[] = []
  for (const pattern of patterns) {
    const subject = fold ? pattern.toLowerCase() : pattern
    const name = subject.startsWith("**/") ? subject.slice(3) : null
    if (name !== null && !globChars.test(name) && !name.includes("/")) {
      if (!names.has(name)) names.set(name, pattern)
      continue
    }
    globs.push({ pattern, glob: new Bun.Glob(subject), parts: literalParts(subject) })
  }
  // A path that holds no glob's longest literal part can match only the globs that have none.
  const unkeyed = globs.filter(({ parts }) => parts.length === 0)
  const keys = globs.flatMap(({ parts }) =>
    parts.length === 0 ? [] : [parts.reduce((longest, part) => (part.length > longest.length ? part : longest))],
  )
  const anyKey = keys.length === 0 ? null : new RegExp(keys.map(escapeRegExp).join("|"))
  return {
    match(path) {
      const subject = fold ? path.toLowerCase() : path
      const byName = names.get(subject.slice(subject.lastIndexOf("/") + 1))
      // Keep the declared order: a glob listed before the basename rule still wins.
      const first = firstMatch(anyKey === null || anyKey.test(subject) ? globs : unkeyed, subject)
      if (byName === undefined) return first
      if (first === null) return byName
      return patterns.indexOf(first) < patterns.indexOf(byName) ? first : byName
    },
  }
}

interface CompiledGlob {
  pattern: string
  glob: Bun.Glob
  parts: string[]
}

// Thousands of paths against dozens of globs: plain loops, no allocation per check.
function firstMatch(globs: readonly CompiledGlob[], subject: string): string | null {
  for (const { pattern, glob, parts } of globs) {
    if (holdsAll(subject, parts) && glob.match(subject)) return pattern
  }
  return null
}

function holdsAll(subject: string, parts: readonly string[]): boolean {
  for (const part of parts) if (!subject.includes(part)) return false
  return true
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
}

// The text between a glob's wildcards and slashes, which every path it matches contains. A pattern
// with classes, braces, a negation or escapes gives none: it is always asked.
function literalParts(pattern: string): string[] {
  if (/[[\]{}!\\]/.test(pattern)) return []
  return pattern.split(/[*?/]+/).filter((part) => part !== "")
}
