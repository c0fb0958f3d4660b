import { describe, expect, test } from "vitest"
import { unlistedFiles } from "./api-diff"

describe("unlistedFiles", () => {
  test('changes_count "1000+" (GitLab\'s overflow) names every file after those listed', () => {
    expect(unlistedFiles("1000+", 1000)).toEqual({
      files: null,
      path: "every changed file after the first 1,000",
      reason: `GitLab's /diffs stops at its diff limits, listing 1,000 of more than 1,000 changed files, changes_count "1000+"; fetch the merge request's commits, GIT_DEPTH: 0, so git reads the whole diff`,
    })
  })

  test("a plain count above what was listed gives the exact total", () => {
    expect(unlistedFiles("1500", 1000)?.reason).toContain("listing 1,000 of 1,500 changed files")
  })

  test("a complete list, a missing or a malformed count is no gap", () => {
    expect(unlistedFiles("5", 5)).toBeNull()
    expect(unlistedFiles(5, 5)).toBeNull()
    expect(unlistedFiles(null, 3)).toBeNull()
    expect(unlistedFiles(undefined, 3)).toBeNull()
    expect(unlistedFiles("lots", 3)).toBeNull()
  })
})
