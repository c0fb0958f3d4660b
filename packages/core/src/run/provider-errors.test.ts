import { describe, expect, test } from "vitest"
import { classifyError, describeError } from "./provider-errors"

// Error shapes as OpenCode 1.18.33 reported them against the scripted model server (docs/opencode.md#errors-and-retries).
const observed = {
  rateLimited: {
    name: "APIError",
    data: {
      message: "Rate limit exceeded (fake)",
      statusCode: 429,
      isRetryable: true,
      responseHeaders: { "content-type": "application/json", "retry-after": "1" },
      responseBody: '{"error":{"message":"Rate limit exceeded (fake)","type":"rate_limit_error"}}',
      metadata: { url: "http://127.0.0.1:18181/v1/chat/completions" },
    },
  },
  unavailable: {
    name: "APIError",
    data: { message: "Service unavailable (fake)", statusCode: 503, isRetryable: true },
  },
  unauthorised: {
    name: "APIError",
    data: { message: "Incorrect API key provided", statusCode: 401, isRetryable: false },
  },
  contextOverflow: {
    name: "ContextOverflowError",
    data: { message: "This model's maximum context length is 100000 tokens.", responseBody: "{}" },
  },
  headerTimeout: {
    name: "APIError",
    data: {
      message: "Provider response headers timed out after 5000ms",
      isRetryable: true,
      metadata: { code: "ProviderHeaderTimeoutError", timeoutMs: "5000" },
    },
  },
  streamTimeout: {
    name: "APIError",
    data: { message: "SSE read timed out", isRetryable: true, metadata: { code: "ProviderResponseStreamError" } },
  },
  aborted: { name: "MessageAbortedError", data: { message: "Aborted" } },
}

describe("classifyError", () => {
  test.each([
    ["429 rate limit (after OpenCode's own retries)", observed.rateLimited, "retryable"],
    ["503 service unavailable", observed.unavailable, "retryable"],
    ["provider header timeout", observed.headerTimeout, "retryable"],
    ["provider stream timeout", observed.streamTimeout, "retryable"],
    ["401 (an APIError, not ProviderAuthError)", observed.unauthorised, "fatal"],
    ["context overflow", observed.contextOverflow, "fatal"],
    ["abort", observed.aborted, "aborted"],
  ])("classifies the observed %s", (_name, error, kind) => {
    expect(classifyError(error).kind).toBe(kind)
  })

  test.each([
    [
      "529 overloaded even when not flagged retryable",
      { name: "APIError", data: { message: "Overloaded", statusCode: 529, isRetryable: false } },
      "retryable",
    ],
    [
      "500 without the flag",
      { name: "APIError", data: { message: "boom", statusCode: 500, isRetryable: false } },
      "retryable",
    ],
    [
      "502 bad gateway",
      { name: "APIError", data: { message: "bad gateway", statusCode: 502, isRetryable: true } },
      "retryable",
    ],
    [
      "504 gateway timeout",
      { name: "APIError", data: { message: "timeout", statusCode: 504, isRetryable: true } },
      "retryable",
    ],
    [
      "403 even when flagged retryable",
      { name: "APIError", data: { message: "forbidden", statusCode: 403, isRetryable: true } },
      "fatal",
    ],
    [
      "400 bad request",
      { name: "APIError", data: { message: "bad request", statusCode: 400, isRetryable: false } },
      "fatal",
    ],
    [
      "ProviderAuthError",
      { name: "ProviderAuthError", data: { providerID: "anthropic", message: "missing key" } },
      "fatal",
    ],
    ["StructuredOutputError", { name: "StructuredOutputError", data: { message: "no output", retries: 2 } }, "fatal"],
    ["MessageOutputLengthError", { name: "MessageOutputLengthError", data: {} }, "fatal"],
    ["ContentFilterError", { name: "ContentFilterError", data: { message: "filtered" } }, "fatal"],
    [
      "UnknownError (agent not found)",
      { name: "UnknownError", data: { message: 'Agent not found: "x". Available agents: …' } },
      "fatal",
    ],
    ["an APIError without status or flag", { name: "APIError", data: { message: "odd" } }, "fatal"],
    [
      "an unknown error name flagged retryable",
      { name: "SomeNewError", data: { message: "x", isRetryable: true } },
      "retryable",
    ],
  ])("classifies %s", (_name, error, kind) => {
    expect(classifyError(error).kind).toBe(kind)
  })

  test("never decides by the message text", () => {
    const worded = { name: "UnknownError", data: { message: "503 overloaded, rate limit exceeded, timeout" } }
    expect(classifyError(worded).kind).toBe("fatal")
  })

  test.each([[null], [undefined], ["boom"], [42], [{ data: {} }], [{ name: "APIError", data: "x" }]])(
    "treats the malformed value %j as fatal",
    (value) => {
      expect(classifyError(value).kind).toBe("fatal")
    },
  )

  test("describes an error by name, status and message on one short line", () => {
    expect(describeError(observed.unavailable)).toBe("APIError 503: Service unavailable (fake)")
    expect(describeError({ name: "MessageOutputLengthError", data: {} })).toBe("MessageOutputLengthError")
    const long = describeError({ name: "APIError", data: { message: "x\n".repeat(400) } })
    expect(long.length).toBeLessThanOrEqual(300)
    expect(long).not.toContain("\n")
  })
})
