import { describe, expect, test } from "vitest"
import { requestOf } from "./request"

const outside = { inBotThread: false }

describe("requestOf", () => {
  test("`/review` and `/review full` alone on the first line", () => {
    expect(requestOf("/review", outside)).toBe("review")
    expect(requestOf("  /Review  \nplease", outside)).toBe("review")
    expect(requestOf("/review full", outside)).toBe("full")
    expect(requestOf("/review FULL\r\n", outside)).toBe("full")
  })

  test("anything else on the command line is not a command", () => {
    expect(requestOf("/review everything now", outside)).toBeNull()
    expect(requestOf("/reviewer", outside)).toBeNull()
    expect(requestOf("please /review", outside)).toBeNull()
    expect(requestOf("text\n/review", outside)).toBeNull()
  })

  test("a question is addressed by the handle, or asked in the bot's own thread", () => {
    expect(requestOf("@opencode-reviewer is this query safe?", outside)).toBe("question")
    expect(requestOf("Hey @OpenCode-Reviewer, why?", outside)).toBe("question")
    expect(requestOf("Why is this a problem?", { inBotThread: true })).toBe("question")
    expect(requestOf("Why is this a problem?", outside)).toBeNull()
    expect(requestOf("won't fix", { inBotThread: true })).toBeNull()
  })

  test("the handle inside another name, an email or a path does not address the bot", () => {
    expect(requestOf("ask @opencode-reviewer-bot", outside)).toBeNull()
    expect(requestOf("mail me at me@opencode-reviewer.dev", outside)).toBeNull()
    expect(requestOf("see npm/@opencode-reviewer", outside)).toBeNull()
  })
})
