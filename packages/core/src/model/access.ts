import * as z from "zod"

// The access ladder every platform's roles map onto (review/access.ts maps them and says whose
// words count; docs/contracts.md, "When the bot approves").

/** A person's access to the repository, on one ladder for every platform. */
export const AccessLevel = z.enum(["none", "read", "write", "maintain", "admin"])
export type AccessLevel = z.infer<typeof AccessLevel>

/** The least access whose break-glass request counts; `anyone` turns the check off. */
export const BreakGlassAccess = z.enum(["anyone", "write", "maintain", "admin"])
export type BreakGlassAccess = z.infer<typeof BreakGlassAccess>

/** The least access whose "won't fix" dismisses one of the bot's findings. */
export const dismissAccess: AccessLevel = "write"

/** Whether `level` is at least `least` on the ladder. */
export function hasAccess(level: AccessLevel, least: AccessLevel | BreakGlassAccess): boolean {
  if (least === "anyone") return true
  return AccessLevel.options.indexOf(level) >= AccessLevel.options.indexOf(least)
}

/** "write access", "no access": a level as a reason reads it. */
export function describeAccess(level: AccessLevel | BreakGlassAccess): string {
  if (level === "none") return "no access"
  if (level === "anyone") return "anyone"
  return `${level} access`
}
