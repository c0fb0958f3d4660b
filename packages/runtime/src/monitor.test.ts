import type { AssistantReply, SessionSignal } from "@opencode-reviewer/opencode/session"
import { describe, expect, test } from "vitest"
import { createManualClock } from "./clock"
import { noTokens, type SessionDriver } from "./driver"
import { createSessionMonitor, type TurnEnd } from "./monitor"

// A driver whose statuses and messages the test sets by hand.
function handDriver() {
  const statuses = new Map<string, SessionSignal>()
  const replies = new Map<string, AssistantReply[]>()
  let reads = 0
  const driver: SessionDriver = {
    create: async () => "ses_1",
    prompt: async () => {},
    abort: async () => {},
    statuses: async () => new Map(statuses),
    read: async (sessionID) => {
      reads += 1
      return replies.get(sessionID) ?? []
    },
    pending: async () => false,
  }
  const answer = (sessionID: string, id: string, fields: Partial<AssistantReply> = {}) => {
    const list = replies.get(sessionID) ?? []
    list.push({
      id,
      text: "<findings/>",
      finish: "stop",
      error: null,
      completed: true,
      tokens: noTokens(),
      cost: 0,
      ...fields,
    })
    replies.set(sessionID, list)
  }
  return { driver, statuses, answer, reads: () => reads }
}

const event = (type: string, properties: Record<string, unknown>) => ({ type, properties })

function watchOne(options: { pollMs?: number; idleMs?: number; known?: string[] } = {}) {
  const clock = createManualClock(0)
  const hand = handDriver()
  const monitor = createSessionMonitor({ driver: hand.driver, clock, pollMs: options.pollMs ?? 3_000 })
  const watch = monitor.watch({
    sessionID: "ses_1",
    idleMs: options.idleMs ?? 60_000,
    deadlineAt: 300_000,
    budgetAt: 1_500_000,
    known: new Set(options.known ?? []),
  })
  let end: TurnEnd | null = null
  void watch.end.then((value) => (end = value))
  return { clock, hand, monitor, watch, ended: () => end }
}

describe("session monitor", () => {
  test("ends a turn on the idle event after busy", async () => {
    const { clock, monitor, ended } = watchOne()
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "busy" } }))
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "idle" } }))
    await clock.settle()
    expect(ended()).toEqual({ kind: "idle", error: null })
  })

  test("keeps the session.error and reports it with the idle that follows", async () => {
    const { clock, monitor, ended } = watchOne()
    const error = { name: "APIError", data: { message: "Unauthorized", statusCode: 401, isRetryable: false } }
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "busy" } }))
    monitor.handle(event("session.error", { sessionID: "ses_1", error }))
    await clock.settle()
    expect(ended()).toBeNull()
    monitor.handle(event("session.idle", { sessionID: "ses_1" }))
    monitor.handle(event("session.idle", { sessionID: "ses_1" }))
    await clock.settle()
    expect(ended()).toEqual({ kind: "idle", error })
  })

  test("does not take a session absent from the status map for idle before it was seen busy", async () => {
    const { clock, hand, ended } = watchOne({ pollMs: 1_000, idleMs: 600_000 })
    await clock.advance(5_000)
    expect(ended()).toBeNull()
    // Then it shows up busy, and its absence afterwards is completion.
    hand.statuses.set("ses_1", { type: "busy", sessionID: "ses_1" })
    await clock.advance(1_000)
    expect(ended()).toBeNull()
    hand.statuses.delete("ses_1")
    await clock.advance(1_000)
    expect(ended()).toEqual({ kind: "idle", error: null })
  })

  test("takes absence for idle when a new completed assistant message exists (a turn too short to see busy)", async () => {
    const { clock, hand, ended } = watchOne({ pollMs: 1_000, known: ["msg_old"] })
    hand.answer("ses_1", "msg_old")
    await clock.advance(1_000)
    expect(ended()).toBeNull()
    hand.answer("ses_1", "msg_new")
    await clock.advance(1_000)
    expect(ended()).toEqual({ kind: "idle", error: null })
  })

  test("ignores a stale idle event from the previous turn", async () => {
    const { clock, monitor, hand, ended } = watchOne({ known: ["msg_old"] })
    hand.answer("ses_1", "msg_old")
    monitor.handle(event("session.idle", { sessionID: "ses_1" }))
    await clock.settle()
    expect(ended()).toBeNull()
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "busy" } }))
    monitor.handle(event("session.idle", { sessionID: "ses_1" }))
    await clock.settle()
    expect(ended()).toEqual({ kind: "idle", error: null })
  })

  test("stops a turn with no output for idleMs, and output events push that back", async () => {
    const { clock, monitor, hand, ended } = watchOne({ idleMs: 10_000 })
    hand.statuses.set("ses_1", { type: "busy", sessionID: "ses_1" })
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "busy" } }))
    await clock.advance(8_000)
    monitor.handle(event("message.part.updated", { part: { sessionID: "ses_1", type: "text", text: "a" } }))
    await clock.advance(8_000)
    monitor.handle(
      event("message.part.delta", { sessionID: "ses_1", messageID: "m", partID: "p", field: "text", delta: "b" }),
    )
    await clock.advance(9_999)
    expect(ended()).toBeNull()
    await clock.advance(1)
    expect(ended()).toMatchObject({ kind: "stopped", reason: "no-output" })
  })

  test("does not count retry statuses as output, and reports the retry with the stop", async () => {
    const { clock, monitor, hand, ended } = watchOne({ idleMs: 10_000 })
    const retry = { attempt: 2, message: "Rate limit exceeded", next: 4_000 }
    hand.statuses.set("ses_1", { type: "retry", sessionID: "ses_1", retry })
    monitor.handle(event("session.status", { sessionID: "ses_1", status: { type: "retry", ...retry } }))
    await clock.advance(10_000)
    expect(ended()).toEqual({
      kind: "stopped",
      reason: "no-output",
      retry: { attempt: 2, message: "Rate limit exceeded", next: 4_000 },
      error: null,
    })
  })

  test("stops at once when the next provider retry is due after the deadline", async () => {
    const { clock, monitor, ended } = watchOne()
    monitor.handle(
      event("session.status", {
        sessionID: "ses_1",
        status: { type: "retry", attempt: 1, message: "slow down", next: 3_600_000 },
      }),
    )
    await clock.settle()
    expect(ended()).toMatchObject({ kind: "stopped", reason: "retry-late" })
  })

  test("ignores events of other sessions", async () => {
    const { clock, monitor, ended } = watchOne({ idleMs: 10_000 })
    monitor.handle(event("session.status", { sessionID: "ses_other", status: { type: "busy" } }))
    monitor.handle(event("message.part.updated", { part: { sessionID: "ses_other" } }))
    monitor.handle(event("session.idle", { sessionID: "ses_other" }))
    await clock.advance(10_000)
    expect(ended()).toMatchObject({ kind: "stopped", reason: "no-output" })
  })

  test("measures output on the messages when no event arrives at all", async () => {
    const { clock, hand, ended } = watchOne({ idleMs: 10_000, pollMs: 60_000 })
    hand.answer("ses_1", "msg_1", { text: "partial", completed: false })
    await clock.advance(10_000)
    // The first look finds new text, which counts as output.
    expect(ended()).toBeNull()
    await clock.advance(10_000)
    expect(ended()).toMatchObject({ kind: "stopped", reason: "no-output" })
  })

  test("stops a turn at its deadline and at the overall budget", async () => {
    const clock = createManualClock(0)
    const hand = handDriver()
    const monitor = createSessionMonitor({ driver: hand.driver, clock, pollMs: 3_000 })
    const chatty = (sessionID: string, deadlineAt: number, budgetAt: number) =>
      monitor.watch({ sessionID, idleMs: 1_000_000, deadlineAt, budgetAt, known: new Set() })
    const timed = chatty("ses_a", 5_000, 9_000)
    const budgeted = chatty("ses_b", 20_000, 9_000)
    await clock.advance(9_000)
    expect(await timed.end).toMatchObject({ kind: "stopped", reason: "timeout" })
    expect(await budgeted.end).toMatchObject({ kind: "stopped", reason: "budget" })
    expect(monitor.size).toBe(0)
  })
})
