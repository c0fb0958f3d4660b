import { describe, expect, test } from "vitest"
import { traceLine } from "./line-trace"

const file = (lines: string[]) => lines.map((line) => `${line}\n`).join("")
const before = file([
  "import db",
  "",
  "export function login(name) {",
  "  return db.query(`SELECT ${name}`)",
  "}",
  "",
  "export const a = 1",
  "export const b = 2",
  "export const c = 3",
])

describe("traceLine", () => {
  test("an unchanged file: same line, nothing changed", () => {
    expect(traceLine(before, before, 4)).toEqual({ line: 4, changed: false })
  })

  test("lines inserted above move the line but do not change its code", () => {
    const after = file(["// header", "// more", ...before.trimEnd().split("\n")])
    expect(traceLine(before, after, 4)).toEqual({ line: 6, changed: false })
  })

  test("the line itself edited: gone, changed", () => {
    const after = before.replace("db.query(`SELECT ${name}`)", "db.query('SELECT $1', [name])")
    expect(traceLine(before, after, 4)).toEqual({ line: null, changed: true })
  })

  test("an edit within two lines counts as its code changing; further away does not", () => {
    const near = before.replace("export function login(name) {", "export function login(name: string) {")
    expect(traceLine(before, near, 4)).toEqual({ line: 4, changed: true })
    const far = before.replace("export const b = 2", "export const b = 20")
    expect(traceLine(before, far, 4)).toEqual({ line: 4, changed: false })
  })

  test("a line inserted right below it is a change; one inserted three lines below is not", () => {
    const lines = before.trimEnd().split("\n")
    const below = file([...lines.slice(0, 4), "  // checked", ...lines.slice(4)])
    expect(traceLine(before, below, 4)).toEqual({ line: 4, changed: true })
    const further = file([...lines.slice(0, 7), "export const x = 0", ...lines.slice(7)])
    expect(traceLine(before, further, 4)).toEqual({ line: 4, changed: false })
  })

  test("a reworded finding's code untouched while the rest of the file is rewritten around it", () => {
    const after = file([
      "import db",
      "import log",
      "",
      "export function login(name) {",
      "  return db.query(`SELECT ${name}`)",
      "}",
    ])
    expect(traceLine(before, after, 4, 1)).toEqual({ line: 5, changed: false })
  })

  test("a line past the end, or a file emptied, traces to nothing", () => {
    expect(traceLine(before, before, 40)).toEqual({ line: null, changed: true })
    expect(traceLine(before, "", 4)).toEqual({ line: null, changed: true })
  })

  test("CRLF and a missing final newline do not count as changes", () => {
    const crlf = before.replace(/\n/g, "\r\n").replace(/\r\n$/, "")
    expect(traceLine(before, crlf, 4)).toEqual({ line: 4, changed: false })
  })
})
