import { describe, expect, test } from "vitest"
import { opencodeQuietEnv } from "./binary"
import type { OpencodeConfig } from "./config"
import { runArgs, runEnv } from "./run"

const config = { default_agent: "review_coordinator", agent: {} } as unknown as OpencodeConfig

describe("opencode run", () => {
  test("asks for JSONL, names the agent and gives a title", () => {
    expect(runArgs("review_coordinator", "review !7")).toEqual([
      "run",
      "--format",
      "json",
      "--agent",
      "review_coordinator",
      "--title",
      "review !7",
    ])
  })

  test("sets PWD to the directory, passes the config and keeps OpenCode quiet over the caller's env", () => {
    const env = runEnv({
      directory: "/repo",
      config,
      env: { PATH: "/bin", PWD: "/elsewhere", OPENCODE_DISABLE_PROJECT_CONFIG: "0" },
    })
    expect(env).toMatchObject({ PATH: "/bin", PWD: "/repo", ...opencodeQuietEnv })
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT!)).toEqual(config)
    expect(env.BUN_JSC_forceRAMSize).toBe(String(2 * 1024 ** 3))
    expect(runEnv({ directory: "/repo", config, env: { BUN_JSC_forceRAMSize: "1024" } }).BUN_JSC_forceRAMSize).toBe(
      "1024",
    )
  })
})
