import { type Hooks, type Plugin, tool } from "@opencode-reviewer/opencode/plugin"

/**
 * OpenCode plugin of opencode-reviewer: gives the coordinator the `spawn_reviewers` tool. Loaded by
 * path (`plugin: ["file:///…/packages/runtime/src/plugin.ts"]`); reads the work dir from
 * OPENCODE_REVIEWER_WORK_DIR. Every export of this file must be a function (docs/opencode.md,
 * pitfall 3), so the logic lives in runtime.ts, imported lazily: if it cannot load, the tool still
 * registers and says why instead of the plugin vanishing silently.
 */
export const ReviewRuntime: Plugin = async (input) => {
  // Spelled out, not imported: this file must load even when nothing else does. It is
  // `workDirVariable` of core's protocol/names.ts.
  const workDir = process.env.OPENCODE_REVIEWER_WORK_DIR?.trim() || null
  try {
    const { createRuntimeHooks } = await import("./runtime")
    return createRuntimeHooks(input, { workDir })
  } catch (cause) {
    const error = `the opencode-reviewer runtime failed to load: ${cause instanceof Error ? cause.message : String(cause)}`
    const hooks: Hooks = {
      tool: {
        spawn_reviewers: tool({
          description: "Runs the specialist reviewers (unavailable: the runtime failed to load).",
          args: {},
          async execute() {
            return {
              title: "spawn_reviewers could not run",
              output: `<reviewer_results status="error"><error>${escapeXmlText(error)}</error></reviewer_results>`,
              metadata: { plan: null, error, reviewers: [], cut: 0, durationMs: 0 },
            }
          },
        }),
      },
    }
    return hooks
  }
}

function escapeXmlText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
}
