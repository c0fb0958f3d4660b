import { describe, expect, test } from "vitest"
import { readEvent, readReply, splitModel } from "./session"

describe("readEvent", () => {
  test.each([
    [
      { type: "session.status", properties: { sessionID: "s", status: { type: "busy" } } },
      { type: "busy", sessionID: "s" },
    ],
    [
      { type: "session.status", properties: { sessionID: "s", status: { type: "idle" } } },
      { type: "idle", sessionID: "s" },
    ],
    [
      {
        type: "session.status",
        properties: { sessionID: "s", status: { type: "retry", attempt: 2, message: "Rate limited", next: 99 } },
      },
      { type: "retry", sessionID: "s", retry: { attempt: 2, message: "Rate limited", next: 99 } },
    ],
    [
      { type: "session.idle", properties: { sessionID: "s" } },
      { type: "idle", sessionID: "s" },
    ],
    [
      {
        type: "session.error",
        properties: { sessionID: "s", error: { name: "APIError", data: { message: "x", statusCode: 503 } } },
      },
      { type: "error", sessionID: "s", error: { name: "APIError", data: { message: "x", statusCode: 503 } } },
    ],
    [
      { type: "message.part.updated", properties: { part: { sessionID: "s", type: "text" }, delta: "a" } },
      { type: "activity", sessionID: "s" },
    ],
    [
      {
        type: "message.part.delta",
        properties: { sessionID: "s", messageID: "m", partID: "p", field: "text", delta: "a" },
      },
      { type: "activity", sessionID: "s" },
    ],
    [
      { type: "message.updated", properties: { info: { sessionID: "s", role: "assistant" } } },
      { type: "activity", sessionID: "s" },
    ],
  ])("reads %j", (event, signal) => {
    expect(readEvent(event)).toEqual(signal)
  })

  test.each([
    [
      {
        type: "session.error",
        properties: { error: { name: "UnknownError", data: { message: "Failed to load plugin" } } },
      },
    ],
    [{ type: "message.updated", properties: { info: { sessionID: "s", role: "user" } } }],
    [{ type: "session.status", properties: { sessionID: "s", status: { type: "weird" } } }],
    [{ type: "file.edited", properties: { file: "x" } }],
    [{ type: "session.idle" }],
    [null],
    ["session.idle"],
  ])("ignores %j", (event) => {
    expect(readEvent(event)).toBeNull()
  })
})

describe("readReply", () => {
  test("reads an assistant message's text, finish, error, tokens and cost", () => {
    const entry = {
      info: {
        id: "msg_2",
        role: "assistant",
        finish: "stop",
        cost: 0.0006,
        time: { created: 1, completed: 2 },
        tokens: { total: 150, input: 100, output: 20, reasoning: 5, cache: { read: 20, write: 5 } },
      },
      parts: [
        { type: "step-start" },
        { type: "text", text: "Preamble." },
        { type: "tool", tool: "read" },
        { type: "text", text: "<findings/>" },
      ],
    }
    expect(readReply(entry)).toEqual([
      {
        id: "msg_2",
        text: "Preamble.\n<findings/>",
        finish: "stop",
        error: null,
        completed: true,
        tokens: { input: 100, output: 20, reasoning: 5, cacheRead: 20, cacheWrite: 5 },
        cost: 0.0006,
      },
    ])
  })

  test("skips user messages and keeps an error", () => {
    expect(readReply({ info: { id: "m1", role: "user" }, parts: [] })).toEqual([])
    const error = { name: "MessageAbortedError", data: { message: "Aborted" } }
    expect(
      readReply({ info: { id: "m2", role: "assistant", error, time: { created: 1 } }, parts: [] })[0],
    ).toMatchObject({ error, completed: false, text: "" })
  })
})

describe("splitModel", () => {
  test("splits provider and model at the first slash", () => {
    expect(splitModel("anthropic/claude-sonnet-4-6")).toEqual({ providerID: "anthropic", modelID: "claude-sonnet-4-6" })
    expect(splitModel("openrouter/anthropic/claude-opus")).toEqual({
      providerID: "openrouter",
      modelID: "anthropic/claude-opus",
    })
  })
})
