import { describe, expect, test } from "vitest"
import { defaults } from "../config/config"
import { assessRisk, type RiskFile } from "./risk"

const rules = defaults.tiers
const file = (path: string, added: number, removed = 0, extra: Partial<RiskFile> = {}): RiskFile => ({
  path,
  added,
  removed,
  noise: null,
  securitySensitive: false,
  ...extra,
})
const many = (count: number, lines = 1) => Array.from({ length: count }, (_, index) => file(`src/f${index}.ts`, lines))

describe("assessRisk", () => {
  test("is trivial at exactly 10 changed lines in 20 files", () => {
    const files = [...many(19, 0), file("src/a.ts", 6, 4)]
    expect(assessRisk(files, rules)).toMatchObject({ tier: "trivial", totals: { files: 20, added: 6, removed: 4 } })
  })

  test("is lite from 11 lines up to 100 lines", () => {
    expect(assessRisk([file("a.ts", 11)], rules).tier).toBe("lite")
    expect(assessRisk([file("a.ts", 60, 40)], rules).tier).toBe("lite")
  })

  test("is full above 100 lines", () => {
    expect(assessRisk([file("a.ts", 101)], rules).tier).toBe("full")
  })

  test("is full with 21 files even when the lines are few", () => {
    expect(assessRisk(many(21), rules).tier).toBe("full")
  })

  test("is full above 50 files and says so first", () => {
    const result = assessRisk(many(51, 0), rules)
    expect(result.tier).toBe("full")
    expect(result.reasons[0]).toBe("51 files changed (more than 50)")
  })

  test("is full for one security-sensitive file, naming it", () => {
    const result = assessRisk([file("src/auth/session.ts", 1, 0, { securitySensitive: true })], rules)
    expect(result).toMatchObject({ tier: "full", reasons: ["security-sensitive path: src/auth/session.ts"] })
  })

  test("ignores noise files for lines, files and sensitivity", () => {
    const files = [
      file("src/a.ts", 2),
      file("package-lock.json", 5000, 3000, { noise: "lockfile" }),
      file("migrations/auth/x.sql", 1, 0, { noise: "generated", securitySensitive: true }),
    ]
    expect(assessRisk(files, rules)).toMatchObject({ tier: "trivial", totals: { files: 1, added: 2, removed: 0 } })
  })

  test("follows configured thresholds", () => {
    const custom = { trivial: { lines: 0, files: 0 }, lite: { lines: 500, files: 40 }, fullFiles: 50 }
    expect(assessRisk([file("a.ts", 1)], custom).tier).toBe("lite")
    expect(assessRisk(many(30, 10), custom).tier).toBe("lite")
  })
})
