import * as z from "zod"
import { Review } from "./findings-xml"
import { workFiles } from "./names"
import { type ProtocolRead, parseProtocolJson } from "./plan-file"

/** `<workDir>/submission.json`, written by the comment server when `submit_review` succeeds. */
export const Submission = z.object({
  submittedAt: z.string(),
  review: Review,
  rawXml: z.string(),
})
export type Submission = z.infer<typeof Submission>

/** The submission.json bytes; throws on a malformed submission (a bug of ours). */
export function submissionText(submission: Submission): string {
  return JSON.stringify(Submission.parse(submission), null, 2) + "\n"
}

/** Reads submission.json text; never throws. */
export function parseSubmission(text: string): ProtocolRead<Submission> {
  return parseProtocolJson(text, Submission, workFiles.submission)
}
