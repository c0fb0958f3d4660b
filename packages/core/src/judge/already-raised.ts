import type { Finding } from "../model/finding"
import { commentId, type MergeRequestComment } from "../prompt/prompt"

// Do not repeat humans: a finding the coordinator says a person's comment already raised
// (`raised_by="c3"`) is not posted again as a new thread, but only when that comment sits where the
// finding does: a comment on the diff, same file, within a few lines. It still counts for the
// decision (the problem is there either way) and the summary lists it with who raised it. A claim
// the place does not bear out is ignored and said; the finding is posted.

/** How far apart, in lines, a finding and a comment may be and still be about the same code. */
export const raisedLineWindow = 3

/** Who raised a finding before the bot, and where. */
export interface RaisedBy {
  author: string
  file: string
  line: number
}

/** The findings with only the claims that hold, who raised those (by index), and the notes. */
export interface RaisedSplit {
  kept: Finding[]
  raised: Map<number, RaisedBy>
  notes: string[]
}

export function splitAlreadyRaised(
  findings: readonly Finding[],
  comments: readonly MergeRequestComment[],
): RaisedSplit {
  const split: RaisedSplit = { kept: [], raised: new Map(), notes: [] }
  for (const finding of findings) {
    if (finding.raisedBy === undefined) {
      split.kept.push(finding)
      continue
    }
    const index = comments.findIndex((_, position) => commentId(position) === finding.raisedBy)
    const comment = index === -1 ? undefined : comments[index]
    const sameCode =
      comment?.file !== undefined &&
      comment.line !== undefined &&
      comment.file === finding.file &&
      finding.line !== null &&
      Math.abs(comment.line - finding.line) <= raisedLineWindow
    if (!comment || !sameCode) {
      split.kept.push({ ...finding, raisedBy: undefined })
      split.notes.push(
        `the coordinator said ${finding.raisedBy} already raised "${finding.title}", but ${comment ? "that comment is not on the same lines" : "no such comment exists"}; posted anyway`,
      )
      continue
    }
    split.raised.set(split.kept.length, { author: comment.author, file: comment.file!, line: comment.line! })
    split.kept.push(finding)
    split.notes.push(
      `already raised by ${comment.author} at ${comment.file}:${comment.line}: "${finding.title}" (${finding.severity}); not posted again, still counted`,
    )
  }
  return split
}
