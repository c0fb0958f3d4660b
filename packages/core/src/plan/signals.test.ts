import { describe, expect, test } from "vitest"
import { type DiffFile, parseDiff } from "./diff"
import { isAgentsFile, mechanicsKindOf, readSignals } from "./signals"

// Which files make the agents-md reviewer run (readSignals): AGENTS.md files and project mechanics.

function added(path: string, lines: string[]): DiffFile {
  const text = `diff --git a/${path} b/${path}\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}\n`
  return parseDiff(text).files[0]!
}
function edited(path: string, removed: string[], addedLines: string[]): DiffFile {
  const body = [...removed.map((line) => `-${line}`), ...addedLines.map((line) => `+${line}`)].join("\n")
  return parseDiff(
    `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -1,${removed.length} +1,${addedLines.length} @@\n${body}\n`,
  ).files[0]!
}

describe("path classification", () => {
  test("ordinary code and docs are not mechanics; AGENTS.md files are recognised at any depth", () => {
    expect([mechanicsKindOf("src/app.ts"), mechanicsKindOf("README.md")]).toEqual([null, null])
    expect(mechanicsKindOf("src/package.json.ts")).toBeNull()
    expect(["AGENTS.md", "web/agents.md", "CLAUDE.md", "a/b/Claude.md"].every(isAgentsFile)).toBe(true)
    expect(isAgentsFile("docs/AGENTS.md.template")).toBe(false)
  })
})

describe("mechanicsKindOf", () => {
  test("names the kind of every mechanics file, by name or folder, in any case, the first kind winning", () => {
    // Each kind's rules once, folder rules, case, and files two kinds list (pom.xml, build.gradle*).
    const table: [string, string | null][] = [
      ["src/app.ts", null],
      [".gitlab-ci.yml", "ci"],
      ["ci/.gitlab/ci/build.yml", "ci"],
      [".github/workflows/test.yml", "ci"],
      ["x/.GITHUB/Workflows/a.yml", "ci"],
      [".circleci/config.yml", "ci"],
      ["Jenkinsfile", "ci"],
      ["bun.lock", "package-manager"],
      ["web/package-lock.json", "package-manager"],
      ["pnpm-workspace.yaml", "package-manager"],
      [".npmrc", "package-manager"],
      ["bunfig.toml", "package-manager"],
      [".env.example", "environment"],
      ["app/.env.sample", "environment"],
      ["prod.env.example", "environment"],
      ["vitest.config.ts", "test-framework"],
      ["jest.config.js", "test-framework"],
      ["pytest.ini", "test-framework"],
      [".mocharc.json", "test-framework"],
      ["phpunit.xml.dist", "test-framework"],
      ["vite.config.mts", "build-tool"],
      ["webpack.config.js", "build-tool"],
      [".babelrc", "build-tool"],
      ["turbo.json", "build-tool"],
      ["build.gradle.kts", "build-tool"],
      ["settings.gradle", "build-tool"],
      ["pom.xml", "build-tool"],
      ["CMakeLists.txt", "build-tool"],
      ["meson.build", "build-tool"],
      ["Makefile", "task-runner"],
      ["justfile", "task-runner"],
      ["Taskfile.yml", "task-runner"],
      [".eslintrc.cjs", "lint"],
      ["eslint.config.mjs", "lint"],
      ["biome.jsonc", "lint"],
      [".prettierrc", "lint"],
      ["ruff.toml", "lint"],
      [".golangci.yaml", "lint"],
      [".pre-commit-config.yaml", "lint"],
      ["lefthook.yml", "lint"],
      [".nvmrc", "toolchain"],
      [".tool-versions", "toolchain"],
      ["rust-toolchain.toml", "toolchain"],
      ["package.json", "manifest"],
      ["go.mod", "manifest"],
      ["Cargo.toml", "manifest"],
      ["requirements-dev.txt", "manifest"],
      ["Pipfile", "manifest"],
      ["Gemfile", "manifest"],
      ["composer.json", "manifest"],
      ["setup.py", "manifest"],
      ["setup.cfg", "manifest"],
      ["tsconfig.json", "typescript"],
      ["packages/a/tsconfig.build.json", "typescript"],
      ["Dockerfile", "container"],
      ["docker/Containerfile", "container"],
      ["docker-compose.override.yml", "container"],
      ["compose.yaml", "container"],
      ["openapi.yaml", "api-client"],
      ["api/swagger-v2.json", "api-client"],
      ["codegen.yml", "api-client"],
      ["orval.config.ts", "api-client"],
      ["README.md", null],
      ["src/package.json.ts", null],
      ["docs/Makefile.md", null],
      ["Gemfile.lock", "package-manager"],
      ["poetry.lock", "package-manager"],
      ["yarn.lock", "package-manager"],
      ["uv.lock", "package-manager"],
      [".yarnrc.yml", "package-manager"],
      ["a/b/.Prettierrc.json", "lint"],
      ["DOCKERFILE", "container"],
      ["x/", null],
      ["", null],
    ]
    expect(table.map(([path]) => [path, mechanicsKindOf(path)])).toEqual(table)
  })
})

describe("readSignals.agentsMd", () => {
  test("still names every AGENTS.md and mechanics file, noise included, and nothing else", () => {
    const files = [
      added("bun.lock", ["{}"]),
      edited("AGENTS.md", ["a"], ["b"]),
      edited("Dockerfile", ["a"], ["b"]),
      edited("src/app.ts", ["a"], ["b"]),
    ]
    const signals = readSignals(files.map((file) => ({ file, noise: file.path === "bun.lock" ? "lockfile" : null })))
    expect(signals.agentsMd).toEqual(["bun.lock", "AGENTS.md", "Dockerfile"])
  })
})
