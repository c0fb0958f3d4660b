import { addTokens, noTokens, type TokenCounts } from "@opencode-reviewer/core/model/usage"
import { type ChildSessions, childSessions, type SessionClient } from "@opencode-reviewer/opencode/session"

/** Token counts of one reply or a sum of them, in the names the CLI's usage records use. */
export type Tokens = TokenCounts

/**
 * The child-session operations the scheduler needs, and nothing about time. The plugin uses the
 * adapter's implementation over OpenCode's in-process client; tests implement it with a scripted fake.
 */
export type SessionDriver = ChildSessions

/** A driver over OpenCode's v1 client, as a plugin receives it. */
export function createClientDriver(client: SessionClient): SessionDriver {
  return childSessions(client)
}

/** Zero tokens. */
export { addTokens, noTokens }
