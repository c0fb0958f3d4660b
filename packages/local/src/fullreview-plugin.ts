import { type Plugin, tool } from "@opencode-reviewer/opencode/plugin"

/**
 * The `/fullreview` OpenCode plugin: adds the `fullreview` command and the tool it calls. The tool
 * runs `opencode-reviewer review --working-tree` on the session's repository (the same planning,
 * reviewers, judgement and decision as CI) and returns the review, the decision and the cost.
 *
 * Setup: `"plugin": ["opencode-reviewer"]` in opencode.json. Every export of this module must be a
 * function (OpenCode rejects the whole module otherwise), so the work lives in fullreview.ts.
 */
export const FullReview: Plugin = async (input) => ({
  async config(config) {
    config.command ??= {}
    // A user's own definition of the command wins.
    config.command.fullreview ??= {
      description: "Multi-agent code review of your local changes (opencode-reviewer)",
      template: [
        "Call the fullreview tool now, once, with these arguments from the user: $ARGUMENTS",
        "When it returns, show its output to the user exactly as it is. Do not add findings of your own,",
        "do not drop or soften any, and do not call other tools unless the user asks.",
      ].join("\n"),
    }
  },
  tool: {
    fullreview: tool({
      description:
        "Runs opencode-reviewer on the uncommitted and unmerged changes of this repository: risk tier, specialist reviewers, coordinator judgement, decision and cost. Takes minutes.",
      args: {
        base: tool.schema
          .string()
          .optional()
          .describe("Branch or commit to compare against (default: merge base with the default branch)"),
        arguments: tool.schema.string().optional().describe("The text the user typed after /fullreview, verbatim"),
      },
      async execute(args, context) {
        const { runFullReview } = await import("./fullreview")
        const result = await runFullReview({
          directory: input.worktree || input.directory,
          base: args.base,
          userArguments: args.arguments,
          env: process.env,
          signal: context.abort,
          onProgress: (line) => context.metadata({ title: line }),
        })
        return { title: result.title, output: result.output, metadata: result.metadata }
      },
    }),
  },
})
