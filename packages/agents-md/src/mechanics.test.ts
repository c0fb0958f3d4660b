import { type DiffFile, parseDiff } from "@opencode-reviewer/core"
import { describe, expect, test } from "vitest"
import { projectMechanics, restructureRenames } from "./mechanics"

// projectMechanics: which project mechanics a change touches, at the significance levels of
// docs/design-numbers.md#agentsmd-reviewer.

function added(path: string, lines: string[]): DiffFile {
  const text = `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`
  return parseDiff(text).files[0]!
}
function deleted(path: string): DiffFile {
  return parseDiff(
    `diff --git a/${path} b/${path}\ndeleted file mode 100644\nindex 1111111..0000000\n--- a/${path}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n`,
  ).files[0]!
}
function edited(path: string, removed: string[], addedLines: string[]): DiffFile {
  const body = [...removed.map((line) => `-${line}`), ...addedLines.map((line) => `+${line}`)].join("\n")
  return parseDiff(
    `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -1,${removed.length} +1,${addedLines.length} @@\n${body}\n`,
  ).files[0]!
}
function renamed(from: string, to: string): DiffFile {
  return parseDiff(`diff --git a/${from} b/${to}\nsimilarity index 100%\nrename from ${from}\nrename to ${to}\n`)
    .files[0]!
}
const mechanics = (...files: DiffFile[]) => projectMechanics(files.map((file) => ({ file })))
const brief = (...files: DiffFile[]) =>
  mechanics(...files).map(({ kind, level, detail }) => `${level} ${kind}: ${detail}`)

describe("projectMechanics", () => {
  test("a lockfile swap is a high package-manager switch; a refreshed lockfile is low", () => {
    expect(brief(deleted("package-lock.json"), added("bun.lock", ["{}"]))).toEqual([
      "high package-manager: lockfile switch (package manager changed): package-lock.json deleted, bun.lock added",
    ])
    expect(brief(added("pnpm-lock.yaml", ["x"]))).toEqual([
      "high package-manager: lockfile added: pnpm-lock.yaml added",
    ])
    expect(brief(edited("yarn.lock", ["a"], ["b"]))).toEqual(["low package-manager: lockfile updated: yarn.lock"])
  })

  test("package.json: packageManager is high, scripts and new dependencies medium, bumps low", () => {
    const file = edited(
      "package.json",
      ['  "packageManager": "npm@10.8.0",', '    "test": "jest",', '    "zod": "^3.23.0",'],
      [
        '  "packageManager": "bun@1.3.14",',
        '    "test": "vitest run",',
        '    "zod": "^4.0.0",',
        '    "drizzle-orm": "0.44.0",',
        '    "lint": "biome check ."',
      ],
    )
    expect(brief(file)).toEqual([
      "high package-manager: packageManager in package.json set to bun@1.3.14",
      "medium scripts: scripts changed in package.json: test, lint",
      "medium dependencies: new dependencies in package.json: drizzle-orm",
      "low dependencies: dependency versions changed in package.json: zod",
    ])
  })

  test("a version-only package.json edit is low; a new package.json is a medium new package", () => {
    expect(brief(edited("package.json", ['  "version": "1.0.0",'], ['  "version": "1.1.0",']))).toEqual([
      "low manifest: manifest edited: package.json",
    ])
    expect(brief(added("packages/web/package.json", ["{}"]))).toEqual([
      "medium manifest: manifest added: packages/web/package.json (a package or workspace appears)",
    ])
    expect(brief(edited("package.json", ['    "node": ">=20"'], ['    "node": ">=22"']))).toEqual([
      "medium toolchain: engine versions changed in package.json: node",
    ])
  })

  test("new variables in an environment template are high; other edits to it medium", () => {
    expect(
      brief(edited(".env.example", ["PORT=3000"], ["PORT=3000", "STRIPE_KEY=", "export REDIS_URL=redis://localhost"])),
    ).toEqual(["high environment: new environment variables in .env.example: STRIPE_KEY, REDIS_URL"])
    expect(brief(edited(".env.example", ["PORT=3000"], ["PORT=8080"]))).toEqual([
      "medium environment: environment template modified: .env.example",
    ])
  })

  test("CI is always high; test and build configs are high when added or deleted, low when edited", () => {
    expect(brief(edited(".gitlab-ci.yml", ["a"], ["b"]))).toEqual([
      "high ci: CI configuration modified: .gitlab-ci.yml",
    ])
    expect(brief(edited(".github/workflows/test.yml", ["a"], ["b"]))[0]).toMatch(/^high ci:/)
    expect(brief(added("vitest.config.ts", ["x"]), deleted("jest.config.js"))).toEqual([
      "high test-framework: test framework configuration added: vitest.config.ts",
      "high test-framework: test framework configuration deleted: jest.config.js",
    ])
    expect(brief(edited("vite.config.ts", ["a"], ["b"]))).toEqual([
      "low build-tool: build tool configuration modified: vite.config.ts",
    ])
    expect(brief(added("turbo.json", ["{}"]))).toEqual(["high build-tool: build tool configuration added: turbo.json"])
  })

  test("lint rules, toolchain versions, API specs and a changed Makefile are medium", () => {
    expect(
      brief(
        edited("eslint.config.js", ["a"], ["b"]),
        edited(".nvmrc", ["20"], ["22"]),
        edited("api/openapi.yaml", ["a"], ["b"]),
        edited("Makefile", ["a"], ["b"]),
      ).map((line) => line.split(":")[0]),
    ).toEqual(["medium lint", "medium toolchain", "medium api-client", "medium task-runner"])
  })

  test("requirements files: new packages are medium, pins are not", () => {
    expect(brief(edited("requirements.txt", ["django==4.2"], ["django==5.0", "celery>=5"]))).toEqual([
      "medium dependencies: new dependencies in requirements.txt: celery",
    ])
    expect(brief(edited("requirements-dev.txt", ["pytest==7"], ["pytest==8"]))).toEqual([
      "low manifest: manifest edited: requirements-dev.txt",
    ])
  })

  test(`${restructureRenames} renamed files are a high restructure; fewer are nothing`, () => {
    const moves = Array.from({ length: restructureRenames }, (_, index) =>
      renamed(`lib/m${index}.ts`, `src/core/m${index}.ts`),
    )
    expect(brief(...moves)).toEqual([`high restructure: ${restructureRenames} files moved (lib → src/core)`])
    expect(brief(...moves.slice(1))).toEqual([])
  })

  test("levels come high first, keeping the diff's order within a level", () => {
    const levels = mechanics(
      edited("tsconfig.json", ["a"], ["b"]),
      edited("biome.json", ["a"], ["b"]),
      edited(".gitlab-ci.yml", ["a"], ["b"]),
    ).map((change) => change.level)
    expect(levels).toEqual(["high", "medium", "low"])
  })
})
