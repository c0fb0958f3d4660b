import { describe, expect, test } from "vitest"
import type { AccessLevel } from "../model/access"
import { hasAccess } from "../model/access"
import { type AccessOf, decideBreakGlass, githubAccess, gitlabAccess } from "./access"
import { type BotThread, tracePreviousFindings } from "./previous-threads"

describe("the access ladder", () => {
  test("GitLab's access levels and GitHub's roles land on the same rungs", () => {
    expect([null, 0, 5, 10, 15, 20, 30, 40, 50].map(gitlabAccess)).toEqual([
      "none",
      "none",
      "read",
      "read",
      "read",
      "read",
      "write",
      "maintain",
      "admin",
    ])
    expect(githubAccess({ roleName: "maintain", permission: "write" })).toBe("maintain")
    expect(githubAccess({ roleName: "triage", permission: "read" })).toBe("read")
    // A custom role reads as its legacy permission.
    expect(githubAccess({ roleName: "security-lead", permission: "write" })).toBe("write")
    expect(githubAccess({ permission: "none" })).toBe("none")
    expect(hasAccess("write", "write")).toBe(true)
    expect(hasAccess("read", "write")).toBe(false)
    expect(hasAccess("none", "anyone")).toBe(true)
  })
})

const levels: Record<string, AccessLevel> = { rita: "read", dev: "write", mona: "maintain" }
const asked: string[] = []
const accessOf: AccessOf = async (person) => {
  asked.push(person.name)
  if (person.name === "broken") throw new Error("HTTP 500")
  return levels[person.name] ?? "none"
}

describe("decideBreakGlass", () => {
  test("the first request from someone with the access breaks the glass; those before it are ignored with why", async () => {
    asked.length = 0
    const requests = ["stranger", "rita", "broken", "dev", "mona"].map((name) => ({ by: { name }, at: `t-${name}` }))
    expect(await decideBreakGlass(requests, "write", accessOf)).toEqual({
      honoured: { by: "dev", at: "t-dev" },
      ignored: [
        { by: "stranger", at: "t-stranger", reason: "no access; breaking the glass needs write access or above" },
        { by: "rita", at: "t-rita", reason: "read access; breaking the glass needs write access or above" },
        { by: "broken", at: "t-broken", reason: "their access to the repository could not be read" },
      ],
    })
    // Nobody after the one who broke it is asked about.
    expect(asked).toEqual(["stranger", "rita", "broken", "dev"])
    expect((await decideBreakGlass(requests, "maintain", accessOf)).honoured).toEqual({ by: "mona", at: "t-mona" })
    expect(await decideBreakGlass(requests, "anyone", accessOf)).toEqual({
      honoured: { by: "stranger", at: "t-stranger" },
      ignored: [],
    })
    expect(await decideBreakGlass([], "write", accessOf)).toEqual({ honoured: null, ignored: [] })
  })
})

describe("replies in the bot's threads", () => {
  const thread = (body: string, author = "dev"): BotThread => ({
    id: "T1",
    resolved: false,
    file: "src/a.ts",
    line: 3,
    title: "SQL built from input",
    category: "security",
    fingerprint: null,
    severity: "critical",
    anchor: null,
    notes: [
      { author: "bot", body: "finding", bot: true },
      { author, body, bot: false },
    ],
  })
  const replyTo = async (body: string, author = "dev") =>
    (
      await tracePreviousFindings([thread(body, author)], {
        headSha: "h",
        files: [],
        readFileAt: async () => null,
        accessOf,
      })
    )[0]!.reply

  test("accepting words count as acknowledged, with the words, and trusted only from write access or above", async () => {
    expect(await replyTo("Won't fix: internal table.")).toEqual({
      by: "dev",
      kind: "acknowledged",
      trusted: true,
      words: "won't fix",
    })
    expect(await replyTo("This is by design", "rita")).toEqual({
      by: "rita",
      kind: "acknowledged",
      trusted: false,
      words: "by design",
    })
    expect(await replyTo("accepted risk", "broken")).toMatchObject({ trusted: false })
  })

  test("a question or a negation accepts nothing", async () => {
    expect(await replyTo("Is this intended?")).toEqual({ by: "dev", kind: "argued", trusted: true })
    expect(await replyTo("This is not intended, I will fix it.")).toMatchObject({ kind: "argued" })
    expect(await replyTo("That isn't by design. Fixing.")).toMatchObject({ kind: "argued" })
    expect(await replyTo("Why won't fix this now? Fine, won't fix.")).toMatchObject({
      kind: "acknowledged",
      words: "won't fix",
    })
  })

  test("without a way to ask the platform, no reply is trusted", async () => {
    const [traced] = await tracePreviousFindings([thread("won't fix")], {
      headSha: "h",
      files: [],
      readFileAt: async () => null,
    })
    expect(traced!.reply).toMatchObject({ kind: "acknowledged", trusted: false })
  })
})
