import { describe, expect, it } from "vitest"
import { defaults } from "../config/config"
import { compileGlobs } from "./glob"

// Bun.Glob asked about every pattern in declared order: what compileGlobs must answer, only faster.
function reference(patterns: readonly string[], path: string, fold: boolean): string | null {
  const subject = fold ? path.toLowerCase() : path
  return patterns.find((pattern) => new Bun.Glob(fold ? pattern.toLowerCase() : pattern).match(subject)) ?? null
}

const patterns = [
  ...defaults.securityPaths,
  "src/*.ts",
  "lib/**/*.min.js",
  "**/?.txt",
  "**/{vendor,third_party}/**",
  "**/[Tt]ests/**",
  "!**/keep/**",
  "docs/\\*literal*",
  "**/a.b",
]

const paths = [
  "src/auth/session.ts",
  "src/Auth/Session.ts",
  "auth",
  "lib/authz.ts",
  "src/app.ts",
  "src/deep/app.ts",
  "lib/x/y/app.min.js",
  "lib/app.min.js",
  "x/a.txt",
  "x/ab.txt",
  "vendor/lib.js",
  "a/third_party/b/c.go",
  "Tests/unit.py",
  "pkg/tests/x",
  "keep/me.ts",
  "docs/*literal-name.md",
  "docs/literal.md",
  "deep/a.b",
  "deep/axb",
  ".env",
  "config/.env.production",
  "certs/server.pem",
  "src/middleware.ts",
  ".github/workflows/ci.yml",
  "db/migrations/001.sql",
  "README.md",
]

describe("compileGlobs", () => {
  it("answers as Bun.Glob does, the first declared pattern winning", () => {
    for (const fold of [false, true]) {
      const set = compileGlobs(patterns, { caseInsensitive: fold })
      for (const path of paths) expect(set.match(path), `${path} (fold ${fold})`).toBe(reference(patterns, path, fold))
    }
  })
})
