import type { ChangeRequest } from "./change"

/** The name people address the bot by in a comment: `@opencode-reviewer, is this safe?`. */
export const botHandle = "opencode-reviewer"

/**
 * What a comment asks of the bot, or null when it asks nothing: `/review` or `/review full` alone on
 * the comment's first line, or a question addressed to it (`@opencode-reviewer …`, or a question
 * mark in a reply in one of the bot's own threads). Everything else, a reply like "won't fix"
 * included, waits for the next review.
 */
export function requestOf(body: string, options: { inBotThread: boolean }): ChangeRequest["kind"] | null {
  const first = body.replace(/\r\n?/g, "\n").trimStart().split("\n")[0]?.trim() ?? ""
  const command = /^\/review(?:\s+(\S+))?$/i.exec(first)
  if (command) {
    if (command[1] === undefined) return "review"
    return command[1].toLowerCase() === "full" ? "full" : null
  }
  const addressed = new RegExp(`(^|[^\\w@/.-])@${botHandle}(?![\\w-])`, "i").test(body)
  if (addressed) return "question"
  if (options.inBotThread && body.includes("?")) return "question"
  return null
}
