// Measuring review quality (issue 13, docs/eval.md): the corpus format and loader, the benchmark's
// scoring with an injected judge, cache keys, the published results, and cases from git history.
// The Martian conversion is used only by scripts/import-martian.ts, which imports it directly.

export type { CacheKeyInput } from "./cache-key"
export { cacheKey, cacheKeyVersion, canonicalJson, hashCase, hashText } from "./cache-key"
export type { Corpus } from "./corpus"
export {
  CorpusCase,
  CorpusManifest,
  casesDirectory,
  corpusFormat,
  DiffSource,
  FileDiffSource,
  GitDiffSource,
  GoldenComment,
  manifestFile,
  PullRequestDiffSource,
} from "./corpus"
export { casesFromGit, fixPattern, type RunGit } from "./from-git"
export type { Judge, JudgePrompt, JudgeVerdict } from "./judge"
export { buildJudgePrompt, judgeTemperature, parseJudgeAnswer } from "./judge"
export type { BundledCorpus, CorpusLoad, CorpusProblem } from "./load"
export { bundledCorpora, bundledCorpusDirectory, diffFilePath, loadCorpus, readCorpusDiff } from "./load"
export {
  loadPublishedResults,
  PublishedResults,
  PublishedTable,
  PublishedTool,
  publishedResultsFile,
  publishedTable,
} from "./published"
export type { Candidate, CaseScore, JudgeFailure, Match, Metrics, RunScore, ScoredCase, ScoreOptions } from "./score"
export { failedReviewScore, metricsOf, scoreCase, scoreRun, withSeverities } from "./score"
