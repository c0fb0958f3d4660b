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

  it("answers as Bun.Glob does for patterns with literal parts of every kind", () => {
    // Literal parts that are regex syntax too, wildcards around them, and paths that hold them or not.
    const parts = ["a.b", "c+d", "$x", "(y)", "e^f", "g|h", "auth", "Auth", "lib", "min.js", "x"]
    const shapes = ["**/P/**", "**/*P*", "P/*.ts", "**/P", "src/**/P.*", "**/?P", "*P*/**", "**/{P,lib}/**", "[P]/x"]
    let state = 3
    const random = (below: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
      return Math.floor((state / 2_147_483_648) * below)
    }
    const pick = <T>(list: readonly T[]) => list[random(list.length)]!
    for (let round = 0; round < 60; round += 1) {
      const set = Array.from({ length: 1 + random(6) }, () => pick(shapes).replace("P", pick(parts)))
      const candidates = Array.from({ length: 30 }, () =>
        Array.from(
          { length: 1 + random(3) },
          () => `${pick(["", "s", "src", "lib"])}${pick(parts)}${pick(["", ".ts", "z"])}`,
        ).join("/"),
      )
      for (const fold of [false, true]) {
        const compiled = compileGlobs(set, { caseInsensitive: fold })
        for (const path of candidates)
          expect(compiled.match(path), `${path} in ${set.join(" ")} (fold ${fold})`).toBe(reference(set, path, fold))
      }
    }
  })
})
