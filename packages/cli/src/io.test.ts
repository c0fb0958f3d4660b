import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, test } from "vitest"
import { type Io, readPatch, readPatchAhead } from "./io"

describe("a patch read ahead", () => {
  let dir: string
  let io: Io

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ocr-io-"))
    await writeFile(join(dir, "change.diff"), "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-a\n+b\n")
    await writeFile(join(dir, "notes.txt"), "not a diff\n")
    io = {
      argv: [],
      env: {},
      cwd: dir,
      stdout: () => {},
      stderr: () => {},
      stdin: async () => new TextEncoder().encode("diff --git a/s b/s\n"),
      execPath: process.execPath,
    }
  })

  afterAll(() => rm(dir, { recursive: true, force: true }))

  // Whatever readPatch alone returns or throws, with the read started earlier.
  async function outcome(read: Promise<Uint8Array>): Promise<string> {
    return read.then(
      (bytes) => `bytes ${new TextDecoder().decode(bytes)}`,
      (error: Error) => `${error.name}: ${error.message}`,
    )
  }

  test("gives what reading it then gives: the bytes, or the same error", async () => {
    for (const path of ["change.diff", "notes.txt", "missing.diff", ".", "-"]) {
      const alone = await outcome(readPatch(path, io))
      expect(await outcome(readPatch(path, io, readPatchAhead(path, io))), path).toBe(alone)
    }
    expect(readPatchAhead("-", io)).toBeUndefined()
  })
})
