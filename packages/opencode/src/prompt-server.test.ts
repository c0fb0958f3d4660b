import { readFileSync } from "node:fs"
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, test } from "vitest"
import { PromptServerStartError, promptAgentName, promptServerConfig, startPromptServer } from "./prompt-server"

// Start-up failures with tiny stand-in binaries; the real server is in test/e2e/prompt-server.test.ts.

const dirs: string[] = []
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true })
})

async function script(body: string): Promise<{ binary: string; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "ocr-prompt-unit-"))
  dirs.push(dir)
  const binary = join(dir, "opencode")
  await writeFile(binary, `#!/bin/sh\n${body}\n`)
  await chmod(binary, 0o755)
  return { binary, dir }
}

// A killed process nobody reaped yet (a zombie) counts as gone.
function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"
  } catch {
    return false
  }
}

describe("startPromptServer", () => {
  test("rejects with the exit code and the output's tail when the server exits before listening", async () => {
    const { binary, dir } = await script('echo "starting"\necho "Error: invalid config: provider.x" >&2\nexit 3')

    const failure = await startPromptServer({ binary, cwd: dir, env: { PATH: "/usr/bin:/bin" }, config: {} }).catch(
      (error) => error,
    )

    expect(failure).toBeInstanceOf(PromptServerStartError)
    expect(failure.data).toMatchObject({ reason: "exited", exitCode: 3 })
    expect(failure.message).toContain("exited with code 3 before listening")
    expect(failure.message).toContain("Error: invalid config: provider.x")
  })

  test("rejects after the start-up timeout and kills the server with what it started", async () => {
    const { binary, dir } = await script(
      `sleep 30 &\necho "$!" > "${"$"}PWD/child.pid"\necho "$$" > "${"$"}PWD/server.pid"\nwait`,
    )

    const failure = await startPromptServer({
      binary,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
      config: {},
      startupTimeoutMs: 500,
    }).catch((error) => error)

    expect(failure).toBeInstanceOf(PromptServerStartError)
    expect(failure.data.reason).toBe("timeout")
    expect(failure.message).toContain("did not start listening within 500 ms")
    const pids = await Promise.all(["server.pid", "child.pid"].map((name) => Bun.file(join(dir, name)).text()))
    for (const pid of pids) expect(processAlive(Number(pid))).toBe(false)
  })

  test("passes its arguments, PWD and the config with the prompt agent to the binary", async () => {
    const { binary, dir } = await script(
      'echo "$@" > "$PWD/args"\nprintf "%s" "$OPENCODE_CONFIG_CONTENT" > "$PWD/config.json"\nexit 1',
    )

    await startPromptServer({
      binary,
      cwd: dir,
      env: { PATH: "/usr/bin:/bin" },
      config: { model: "fake/judge" },
    }).catch(() => {})

    const args = (await Bun.file(join(dir, "args")).text()).trim().split(" ")
    expect(args.slice(0, 4)).toEqual(["serve", "--hostname", "127.0.0.1", "--port"])
    // A port of our own: `--port 0` would take 4096 whenever it is free.
    expect(Number(args[4])).toBeGreaterThan(0)
    expect(args[4]).not.toBe("4096")
    const config = JSON.parse(await Bun.file(join(dir, "config.json")).text())
    expect(config.model).toBe("fake/judge")
    expect(config.agent[promptAgentName].permission).toEqual({ "*": "deny" })
  })
})

describe("promptServerConfig", () => {
  test("adds the prompt agent beside the caller's agents, with every tool denied and temperature 0", () => {
    const config = promptServerConfig({ model: "a/b", agent: { other: { prompt: "x" } } })

    expect(config.model).toBe("a/b")
    expect(config.snapshot).toBe(false)
    const agents = config.agent as Record<string, Record<string, unknown>>
    expect(agents.other).toEqual({ prompt: "x" })
    expect(agents[promptAgentName]).toMatchObject({ mode: "primary", temperature: 0, permission: { "*": "deny" } })
    // An empty prompt would bring back OpenCode's default system prompt.
    expect(String(agents[promptAgentName]?.prompt).trim()).not.toBe("")
  })

  test("keeps a snapshot setting the caller chose", () => {
    expect(promptServerConfig({ snapshot: true }).snapshot).toBe(true)
  })
})
