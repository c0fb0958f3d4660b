import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import { ChangeReadError } from "@opencode-reviewer/core"

/** The process boundary: everything main may touch of the outside world. */
export interface Io {
  argv: string[]
  env: Record<string, string | undefined>
  cwd: string
  stdout: (text: string) => void
  stderr: (text: string) => void
  stdin: () => Promise<Uint8Array>
  /** The Bun executable running the CLI; child processes of ours (the comment server) run on it. */
  execPath: string
}

/** A unified diff from a file or stdin ("-"); anything that is not one is refused before planning. */
export async function readPatch(path: string, io: Io): Promise<Uint8Array> {
  const bytes = path === "-" ? await io.stdin() : await readBytes(resolve(io.cwd, path), "patch file")
  const head = new TextDecoder().decode(bytes.subarray(0, 1 << 20))
  if (!/^(diff --git |--- |\+\+\+ |@@ )/m.test(head)) {
    throw new ChangeReadError(`${path === "-" ? "stdin" : path} is not a unified git diff`, {
      source: path,
      hint: "produce one with git diff (or git format-patch) and pass it with --patch FILE",
    })
  }
  return bytes
}

/** A file as UTF-8 text; a missing or unreadable file is a ChangeReadError naming it. */
export async function readText(path: string, what: string): Promise<string> {
  return new TextDecoder().decode(await readBytes(path, what))
}

async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    // A view, not a copy: a patch can be many megabytes.
    const buffer = await readFile(path)
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  } catch (cause) {
    throw new ChangeReadError(
      `cannot read ${what} ${path}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`,
      {
        source: path,
        hint: "check the path and its permissions",
      },
    )
  }
}
