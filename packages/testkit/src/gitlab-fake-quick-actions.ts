// Quick actions as GitLab extracts them from a note body (lib/gitlab/quick_actions/extractor.rb):
// a known command at the very start of a line, case-insensitive, unless it sits inside a fenced
// code block, an "inline code" span across lines, an HTML block or a >>> quote block. Every known
// command line is removed from the stored note; only the ones that apply to a merge request run.

/** A command found in a note body. */
export interface ExtractedCommand {
  /** The canonical name (aliases resolved), lower-case. */
  name: string
  /** The name as typed. */
  typed: string
  argument: string | null
}

interface CommandSpec {
  names: string[]
  /** Applies to merge requests (InterpretService `types MergeRequest`). */
  mergeRequest: boolean
}

// Every command GitLab knows, so that issue-only commands are stripped (and not applied) like GitLab does.
const specs: CommandSpec[] = [
  // merge_request_actions.rb
  { names: ["merge"], mergeRequest: true },
  { names: ["rebase"], mergeRequest: true },
  { names: ["draft", "wip"], mergeRequest: true },
  { names: ["ready"], mergeRequest: true },
  { names: ["target_branch"], mergeRequest: true },
  { names: ["submit_review"], mergeRequest: true },
  { names: ["request_changes"], mergeRequest: true },
  { names: ["approve"], mergeRequest: true },
  { names: ["unapprove"], mergeRequest: true },
  { names: ["assign_reviewer", "reviewer"], mergeRequest: true },
  { names: ["request_review"], mergeRequest: true },
  { names: ["unassign_reviewer", "remove_reviewer"], mergeRequest: true },
  // issuable_actions.rb and issue_and_merge_request_actions.rb
  { names: ["close"], mergeRequest: true },
  { names: ["reopen"], mergeRequest: true },
  { names: ["title"], mergeRequest: true },
  { names: ["label", "labels"], mergeRequest: true },
  { names: ["unlabel", "remove_label"], mergeRequest: true },
  { names: ["relabel"], mergeRequest: true },
  { names: ["todo"], mergeRequest: true },
  { names: ["done"], mergeRequest: true },
  { names: ["subscribe"], mergeRequest: true },
  { names: ["unsubscribe"], mergeRequest: true },
  { names: ["award", "react"], mergeRequest: true },
  { names: ["lock"], mergeRequest: true },
  { names: ["unlock"], mergeRequest: true },
  { names: ["copy_metadata"], mergeRequest: true },
  { names: ["assign"], mergeRequest: true },
  { names: ["unassign"], mergeRequest: true },
  { names: ["reassign"], mergeRequest: true },
  { names: ["milestone"], mergeRequest: true },
  { names: ["remove_milestone"], mergeRequest: true },
  { names: ["estimate", "estimate_time"], mergeRequest: true },
  { names: ["remove_estimate", "remove_time_estimate"], mergeRequest: true },
  { names: ["spend", "spent", "spend_time"], mergeRequest: true },
  { names: ["remove_time_spent"], mergeRequest: true },
  { names: ["cc"], mergeRequest: true },
  { names: ["shrug"], mergeRequest: true },
  { names: ["tableflip"], mergeRequest: true },
  { names: ["summarize_diff"], mergeRequest: true },
  { names: ["assign_reviewer_duo", "duo_code_review"], mergeRequest: true },
  // issue, work item, relate and commit actions: recognised (and stripped) but not applicable here
  { names: ["due"], mergeRequest: false },
  { names: ["remove_due_date"], mergeRequest: false },
  { names: ["board_move"], mergeRequest: false },
  { names: ["duplicate"], mergeRequest: false },
  { names: ["move"], mergeRequest: false },
  { names: ["clone"], mergeRequest: false },
  { names: ["create_merge_request"], mergeRequest: false },
  { names: ["confidential"], mergeRequest: false },
  { names: ["zoom"], mergeRequest: false },
  { names: ["remove_zoom"], mergeRequest: false },
  { names: ["promote_to_incident"], mergeRequest: false },
  { names: ["severity"], mergeRequest: false },
  { names: ["timeline"], mergeRequest: false },
  { names: ["invite_email"], mergeRequest: false },
  { names: ["remove_email"], mergeRequest: false },
  { names: ["add_contacts"], mergeRequest: false },
  { names: ["remove_contacts"], mergeRequest: false },
  { names: ["convert_to_ticket"], mergeRequest: false },
  { names: ["weight"], mergeRequest: false },
  { names: ["clear_weight"], mergeRequest: false },
  { names: ["epic", "set_epic"], mergeRequest: false },
  { names: ["remove_epic"], mergeRequest: false },
  { names: ["iteration"], mergeRequest: false },
  { names: ["remove_iteration"], mergeRequest: false },
  { names: ["health_status"], mergeRequest: false },
  { names: ["clear_health_status"], mergeRequest: false },
  { names: ["promote"], mergeRequest: false },
  { names: ["promote_to"], mergeRequest: false },
  { names: ["page"], mergeRequest: false },
  { names: ["escalate"], mergeRequest: false },
  { names: ["relate"], mergeRequest: false },
  { names: ["unrelate"], mergeRequest: false },
  { names: ["blocks"], mergeRequest: false },
  { names: ["blocked_by"], mergeRequest: false },
  { names: ["type"], mergeRequest: false },
  { names: ["set_parent", "epic_parent"], mergeRequest: false },
  { names: ["remove_parent"], mergeRequest: false },
  { names: ["add_child"], mergeRequest: false },
  { names: ["remove_child"], mergeRequest: false },
  { names: ["checkin_reminder"], mergeRequest: false },
  { names: ["status"], mergeRequest: false },
  { names: ["tag"], mergeRequest: false },
]

const substitutions: Record<string, string> = {
  shrug: "¯\\＿(ツ)＿/¯",
  tableflip: "(╯°□°)╯︵ ┻━┻",
}

const byName = new Map<string, { canonical: string; spec: CommandSpec }>()
for (const spec of specs) for (const name of spec.names) byName.set(name, { canonical: spec.names[0]!, spec })

/** True when a known command applies to merge requests at all (before its own condition). */
export function appliesToMergeRequest(name: string): boolean {
  return byName.get(name)?.spec.mergeRequest ?? false
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
}

function commandsRegex(names: string[]): RegExp {
  // Longer names first so that an alias that is a prefix of another never wins by accident;
  // Onigmo backtracks through the union either way, so the matched set is the same.
  const union = [...names]
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join("|")
  return new RegExp(
    [
      "(?<code>^```.+?\\n```$)",
      "(?<inline_code>^.*`\\n*.+?\\n*`$)",
      "(?<html>^<[^>]+?>\\n.+?\\n<\\/[^>]+?>$)",
      "(?<quote>^>>>.+?\\n>>>$)",
      `(?:^\\/(?<cmd>${union})(?: (?<arg>[^\\n]*))?(?:\\s*\\n|$))`,
    ].join("|"),
    "gims",
  )
}

const regularNames = specs.flatMap((spec) => spec.names).filter((name) => !(name in substitutions))
const regularRegex = commandsRegex(regularNames)
const substitutionRegex = commandsRegex(Object.keys(substitutions))

/** Extracts commands like Gitlab::QuickActions::Extractor#extract_commands; returns the remaining content. */
export function extractQuickActions(body: string): { content: string; commands: ExtractedCommand[] } {
  const commands: ExtractedCommand[] = []
  let content = body.replace(/\r/g, "")
  content = content.replace(regularRegex, (...args) => {
    const groups = args[args.length - 1] as Record<string, string | undefined>
    const matched = args[0] as string
    if (!groups.cmd) return matched
    commands.push(toCommand(groups.cmd, groups.arg))
    return ""
  })
  content = content.trimEnd()
  content = content.replace(substitutionRegex, (...args) => {
    const groups = args[args.length - 1] as Record<string, string | undefined>
    const matched = args[0] as string
    if (!groups.cmd) return matched
    const command = toCommand(groups.cmd, groups.arg)
    commands.push(command)
    const replaced = `${command.argument ?? ""} ${substitutions[command.name]}`.trim()
    return matched.replace(/^\/\S+(?: ?[^\n]*)?/, replaced)
  })
  return { content, commands }
}

function toCommand(typed: string, argument: string | undefined): ExtractedCommand {
  const name = typed.toLowerCase()
  const trimmed = argument?.trim() ?? ""
  return { name: byName.get(name)?.canonical ?? name, typed, argument: trimmed === "" ? null : trimmed }
}
