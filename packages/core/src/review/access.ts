import { type AccessLevel, type BreakGlassAccess, describeAccess, hasAccess } from "../model/access"

export type { AccessLevel, BreakGlassAccess } from "../model/access"

// Whose words count. Some comments change what the bot does: a break-glass request approves whatever
// the review found, a "won't fix" reply dismisses a finding. Both count only from people who may
// change the code, asked of the platform's API for each author (never read from a payload field
// such as GitHub's author_association). The platforms' roles map onto one ladder (docs/contracts.md,
// "When the bot approves"):
//
// | level    | GitHub (collaborator role) | GitLab (access level)      |
// |----------|----------------------------|----------------------------|
// | none     | none                       | not a member, 0            |
// | read     | read, triage               | Guest 10, Planner 15, Reporter 20 (Minimal 5 too) |
// | write    | write                      | Developer 30               |
// | maintain | maintain                   | Maintainer 40              |
// | admin    | admin                      | Owner 50                   |

/** Someone whose comment may count: their name, and the platform's id for them when it has one. */
export interface Person {
  /** The username (GitHub login, GitLab username), as shown. */
  name: string
  /** GitLab's numeric user id (its members API takes it); absent on GitHub, which takes the login. */
  id?: number
}

/** Asks the platform for a person's access to the repository; providers cache per person. */
export type AccessOf = (person: Person) => Promise<AccessLevel>

/** A GitLab access level (0, 5, 10, 15, 20, 30, 40, 50) on the ladder; null (not a member) is none. */
export function gitlabAccess(level: number | null): AccessLevel {
  if (level === null || level <= 0) return "none"
  if (level < 30) return "read"
  if (level < 40) return "write"
  if (level < 50) return "maintain"
  return "admin"
}

/**
 * A GitHub collaborator permission on the ladder: the role name when it is one of GitHub's own
 * (`admin`, `maintain`, `write`, `triage`, `read`), else the legacy permission (`admin`, `write`,
 * `read`, `none`), which is what a custom role reads as.
 */
export function githubAccess(permission: { roleName?: string | null; permission: string }): AccessLevel {
  const byRole: Record<string, AccessLevel> = {
    admin: "admin",
    maintain: "maintain",
    write: "write",
    triage: "read",
    read: "read",
  }
  const role = permission.roleName ? byRole[permission.roleName] : undefined
  if (role) return role
  const legacy: Record<string, AccessLevel> = { admin: "admin", write: "write", read: "read" }
  return legacy[permission.permission] ?? "none"
}

/** A comment that carries the break-glass phrase: who wrote it and when. */
export interface BreakGlassRequest {
  by: Person
  at: string | null
}

/** Who broke the glass (null: nobody whose request counts), and each request that did not count, with why. */
export interface BreakGlassOutcome {
  honoured: { by: string; at: string | null } | null
  ignored: { by: string; at: string | null; reason: string }[]
}

/**
 * Decides a merge request's break-glass requests (oldest first): the first one from a person with
 * at least `least` access breaks the glass; each one before it is ignored, with why. A request
 * whose author's access cannot be read does not count.
 */
export async function decideBreakGlass(
  requests: readonly BreakGlassRequest[],
  least: BreakGlassAccess,
  accessOf: AccessOf,
): Promise<BreakGlassOutcome> {
  const outcome: BreakGlassOutcome = { honoured: null, ignored: [] }
  for (const request of requests) {
    const level = least === "anyone" ? "admin" : await accessOf(request.by).catch(() => null)
    if (level !== null && hasAccess(level, least)) {
      outcome.honoured = { by: request.by.name, at: request.at }
      break
    }
    outcome.ignored.push({
      by: request.by.name,
      at: request.at,
      reason:
        level === null
          ? "their access to the repository could not be read"
          : `${describeAccess(level)}; breaking the glass needs ${describeAccess(least)} or above`,
    })
  }
  return outcome
}
