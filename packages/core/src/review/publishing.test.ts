import { describe, expect, test } from "vitest"
import type { ReviewFinding } from "../judge/review-record"
import { closingReplies, continuationOf, hasPhrase, readHeadsWith, threadMatcher } from "./publishing"

const finding = (over: Partial<ReviewFinding> = {}): ReviewFinding => ({
  id: "f1",
  reviewer: "security",
  severity: "warning",
  category: "security",
  file: "a.ts",
  line: 1,
  title: "t",
  body: "b",
  status: "new",
  thread: null,
  ...over,
})

describe("threadMatcher", () => {
  test("the record's thread first, then an unclaimed thread with the fingerprint, each thread once", () => {
    const threads = new Map([
      ["T1", { fingerprint: "fp-a" }],
      ["T2", { fingerprint: "fp-a" }],
      ["T3", { fingerprint: "fp-b" }],
    ])
    const named = finding({ id: "f1", thread: "T1" })
    const findings = [named, finding({ id: "f2" }), finding({ id: "f3" }), finding({ id: "f4" })]
    const match = threadMatcher(findings, threads)
    expect(match(named, "fp-zzz")?.id).toBe("T1")
    // T1 is claimed by the record, so the fingerprint finds T2, and then nothing more.
    expect(match(findings[1]!, "fp-a")?.id).toBe("T2")
    expect(match(findings[2]!, "fp-a")).toBeUndefined()
    expect(match(findings[3]!, "fp-b")?.id).toBe("T3")
  })
})

describe("continuationOf", () => {
  test("open stays open; resolved stays resolved unless the finding got worse", () => {
    expect(continuationOf({ resolved: false, severity: "critical" }, { severity: "suggestion" })).toBe("open")
    expect(continuationOf({ resolved: true, severity: "warning" }, { severity: "warning" })).toBe("resolved")
    expect(continuationOf({ resolved: true, severity: "warning" }, { severity: "critical" })).toBe("reopen")
    expect(continuationOf({ resolved: true, severity: null }, { severity: "critical" })).toBe("resolved")
  })
})

describe("closingReplies and hasPhrase", () => {
  test("fixed names the short head, dismissed the person's reason", () => {
    const replies = closingReplies(
      {
        resolved: [{ id: "T1", title: "t", file: null, line: null }],
        dismissed: [{ id: "T2", title: "t", file: null, line: null, reason: "alice answered won't fix" }],
      },
      "0123456789abcdef",
    )
    expect(replies).toEqual([
      { id: "T1", kind: "fixed", text: expect.stringContaining("Fixed in 01234567:") },
      { id: "T2", kind: "dismissed", text: "Dismissed, not fixed: alice answered won't fix.\n" },
    ])
  })

  test("a phrase matches case- and spacing-insensitively; an empty one never", () => {
    const notes = ["nothing here", "Please   BREAK\nglass now"]
    expect(notes.filter((note) => hasPhrase(note, "break glass"))).toEqual([notes[1]])
    expect(notes.some((note) => hasPhrase(note, "  "))).toBe(false)
  })
})

describe("readHeadsWith", () => {
  test("reads at most `limit` files, cuts each to `bytes`, and leaves out what cannot be read", async () => {
    const read = async (path: string) => {
      if (path === "gone") return null
      if (path === "broken") throw new Error("boom")
      return `${path}:${"x".repeat(50)}`
    }
    const heads = await readHeadsWith(read, ["a", "gone", "broken", "b", "c"], { limit: 4, bytes: 5 })
    expect([...heads]).toEqual([
      ["a", "a:xxx"],
      ["b", "b:xxx"],
    ])
  })
})
