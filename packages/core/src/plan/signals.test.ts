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

// One hunk of a modified file from its lines as git prints them: " context", "-removed", "+added".
function changed(path: string, lines: string[]): DiffFile {
  const before = lines.filter((line) => !line.startsWith("+")).length
  const after = lines.filter((line) => !line.startsWith("-")).length
  return parseDiff(
    `diff --git a/${path} b/${path}\nindex 1111111..2222222 100644\n--- a/${path}\n+++ b/${path}\n@@ -1,${before} +1,${after} @@\n${lines.join("\n")}\n`,
  ).files[0]!
}
const security = (...files: DiffFile[]) => readSignals(files.map((file) => ({ file, noise: null }))).security

describe("readSignals.security", () => {
  const concatenation = "SQL built by concatenation"
  const interpolation = "SQL built by interpolation"
  const shell = "shell command built from input"
  const dynamic = "eval / new Function"
  const deserialisation = "deserialisation of untrusted data"
  const tls = "TLS certificate checks disabled"

  test.each<[string, string[], string]>([
    ["src/db.ts", [`db.query("SELECT * FROM users WHERE name = '" + name + "'")`], concatenation],
    ["src/db.ts", [`const sql = "SELECT * FROM users WHERE name = '" +`, `  name + "'"`], concatenation],
    ["src/db.ts", [`knex.raw("ORDER BY " + column)`], concatenation],
    ["app/db.py", [`cur.execute("SELECT * FROM users WHERE name = '" + name + "'")`], concatenation],
    ["db/users.go", [`rows, err := db.Query("SELECT * FROM users WHERE id = " + id)`], concatenation],
    [
      "src/Users.java",
      [`ResultSet rs = st.executeQuery("SELECT * FROM users WHERE name = '" + name + "'");`],
      concatenation,
    ],
    ["web/users.php", [`$r = mysqli_query($db, "SELECT * FROM users WHERE name = '" . $name . "'");`], concatenation],
    ["src/db.ts", ["db.query(`SELECT * FROM users WHERE name = '${name}'`)"], interpolation],
    ["src/db.ts", ["const query = `", "  SELECT * FROM users", "  WHERE name = '${name}'", "`"], interpolation],
    ["app/db.py", [`cur.execute(f"SELECT * FROM users WHERE name = '{name}'")`], interpolation],
    ["app/db.py", [`cur.execute("SELECT * FROM users WHERE name = '%s'" % name)`], interpolation],
    [
      "app/db.py",
      [`cur.execute(`, `    "SELECT * FROM users WHERE name = '{}'"`, `    .format(name)`, `)`],
      interpolation,
    ],
    ["db/users.go", [`q := fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", name)`], interpolation],
    ["src/Users.kt", [`val rs = st.executeQuery("SELECT * FROM users WHERE name = '$name'")`], interpolation],
    ["src/Users.cs", [`var cmd = new SqlCommand($"SELECT * FROM users WHERE name = '{name}'", conn);`], interpolation],
    ["app/models/user.rb", [`User.where("name = '#{params[:name]}'")`], interpolation],
    ["web/users.php", [`$r = mysqli_query($db, "SELECT * FROM users WHERE name = '$name'");`], interpolation],
    ["src/users.rs", [`let q = format!("SELECT * FROM users WHERE name = '{}'", name);`], interpolation],
    ["src/run.ts", ["await run(`git log ${ref}`)", "exec(`git log ${ref}`)"], shell],
    ["src/run.ts", [`childProcess.execSync("tar -xf " + archive)`], shell],
    ["src/run.ts", [`execFile(command, args, { shell: true })`], shell],
    ["app/run.py", [`os.system("convert " + path)`], shell],
    ["app/run.py", [`subprocess.run(command, shell=True)`], shell],
    ["run/run.go", [`out, err := exec.Command("sh", "-c", command).Output()`], shell],
    ["src/Run.java", [`Process p = Runtime.getRuntime().exec("ping " + host);`], shell],
    ["app/run.rb", ["output = `ls #{dir}`"], shell],
    ["web/run.php", [`$out = shell_exec("ls " . $dir);`], shell],
    ["src/run.ts", [`const value = eval(expression)`], dynamic],
    ["src/run.ts", [`const compiled = new Function("row", body)`], dynamic],
    ["src/run.ts", [`vm.runInNewContext(code, sandbox)`], dynamic],
    ["app/run.py", [`result = eval(expression)`], dynamic],
    ["app/run.rb", [`eval(params[:code])`], dynamic],
    ["web/run.php", [`eval($code);`], dynamic],
    ["scripts/run.sh", [`eval "$COMMAND"`], dynamic],
    ["app/load.py", [`data = pickle.loads(body)`], deserialisation],
    ["app/load.py", [`config = yaml.load(stream)`], deserialisation],
    ["app/load.py", [`code = marshal.loads(blob)`], deserialisation],
    ["app/load.py", [`state = torch.load(path)`], deserialisation],
    ["src/load.ts", [`const value = serialize.unserialize(request.body)`], deserialisation],
    ["src/Load.java", [`ObjectInputStream in = new ObjectInputStream(socket.getInputStream());`], deserialisation],
    ["src/Load.cs", [`var formatter = new BinaryFormatter();`], deserialisation],
    ["app/load.rb", [`object = Marshal.load(data)`], deserialisation],
    ["web/load.php", [`$object = unserialize($_COOKIE['data']);`], deserialisation],
    ["src/net.ts", [`const agent = new https.Agent({ rejectUnauthorized: false })`], tls],
    ["src/net.ts", [`process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0"`], tls],
    ["src/net.ts", [`request({ url, strictSSL: false })`], tls],
    ["app/net.py", [`requests.get(url, verify=False)`], tls],
    ["app/net.py", [`context.verify_mode = ssl.CERT_NONE`], tls],
    ["app/net.py", [`context.check_hostname = False`], tls],
    ["net/client.go", [`config := &tls.Config{InsecureSkipVerify: true}`], tls],
    ["src/Tls.java", [`public void checkServerTrusted(X509Certificate[] chain, String authType) {}`], tls],
    ["src/Tls.kt", [`builder.hostnameVerifier { _, _ -> true }`], tls],
    ["app/net.rb", [`http.verify_mode = OpenSSL::SSL::VERIFY_NONE`], tls],
    ["web/net.php", [`curl_setopt($ch, CURLOPT_SSL_VERIFYPEER, false);`], tls],
    ["scripts/get.sh", [`curl -sSk https://example.test/install.sh | sh`], tls],
    ["scripts/get.sh", [`curl -fsSL \\`, `  --insecure https://example.test/install.sh | sh`], tls],
    ["Dockerfile", [`RUN wget --no-check-certificate https://example.test/tool.tgz`], tls],
    ["config/app.yml", [`  insecure_skip_verify: true`], tls],
    [".npmrc", [`strict-ssl=false`], tls],
  ])("%s %j signals: %s", (path, lines, reason) => {
    expect(security(added(path, lines))).toEqual([`${path} (${reason})`])
  })

  test.each<[string, string[]]>([
    ["src/db.ts", [`db.query("SELECT * FROM users WHERE name = $1", [name])`]],
    ["src/db.ts", [`db.query("SELECT * FROM users WHERE name = ?", [name])`]],
    ["src/db.ts", ["const rows = await sql`SELECT * FROM users WHERE name = ${name}`"]],
    ["src/db.ts", ["const rows = await sql<User[]>`", "  SELECT * FROM users", "  WHERE name = ${name}", "`"]],
    ["src/db.ts", [`const query = "SELECT id, name FROM users ORDER BY name"`]],
    ["src/db.ts", [`const query = "SELECT * FROM users " +`, `  "WHERE name = $1"`]],
    ["src/db.ts", [`// db.query("SELECT * FROM users WHERE name = '" + name + "'")`]],
    ["src/db.ts", ["/**", " * Run with `db.query`, never with `", " */", `db.query("SELECT 1 WHERE $1", [a])`]],
    ["src/message.ts", [`throw new Error("Please select a file from " + folder)`, "const hello = `Where is ${name}?`"]],
    ["app/db.py", [`cur.execute("SELECT * FROM users WHERE name = %s", (name,))`]],
    ["app/db.py", [`cur.execute(text("SELECT * FROM users WHERE name = :name"), {"name": name})`]],
    ["app/db.py", [`# cur.execute(f"SELECT * FROM users WHERE name = '{name}'")`]],
    ["app/db.py", [`greeting = f"Hello {name}, where is {thing}"`]],
    ["db/users.go", [`rows, err := db.Query("SELECT * FROM users WHERE id = $1", id)`]],
    ["db/users.go", [`q := fmt.Sprintf("SELECT * FROM users LIMIT %d", limit)`]],
    ["src/Users.java", [`PreparedStatement ps = conn.prepareStatement("SELECT * FROM users WHERE name = ?");`]],
    ["app/models/user.rb", [`User.where("name = ?", params[:name])`, `User.where(name: params[:name])`]],
    ["web/users.php", [`$st = $pdo->prepare("SELECT * FROM users WHERE name = :name"); $st->execute([$name]);`]],
    ["db/migrations/001_prices.sql", [`SELECT price + 'EUR' FROM items WHERE id = 1;`]],
    ["src/run.ts", [`execSync("git status")`]],
    ["app/run.py", [`os.system("clear")`, `subprocess.run(["ls", path])`]],
    ["app/load.py", [`config = yaml.safe_load(stream)`, `state = torch.load(path, weights_only=True)`]],
    ["web/load.php", [`$object = unserialize($data, ['allowed_classes' => false]);`]],
    ["src/net.ts", [`const agent = new https.Agent({ rejectUnauthorized: true })`]],
    ["scripts/get.sh", [`curl -fsSL https://example.test/install.sh -o install.sh`, `# curl -k https://example.test`]],
    ["docs/guide.md", [`Run curl -k https://example.test to fetch it, or set verify=False.`]],
  ])("%s %j does not signal", (path, lines) => {
    expect(security(added(path, lines))).toEqual([])
  })

  test("reads only added lines: a removed injection or one in the context does not count", () => {
    const file = changed("src/db.ts", [
      ` const old = "SELECT * FROM users WHERE name = '" + name + "'"`,
      `-db.query("SELECT * FROM users WHERE name = '" + name + "'")`,
      `+db.query("SELECT * FROM users WHERE name = $1", [name])`,
    ])
    expect(security(file)).toEqual([])
  })

  test("follows a template literal through context lines: an added value in untagged SQL counts, in sql`…` not", () => {
    const body = ["   SELECT * FROM users", "-  WHERE id = 1", "+  WHERE name = '${name}'", " `"]
    expect(security(changed("src/db.ts", [" const query = `", ...body]))).toEqual([`src/db.ts (${interpolation})`])
    expect(security(changed("src/db.ts", [" const rows = await sql`", ...body]))).toEqual([])
  })

  test("skips noise files, and names each kind once, in order, before any word", () => {
    const injection = `db.query("SELECT * FROM users WHERE name = '" + name + "'")`
    const signals = readSignals([
      { file: added("dist/db.min.js", [injection]), noise: "minified" },
      {
        file: added("src/a.ts", [
          `const password = input.value`,
          injection,
          `eval(code)`,
          injection.replace("name", "id"),
        ]),
        noise: null,
      },
    ])
    expect(signals.security).toEqual([`src/a.ts (${concatenation}, ${dynamic})`])
  })

  test("matches the words that never matched between two \\b: $queryRaw and the authoris…/authenticat… stems", () => {
    expect(
      security(
        added("src/a.ts", ["const rows = await prisma.$queryRaw`SELECT 1`"]),
        added("src/b.ts", ["const header = request.headers.authorization"]),
        added("src/c.ts", ["await authenticateUser(request)"]),
      ),
    ).toEqual(["src/a.ts ($queryRaw)", "src/b.ts (authorization)", "src/c.ts (authenticateUser)"])
  })
})
