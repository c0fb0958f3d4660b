const common = `Where the change comes from:
  --repo DIR              repository to review (default: current directory)
  --base REF              base of the change (default: merge base with the default branch)
  --head REF              head of the change (default: HEAD)
  --working-tree          review uncommitted changes too (staged, unstaged, untracked)
  --patch FILE            read a unified git diff instead of running git ("-" = stdin)
  --vcs auto|gitlab|github|local
                          where the change lives (auto: gitlab in a merge request pipeline
                          or a note-triggered one, github in a GitHub Actions pull request run)

What the review knows:
  --title TEXT            merge request title (default: the head commit's subject)
  --description-file FILE merge request description (default: the commit messages)
  --config FILE           configuration file (default: $OPENCODE_REVIEWER_CONFIG, then
                          opencode-reviewer.json as it is on the base)

Where files go:
  --output-dir DIR        outputs (default: <repo>/.opencode-reviewer)
  --work-dir DIR          patches, shared context, prompt, opencode.json (default: <output-dir>/work)

Output:
  --fail-on DECISION      exit 2 at or above this decision (review; default from config:
                          significant_concerns)
  --json                  machine-readable output on stdout
  -v, --verbose           debug logs on stderr (JSON lines)
  -h, --help              this help
`

/** Top-level usage. */
export const mainHelp = `opencode-reviewer: multi-agent AI code review, run inside OpenCode

Usage: opencode-reviewer <command> [options]

Commands:
  plan     everything up to the first model call: tier, reviewers, opencode.json, prompts
  review   the whole review: plan, run the reviewers in OpenCode, write review.json
  demo     a review of a bundled sample change, offline, with a replay model (no keys)
  eval     measure review quality on a corpus with known problems (eval --demo: offline)

Run "opencode-reviewer <command> --help" for a command's options.
Exit codes: 0 done, 1 could not be done (the error says why), 2 decision at or above --fail-on.
`

/** Usage per command. */
export const commandHelp: Record<"plan" | "review" | "demo", string> = {
  review: "",
  demo: `Usage: opencode-reviewer demo [--output-dir DIR] [-v]

Reviews a bundled sample change (an admin user search with a seeded SQL injection) offline: a temp
git repository, a replay model on a local port, the real opencode binary, the runtime plugin and
the comment server. No keys, no network, a few seconds. Shows the tier, each reviewer's outcome,
the judged findings, the decision and the cost, and writes review.json and review.md.
`,
  plan: `Usage: opencode-reviewer plan [options]

Plans a review without calling any model: parses and filters the diff, picks the risk tier and
the reviewers, assembles opencode.json, and writes the work dir (per-file patches,
shared-mr-context.txt, coordinator-prompt.xml). Prints a summary, or the plan as JSON with --json.

${common}`,
}

commandHelp.review = `Usage: opencode-reviewer review [options]

Reviews the change: plans it (as "plan" does), runs the coordinator in OpenCode, which runs the
specialist reviewers concurrently and judges their findings, then writes review.json and review.md
to the output dir and prints the review. Progress goes to stderr. Exit 0 when the decision is below
--fail-on, 2 at or above it, 1 when the review could not be done.

Model keys come from the environment variables your config's provider blocks reference (or the
provider's usual variable, e.g. ANTHROPIC_API_KEY); nothing else of your environment reaches OpenCode.

${common}
Environment:
  GITLAB_TOKEN            bot token (api scope) in a GitLab merge request pipeline;
                          CI_JOB_TOKEN cannot post notes or approve
  OPENCODE_REVIEWER_CONFIG
                          configuration file when --config is not given
  OPENCODE_REVIEWER_MODELS_TOP, _STANDARD, _LIGHT
                          model chains (comma-separated, primary first) overriding the config
  OPENCODE_REVIEWER_MAX_COST_USD
                          spend cap per review in US dollars (e.g. 2.5) overriding maxCostUsd
  OPENCODE_BIN            the opencode binary to run (default: the one installed with this package)
`
