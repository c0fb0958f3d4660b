import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

/** The files a review needs besides the CLI's own code. */
export interface Assets {
  /** Where the files come from: the workspace sources, or the published package's bundle. */
  layout: "workspace" | "bundle"
  /** coordinator.md, REVIEWER_SHARED.md and the specialists' prompts. */
  promptsDir: string
  /** The OpenCode plugin giving the coordinator spawn_reviewers (loaded by path into OpenCode). */
  runtimePlugin: string
  /** The MCP comment server script (run with Bun). */
  commentServer: string
  /** The demo's sample change (base/, head/, description.md). */
  demoDir: string
}

/**
 * Finds the assets. The published package is a flat bundle (`cli.js` with `runtime-plugin.js`,
 * `comment-server.js`, `prompts/` and `demo/` beside it); in the workspace they are the sources.
 * Bundled code keeps `import.meta.url` of the bundle file, so the check is made at run time.
 */
export function findAssets(moduleUrl: string = import.meta.url): Assets {
  const beside = (name: string) => fileURLToPath(new URL(name, moduleUrl))
  if (existsSync(beside("./runtime-plugin.js"))) {
    return {
      layout: "bundle",
      promptsDir: beside("./prompts/"),
      runtimePlugin: beside("./runtime-plugin.js"),
      commentServer: beside("./comment-server.js"),
      demoDir: beside("./demo/"),
    }
  }
  return {
    layout: "workspace",
    promptsDir: beside("../../../prompts/"),
    runtimePlugin: createRequire(moduleUrl).resolve("@opencode-reviewer/runtime/plugin"),
    commentServer: beside("./comment-server.ts"),
    demoDir: beside("../demo/"),
  }
}
