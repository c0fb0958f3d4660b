import { Severity } from "@opencode-reviewer/core/model/finding"
import * as z from "zod"

/** The corpus format version this package reads; a manifest with another `format` is refused. */
export const corpusFormat = 1

/** The manifest's file name, at the corpus directory's root. */
export const manifestFile = "corpus.json"

/** The directory, inside a corpus, that holds one `<anything>.json` file per case. */
export const casesDirectory = "cases"

/** The corpus's own description: `corpus.json` at the root of a corpus directory. */
export const CorpusManifest = z
  .object({
    format: z.literal(corpusFormat).describe("The corpus format version: always 1 for now."),
    name: z.string().min(1).describe("A short name for reports, e.g. `martian` or `acme-backend`."),
    description: z.string().optional().describe("What the corpus is and where its cases come from."),
    source: z.string().optional().describe("Where the data comes from (a URL, a commit), for people."),
    license: z.string().optional().describe("The data's licence (an SPDX id, e.g. `MIT`); the text goes in LICENSE."),
  })
  .describe("corpus.json: a corpus directory's manifest.")
export type CorpusManifest = z.infer<typeof CorpusManifest>

/** A diff stored in the corpus itself, as a unified diff (`git diff` output). */
export const FileDiffSource = z.object({
  kind: z.literal("file"),
  path: z
    .string()
    .min(1)
    .describe("The `.diff` file's path relative to the corpus directory (forward slashes, inside the corpus)."),
})
export type FileDiffSource = z.infer<typeof FileDiffSource>

/** A public pull request whose diff is fetched when the eval runs (and cached by it). */
export const PullRequestDiffSource = z.object({
  kind: z.literal("pull-request"),
  url: z
    .url({ protocol: /^https$/ })
    .describe("The pull or merge request's web address, e.g. `https://github.com/owner/repo/pull/12`."),
})
export type PullRequestDiffSource = z.infer<typeof PullRequestDiffSource>

/** A range of commits in a git repository: the change is `git diff base...head`. */
export const GitDiffSource = z.object({
  kind: z.literal("git"),
  base: z.string().min(1).describe("The commit (or ref) the change starts from."),
  head: z.string().min(1).describe("The commit (or ref) the change ends at."),
  remote: z
    .string()
    .min(1)
    .optional()
    .describe("Where to clone or fetch the commits from; without it, the repository the eval runs in."),
})
export type GitDiffSource = z.infer<typeof GitDiffSource>

/** Where a case's change comes from. */
export const DiffSource = z
  .discriminatedUnion("kind", [FileDiffSource, PullRequestDiffSource, GitDiffSource])
  .describe("Where the change under review comes from: a file in the corpus, a pull request, or a git range.")
export type DiffSource = z.infer<typeof DiffSource>

/** One problem the change is known to have: what a good reviewer should say about it. */
export const GoldenComment = z.object({
  text: z.string().min(1).describe("The problem, in words; the judge compares findings with this text."),
  severity: Severity.describe("How bad it is in our terms: `critical`, `warning` or `suggestion`."),
  sourceSeverity: z
    .string()
    .min(1)
    .optional()
    .describe("The severity as the data's source wrote it (e.g. the benchmark's `High`), kept for remapping."),
  file: z.string().min(1).optional().describe("The file the problem is in, relative to the repository root."),
  line: z.number().int().positive().optional().describe("The line of the new file the problem is at."),
})
export type GoldenComment = z.infer<typeof GoldenComment>

/** One change with known problems: a file under `cases/` of a corpus. */
export const CorpusCase = z
  .object({
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, "lowercase letters, digits, `.`, `_` and `-`, starting with a letter or digit")
      .describe("Unique within the corpus; names the case in reports and caches."),
    repository: z
      .string()
      .min(1)
      .describe("The repository the change comes from (`owner/name`); results are also grouped by it."),
    diff: DiffSource,
    title: z.string().optional().describe("The change's title, given to the reviewers as the merge request title."),
    description: z.string().optional().describe("The change's description, given to the reviewers."),
    original: z.url().optional().describe("Where the change first appeared, when the diff is a copy of it."),
    note: z.string().optional().describe("Anything a person should know about the case; not shown to the reviewers."),
    golden: z.array(GoldenComment).describe("The known problems; an empty list makes the case unscored."),
  })
  .describe("cases/<id>.json: one change and its golden comments.")
export type CorpusCase = z.infer<typeof CorpusCase>

/** A loaded corpus: its directory, manifest and cases in file-name order. */
export interface Corpus {
  directory: string
  manifest: CorpusManifest
  cases: CorpusCase[]
}
