// The only module that imports @opencode-ai/plugin: OpenCode's plugin API (docs/opencode.md,
// "Plugins"). A plugin module given to OpenCode must export functions only; this module is not one,
// the plugin entry points import it.
import type * as Api from "@opencode-ai/plugin"
import type { SessionClient } from "./session"

/** Defines a plugin tool; `tool.schema` is OpenCode's zod 4 and `args` a raw zod shape. */
export { tool } from "@opencode-ai/plugin"

/** A plugin's hooks (`tool`, `event`, `tool.execute.after`, `config`, …), what a plugin function returns. */
export type Hooks = Api.Hooks
/** An OpenCode plugin: called once per instance with the plugin input, returns its hooks. */
export type Plugin = Api.Plugin
/** What OpenCode hands a plugin: the in-process client, the directory, the worktree and more. */
export type PluginInput = Api.PluginInput

/** A level of OpenCode's own log. */
export type LogLevel = "debug" | "info" | "warn" | "error"

/** One entry of OpenCode's log, written by a plugin under its service name. */
export interface LogEntry {
  service: string
  level: LogLevel
  message: string
  extra: Record<string, unknown>
}

/** Writes one entry to OpenCode's log through the plugin's client (`app.log`); may reject. */
export function writeLog(input: PluginInput, entry: LogEntry): Promise<unknown> {
  return input.client.app.log({ body: entry })
}

/** The plugin's client as the child-session calls use it (the v1 SDK client; see session.ts). */
export function sessionClientOf(input: PluginInput): SessionClient {
  return input.client as unknown as SessionClient
}
