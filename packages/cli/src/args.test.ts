import { parseArgs } from "node:util"
import { describe, expect, test } from "vitest"
import { commonOptions, parse, parsePlain } from "./args"

// parsePlain stands in for node's parseArgs on plainly written flags, so that a start-up need not
// load node:util: whatever it accepts it must read exactly as parseArgs does.
describe("flags", () => {
  const tokens = [
    ...["--repo", "x", "--json", "-v", "-h", "--patch", "-", "--patch=", "--repo=a=b", "--base", "--head"],
    ...["--working-tree", "--", "-x", "--json=1", "--vcs", "local", "--nope", "", "-vh", "--verbose", "--help"],
    ...["--title", "a b", "--fail-on=high", "--output-dir", "-d", "--__proto__", "--constructor", "--toString"],
  ]

  test("are read as parseArgs reads them, or left to it", () => {
    let state = 1
    const random = (below: number) => {
      state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
      return Math.floor((state / 2_147_483_648) * below)
    }
    let plain = 0
    for (let round = 0; round < 20_000; round += 1) {
      const args = Array.from({ length: random(6) }, () => tokens[random(tokens.length)]!)
      const read = parsePlain(args)
      if (read === null) continue
      plain += 1
      const expected = parseArgs({ args, options: commonOptions, allowPositionals: false, strict: true })
      expect(read, JSON.stringify(args)).toEqual(expected)
      expect(Object.keys(read.values)).toEqual(Object.keys(expected.values))
      expect(Object.getPrototypeOf(read.values)).toBe(Object.getPrototypeOf(expected.values))
    }
    expect(plain).toBeGreaterThan(2_000)
  })

  test("that parseArgs refuses are refused with its message", async () => {
    for (const args of [["--frob"], ["--repo"], ["--json=yes"], ["stray"], ["--repo", "--json"], ["-x"]]) {
      let message = ""
      try {
        parseArgs({ args, options: commonOptions, allowPositionals: false, strict: true })
      } catch (error) {
        message = (error as Error).message
      }
      expect(message).not.toBe("")
      await expect(parse(args, "plan")).rejects.toThrow(message)
    }
  })
})
