// The MCP comment server: OpenCode starts it as `bun comment-server.ts` with
// OPENCODE_REVIEWER_WORK_DIR set, and the coordinator submits its final review through its one tool.
// stdout carries only the MCP protocol; everything else goes to stderr. It needs no secret: it only
// records the review in the work dir, and the CLI publishes it after the coordinator ends.
import { randomUUID } from "node:crypto"
import { access, readFile, rename, rm, writeFile } from "node:fs/promises"
import { isAbsolute, join } from "node:path"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { mergeDuplicates } from "@opencode-reviewer/core/judge/decision"
import { parsePlanFacts } from "@opencode-reviewer/core/judge/review-record"
import type { Finding } from "@opencode-reviewer/core/model/finding"
import { parseReview } from "@opencode-reviewer/core/protocol/findings-xml"
import { tools, workDirVariable, workFiles } from "@opencode-reviewer/core/protocol/names"
import { type Submission, submissionText } from "@opencode-reviewer/core/protocol/submission"
import * as z from "zod"
import packageJson from "../package.json" with { type: "json" }

/** The tool's name; OpenCode exposes it to the model as `<server>_submit_review`. */
export const submitReviewTool = tools.submitReview

export { workDirVariable }

/** What a submit_review call did: the text for the model, and the submission when it was recorded. */
export type SubmitResult =
  | { ok: true; text: string; submission: Submission; replaced: boolean }
  | { ok: false; text: string }

/** Injectable edges of the handler. */
export interface SubmitOptions {
  now?: () => Date
  log?: (line: string) => void
}

const Input = z.object({ review: z.string() })

/**
 * Handles one submit_review call: parses the `<review>` XML, merges exact duplicate findings and
 * writes `<workDir>/submission.json` atomically (temp file + rename). The last valid submission
 * wins. Bad XML is reported back in words the model can act on; nothing is written then.
 */
export async function handleSubmitReview(
  workDir: string,
  input: unknown,
  options: SubmitOptions = {},
): Promise<SubmitResult> {
  const log = options.log ?? (() => {})
  const args = Input.safeParse(input)
  if (!args.success) {
    return {
      ok: false,
      text: `${submitReviewTool} takes one string argument "review" holding the whole <review>…</review> XML; nothing was recorded`,
    }
  }
  const parsed = parseReview(args.data.review)
  if (!parsed.ok) {
    log(`submit_review rejected: ${parsed.error}`)
    return {
      ok: false,
      text: `The review was not recorded: ${parsed.error}. Fix this and call ${submitReviewTool} again with the whole <review> block.`,
    }
  }

  const findings = mergeDuplicates(parsed.review.findings)
  const submission: Submission = {
    submittedAt: (options.now ?? (() => new Date()))().toISOString(),
    review: { ...parsed.review, findings },
    rawXml: args.data.review,
  }
  const file = join(workDir, workFiles.submission)
  const replaced = await exists(file)
  try {
    await writeAtomically(file, submissionText(submission))
  } catch (error) {
    log(`submit_review could not write ${file}: ${String(error)}`)
    return {
      ok: false,
      text: `The review could not be recorded (${error instanceof Error ? error.message : String(error)}). Do not retry: end your answer with the same <review> block instead.`,
    }
  }
  log(`submit_review recorded ${findings.length} findings${replaced ? " (replacing an earlier submission)" : ""}`)

  const notes = [
    findings.length < parsed.review.findings.length
      ? `${parsed.review.findings.length - findings.length} exact duplicate(s) merged`
      : "",
    await outsideDiff(workDir, findings),
    replaced ? "this replaces your earlier submission; the last valid one counts, so do not submit again" : "",
  ].filter(Boolean)
  const text = `review recorded: ${describeFindings(findings)}${notes.length > 0 ? `. Note: ${notes.join("; ")}` : ""}. You are done; stop here.`
  return { ok: true, text, submission, replaced }
}

/** The MCP server with the one `submit_review` tool, writing into `workDir`. */
export function createCommentServer(workDir: string, options: SubmitOptions = {}): McpServer {
  const server = new McpServer({ name: "opencode-reviewer-comments", version: packageJson.version })
  server.registerTool(
    submitReviewTool,
    {
      description:
        "Submit the final review, once. One argument `review`: <review><summary>two or three sentences</summary><findings>…</findings><answer>optional</answer></review>. " +
        "The decision is computed from the findings by code. If the XML is rejected, fix it as the error says and call again.",
      inputSchema: { review: z.string().describe("The whole <review>…</review> XML block") },
    },
    async (input) => {
      // Answered at once, so OpenCode prints the submit step's step_finish (its tokens); the runtime
      // plugin holds the closing turn that would follow, and the CLI ends the run on that step_finish.
      const result = await handleSubmitReview(workDir, input, options)
      return { content: [{ type: "text" as const, text: result.text }], isError: !result.ok }
    },
  )
  return server
}

/** Starts the server on stdio; the work dir comes from the environment. Resolves once connected. */
export async function startCommentServer(env: Record<string, string | undefined>): Promise<McpServer> {
  const log = (line: string) => process.stderr.write(`comment-server: ${line}\n`)
  const workDir = env[workDirVariable]
  if (!workDir || !isAbsolute(workDir)) {
    throw new Error(`${workDirVariable} must be set to the absolute work dir (got ${JSON.stringify(workDir ?? null)})`)
  }
  const server = createCommentServer(workDir, { log })
  const transport = new StdioServerTransport()
  transport.onclose = () => process.exit(0)
  await server.connect(transport)
  process.stdin.on("end", () => void server.close())
  log(`ready, writing to ${join(workDir, workFiles.submission)}`)
  return server
}

function describeFindings(findings: readonly Finding[]): string {
  if (findings.length === 0) return "no findings"
  const counts = (["critical", "warning", "suggestion"] as const)
    .map((severity) => [severity, findings.filter((finding) => finding.severity === severity).length] as const)
    .filter(([, count]) => count > 0)
    .map(([severity, count]) => `${count} ${severity}`)
  return `${findings.length} finding${findings.length === 1 ? "" : "s"} (${counts.join(", ")})`
}

// A finding may cite context outside the diff; it is kept, but the model hears about it in case the
// path is a typo.
async function outsideDiff(workDir: string, findings: readonly Finding[]): Promise<string> {
  const text = await readFile(join(workDir, workFiles.plan), "utf8").catch(() => null)
  if (text === null) return ""
  const plan = parsePlanFacts(text)
  if (!plan.ok) return ""
  const paths = new Set(plan.value.files.map((file) => file.path))
  const outside = [...new Set(findings.filter((finding) => !paths.has(finding.file)).map((finding) => finding.file))]
  if (outside.length === 0) return ""
  return `${outside.join(", ")} ${outside.length === 1 ? "is" : "are"} not part of the change (kept as cited)`
}

async function writeAtomically(file: string, content: string): Promise<void> {
  const temporary = `${file}.${process.pid}.${randomUUID()}.tmp`
  try {
    await writeFile(temporary, content)
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  )
}

if (import.meta.main) {
  startCommentServer(process.env).catch((error: unknown) => {
    process.stderr.write(`comment-server: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
