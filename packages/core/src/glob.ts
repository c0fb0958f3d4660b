/** A compiled set of globs; `match` returns the first glob that matches, or null. */
export interface GlobSet {
  match(path: string): string | null
}

/** Compiles globs once (Bun.Glob) so matching thousands of paths stays cheap. */
export function compileGlobs(patterns: readonly string[], options: { caseInsensitive?: boolean } = {}): GlobSet {
  const fold = options.caseInsensitive === true
  const compiled = patterns.map((pattern) => ({ pattern, glob: new Bun.Glob(fold ? pattern.toLowerCase() : pattern) }))
  return {
    match(path) {
      const subject = fold ? path.toLowerCase() : path
      return compiled.find(({ glob }) => glob.match(subject))?.pattern ?? null
    },
  }
}
