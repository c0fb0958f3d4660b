import { readFile } from "node:fs/promises"
import { resolve } from "node:path"

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

/**
 * The Io a command prints its human output through. With --json, stdout carries the one JSON
 * document and nothing else (`| jq` must parse it), so the report, the provider's lines and any
 * other text meant for a person go to stderr instead; without it, this is `io` itself.
 */
export function routeHumanOutput(io: Io, json: boolean | undefined): Io {
  return json ? { ...io, stdout: io.stderr } : io
}

/** A file's bytes, or why they could not be read. */
type Read = { buffer: Buffer } | { cause: unknown }

/** A patch file being read ahead of time: see {@link readPatchAhead}. */
export type PatchAhead = Promise<Read>

/**
 * Starts reading a patch file (not stdin, which gives undefined) while the modules that plan it
 * load: readPatch then takes the bytes, or the error, from there, at the same point and with the same
 * outcome as reading it then. This module imports no core, so the read can start first.
 */
export function readPatchAhead(path: string, io: Io): PatchAhead | undefined {
  return path === "-" ? undefined : read(resolve(io.cwd, path))
}

function read(path: string): Promise<Read> {
  return readFile(path).then(
    (buffer) => ({ buffer }),
    (cause: unknown) => ({ cause }),
  )
}

/**
 * A unified diff from a file or stdin ("-"); anything that is not one is refused before planning.
 * `ahead` is the same file's {@link readPatchAhead}.
 */
export async function readPatch(path: string, io: Io, ahead?: PatchAhead): Promise<Uint8Array> {
  const bytes = path === "-" ? await io.stdin() : await readBytes(resolve(io.cwd, path), "patch file", ahead)
  const head = new TextDecoder().decode(bytes.subarray(0, 1 << 20))
  if (!/^(diff --git |--- |\+\+\+ |@@ )/m.test(head)) {
    const { ChangeReadError } = await import("@opencode-reviewer/core")
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

async function readBytes(path: string, what: string, ahead?: PatchAhead): Promise<Uint8Array> {
  const outcome = await (ahead ?? read(path))
  if ("buffer" in outcome) {
    // A view, not a copy: a patch can be many megabytes.
    const { buffer } = outcome
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  }
  const { cause } = outcome
  const { ChangeReadError } = await import("@opencode-reviewer/core")
  throw new ChangeReadError(`cannot read ${what} ${path}: ${(cause as NodeJS.ErrnoException).code ?? String(cause)}`, {
    source: path,
    hint: "check the path and its permissions",
  })
}
