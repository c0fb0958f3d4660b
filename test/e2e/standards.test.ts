import { findingsReply, type ModelServer, type RecordedRequest } from "@opencode-reviewer/testkit"
import { afterEach, describe, expect, test } from "vitest"
import { cleanUp, createScenario } from "./harness"

// The organisation's standards end to end: read from the target branch, injected into the
// compliance reviewer's system prompt only, and a finding citing one lands in review.json. Standards
// from a URL take the same path once loaded (standards/src/load.test.ts, standards-plugin.test.ts).

afterEach(cleanUp)

const standard = [
  "---",
  'paths: ["src/**"]',
  "---",
  "# ENG-001: Timeouts on outbound calls",
  "",
  "Every outbound HTTP call MUST pass an AbortSignal with a timeout of at most 5 seconds.",
  "",
].join("\n")

// Fifteen changed lines: a lite review, which runs the compliance reviewer.
const client =
  [
    "export async function getUser(id: string) {",
    "  const response = await fetch(`https://users.internal/v1/users/${id}`)",
    "  return response.json()",
    "}",
    ...Array.from({ length: 11 }, (_, n) => `export const route${n} = "/v1/items/${n}"`),
  ].join("\n") + "\n"

const violation = {
  severity: "warning" as const,
  file: "src/client.ts",
  line: 2,
  category: "compliance",
  title: "Violates ENG-001: outbound call without a timeout",
  body: "The fetch to the users service passes no AbortSignal; ENG-001 requires a timeout of at most 5 seconds.",
}

// The scripted compliance reviewer reports the violation only if the standard is in its prompt.
const compliance = (request: RecordedRequest) =>
  findingsReply(
    request.system.includes('<standard id="ENG-001"') && request.system.includes("MUST pass an AbortSignal")
      ? [violation]
      : [],
  )

const quiet = findingsReply([])
const replies = { "fake/compliance": compliance, "fake/security": quiet }

function reviewerRequests(server: ModelServer) {
  return server.requests.filter((request) => !request.isTitle && request.model !== "coordinator")
}

describe("engineering standards", () => {
  test("a standard on the base branch reaches the compliance reviewer only, and its finding reaches review.json", async () => {
    const scenario = await createScenario({
      baseFiles: { "docs/standards/ENG-001.md": standard },
      files: { "src/client.ts": client },
      replies,
      config: { standards: "docs/standards" },
    })
    const run = await scenario.run()
    expect(run.stderr).not.toContain("warning: standards")
    expect(run.record, run.stderr).not.toBeNull()

    const requests = reviewerRequests(scenario.server)
    const toCompliance = requests.filter((request) => request.model === "compliance")
    expect(toCompliance.length).toBeGreaterThan(0)
    expect(toCompliance[0]!.system).toContain("## ENG-001: Timeouts on outbound calls")
    expect(toCompliance[0]!.system).toContain(
      '<standard id="ENG-001" source="docs/standards/ENG-001.md" applies-to="src/**">',
    )
    const others = requests.filter((request) => request.model !== "compliance")
    expect(new Set(others.map((request) => request.model)).size).toBeGreaterThan(0)
    for (const request of others) expect(request.system, request.model).not.toContain("ENG-001")

    expect(run.record!.findings).toEqual([
      expect.objectContaining({
        reviewer: "compliance",
        severity: "warning",
        file: "src/client.ts",
        line: 2,
        title: violation.title,
      }),
    ])
    expect(run.record!.decision).toBe("approved_with_comments")
  })
})
