import { readFile } from "node:fs/promises"
import { join } from "node:path"
import * as z from "zod"

/** The file, in a corpus directory, that holds other tools' published scores on that corpus. */
export const publishedResultsFile = "published-results.json"

/** One tool's published score, percentages as published (one decimal), with the counts behind them. */
export const PublishedTool = z.object({
  tool: z.string().min(1).describe("The tool's key in the source data, e.g. `augment`."),
  name: z.string().min(1).describe("The tool's display name, e.g. `Augment`."),
  precision: z.number().min(0).max(100),
  recall: z.number().min(0).max(100),
  f1: z.number().min(0).max(100),
  tp: z.number().int().nonnegative(),
  fp: z.number().int().nonnegative(),
  fn: z.number().int().nonnegative(),
  reviews: z.number().int().nonnegative().describe("Cases the tool was scored on."),
})
export type PublishedTool = z.infer<typeof PublishedTool>

/** The scores as judged by one judge model, best F1 first. */
export const PublishedTable = z.object({
  judgeModel: z.string().min(1),
  tools: z.array(PublishedTool),
})
export type PublishedTable = z.infer<typeof PublishedTable>

/** `published-results.json`: the tables a corpus's publisher reported, the headline one first. */
export const PublishedResults = z.object({
  source: z.string().min(1).describe("Where the numbers come from (repository, file, commit)."),
  defaultJudgeModel: z.string().min(1).describe("The judge model of the headline table."),
  tables: z.array(PublishedTable).min(1),
})
export type PublishedResults = z.infer<typeof PublishedResults>

/** The published results of a corpus, or null when it has none or the file is invalid. */
export async function loadPublishedResults(corpusDirectory: string): Promise<PublishedResults | null> {
  const text = await readFile(join(corpusDirectory, publishedResultsFile), "utf8").catch(() => null)
  if (text === null) return null
  try {
    const parsed = PublishedResults.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : null
  } catch {
    return null
  }
}

/** The table judged by `judgeModel`, else the headline one. */
export function publishedTable(results: PublishedResults, judgeModel?: string): PublishedTable {
  const chosen = judgeModel ?? results.defaultJudgeModel
  return results.tables.find((table) => table.judgeModel === chosen) ?? results.tables[0]!
}
