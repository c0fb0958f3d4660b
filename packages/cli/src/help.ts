const common = `Where the change comes from:
  --repo DIR              repository to review (default: current directory)
  --base REF              base of the change (default: merge base with the default branch)
  --head REF              head of the change (default: HEAD)
  --working-tree          review uncommitted changes too (staged, unstaged, untracked)
  --patch FILE            read a unified git diff instead of running git ("-" = stdin)
  --vcs auto|local        where the merge request lives (gitlab and github come later)

What the review knows:
  --title TEXT            merge request title (default: the head commit's subject)
  --description-file FILE merge request description (default: the commit messages)
  --config FILE           configuration file (default: $OPENCODE_REVIEWER_CONFIG, then
                          opencode-reviewer.json as it is on the base)

Where files go:
  --output-dir DIR        outputs (default: <repo>/.opencode-reviewer)
  --work-dir DIR          patches, shared context, prompt, opencode.json (default: <output-dir>/work)

Output:
  --json                  machine-readable output on stdout
  -v, --verbose           debug logs on stderr (JSON lines)
  -h, --help              this help
`

/** Top-level usage. */
export const mainHelp = `opencode-reviewer: multi-agent AI code review, run inside OpenCode

Usage: opencode-reviewer <command> [options]

Commands:
  plan     everything up to the first model call: tier, reviewers, opencode.json, prompts
  review   the whole review (coming in the next version)
  demo     a review of a bundled sample change, offline (coming in the next version)

Run "opencode-reviewer <command> --help" for a command's options.
Exit codes: 0 done, 1 could not be done (the error says why), 2 decision at or above --fail-on.
`

/** Usage per command. */
export const commandHelp = {
  plan: `Usage: opencode-reviewer plan [options]

Plans a review without calling any model: parses and filters the diff, picks the risk tier and
the reviewers, assembles opencode.json, and writes the work dir (per-file patches,
shared-mr-context.txt, coordinator-prompt.xml). Prints a summary, or the plan as JSON with --json.

${common}`,
}
