import { describe, expect, test } from "vitest"
import type { Finding } from "../model/finding"
import { splitAlreadyRaised } from "./already-raised"

const finding = (over: Partial<Finding> = {}): Finding => ({
  severity: "critical",
  file: "src/db.ts",
  line: 12,
  category: "security",
  title: "SQL built from input",
  body: "b",
  ...over,
})
const comments = [
  { author: "alice", createdAt: null, body: "This concatenates the name into SQL.", file: "src/db.ts", line: 13 },
  { author: "bob", createdAt: null, body: "Looks risky overall." },
]

describe("splitAlreadyRaised", () => {
  test("a finding a person raised on the same lines is marked with who raised it, kept for the decision, and noted", () => {
    const split = splitAlreadyRaised([finding({ raisedBy: "c1" }), finding({ title: "other" })], comments)
    // Both stay (the problem is there either way); the raised one is marked with who and where.
    expect(split.kept.map((entry) => entry.title)).toEqual(["SQL built from input", "other"])
    expect([...split.raised]).toEqual([[0, { author: "alice", file: "src/db.ts", line: 13 }]])
    expect(split.notes).toEqual([
      'already raised by alice at src/db.ts:13: "SQL built from input" (critical); not posted again, still counted',
    ])
  })

  test("a claim the place does not bear out is ignored: elsewhere, a conversation comment, or no such comment", () => {
    const far = splitAlreadyRaised([finding({ raisedBy: "c1", line: 40 })], comments)
    const conversation = splitAlreadyRaised([finding({ raisedBy: "c2" })], comments)
    const missing = splitAlreadyRaised([finding({ raisedBy: "c9" })], comments)
    for (const split of [far, conversation, missing]) {
      expect(split.kept).toHaveLength(1)
      expect(split.kept[0]!.raisedBy).toBeUndefined()
      expect(split.notes[0]).toContain("posted anyway")
    }
    expect(missing.notes[0]).toContain("no such comment exists")
  })
})
