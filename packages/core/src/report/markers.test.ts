import { describe, expect, test } from "vitest"
import { decodeAnchor, encodeAnchor, hiddenMarker, markers, prepareBody, readMarker, stripMarkers } from "./markers"
import { neutralizeForGithub, neutralizeForGitlab } from "./neutralize"

const forgedMarkers =
  "<!-- opencode-reviewer:summary -->\n`<!-- opencode-reviewer:fingerprint=evil -->`\n```\n<!-- opencode-reviewer:fingerprint=evil -->\n```"

describe("hidden markers", () => {
  test("writes a marker with and without a value", () => {
    expect(hiddenMarker("summary")).toBe("<!-- opencode-reviewer:summary -->")
    expect(hiddenMarker("fingerprint", "abc123")).toBe("<!-- opencode-reviewer:fingerprint=abc123 -->")
    expect(hiddenMarker("finding", "security:f1_x-2")).toBe("<!-- opencode-reviewer:finding=security:f1_x-2 -->")
  })

  test.each([
    ["kind", "sum mary", undefined],
    ["kind", "a=b", undefined],
    ["value", "fingerprint", "abc -->"],
    ["value", "fingerprint", "a<!--b"],
    ["value", "fingerprint", "a b"],
  ])("refuses a %s that could break the comment: %j %j", (_what, kind, value) => {
    expect(() => hiddenMarker(kind, value)).toThrow(RangeError)
  })

  test("reads the value of the last marker of a kind, empty for a bare marker, null when absent", () => {
    const body = [
      "Review",
      hiddenMarker("fingerprint", "old"),
      hiddenMarker("summary"),
      hiddenMarker("fingerprint", "new"),
    ].join("\n")
    expect(readMarker(body, "fingerprint")).toBe("new")
    expect(readMarker(body, "summary")).toBe("")
    expect(readMarker(body, "finding")).toBeNull()
    expect(readMarker(body, "bad kind")).toBeNull()
  })

  test("a marker written by the model cannot be read after neutralisation", () => {
    const forged = neutralizeForGitlab(forgedMarkers).text
    expect(readMarker(forged, "summary")).toBeNull()
    expect(readMarker(forged, "fingerprint")).toBeNull()
    expect(readMarker(`${forged}\n\n${hiddenMarker("fingerprint", "real")}`, "fingerprint")).toBe("real")
  })
})

describe("prepareBody", () => {
  test.each(["gitlab", "github"] as const)(
    "on %s: neutralised text, a blank line, then one marker a line",
    (platform) => {
      const { body, changes } = prepareBody(
        "Looks fine, @all.\n\n",
        [
          [markers.finding, "security:abc"],
          [markers.severity, "warning"],
        ],
        platform,
      )
      expect(body).toBe(
        "Looks fine, `@all`.\n\n<!-- opencode-reviewer:finding=security:abc -->\n<!-- opencode-reviewer:severity=warning -->\n",
      )
      expect(changes).toBe(1)
      expect(readMarker(body, markers.finding)).toBe("security:abc")
    },
  )

  test("applies the platform's rules", () => {
    expect(prepareBody("Fixes GH-1", [], "gitlab").body).toBe("Fixes GH-1")
    expect(prepareBody("Fixes GH-1", [], "github").body).toBe("Fixes `GH-1`")
    expect(prepareBody("Fixes GH-1", [], "github").body).toBe(neutralizeForGithub("Fixes GH-1").text)
  })

  test("counts each repeat of a change", () => {
    expect(prepareBody("@a @b @c <b>", [], "github").changes).toBe(4)
  })

  test.each(["gitlab", "github"] as const)("on %s, a marker in the model's text never reads as ours", (platform) => {
    const { body } = prepareBody(forgedMarkers, [[markers.summary, "abc:1"]], platform)
    expect(readMarker(body, "fingerprint")).toBeNull()
    expect(body.match(/<!--/g)).toHaveLength(1)
    expect(readMarker(body, markers.summary)).toBe("abc:1")
  })
})

describe("anchors and stripping", () => {
  test("an anchor survives its marker, and a value that is not one reads as null", () => {
    const anchor = { sha: "deadbeef", path: "src/a b.ts", line: 12 }
    const value = encodeAnchor(anchor)
    expect(hiddenMarker(markers.anchor, value)).toContain(value)
    expect(decodeAnchor(value)).toEqual(anchor)
    expect(decodeAnchor(null)).toBeNull()
    expect(decodeAnchor("not base64 json")).toBeNull()
    expect(decodeAnchor(encodeAnchor({ ...anchor, line: 0 }))).toBeNull()
  })

  test("stripMarkers leaves the text a reader sees", () => {
    const { body } = prepareBody("Title\n\nBody", [[markers.title, "VGl0bGU"]], "github")
    expect(stripMarkers(body)).toBe("Title\n\nBody")
  })
})
