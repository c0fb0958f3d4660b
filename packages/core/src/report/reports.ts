import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { categorySlug, findingFingerprints, reportPath } from "../judge/fingerprints"
import type { ReviewFinding, ReviewRecord } from "../judge/review-record"
import type { Severity } from "../model/finding"
import { removeInvisible } from "../model/text"

/** Severities of GitLab's Code Quality format (docs/gitlab.md#code-quality-report). */
export type CodeQualitySeverity = "info" | "minor" | "major" | "critical" | "blocker"

/** One entry of `gl-code-quality-report.json`: exactly the fields GitLab reads (docs/gitlab.md#code-quality-report). */
export interface CodeQualityIssue {
  description: string
  check_name: string
  fingerprint: string
  severity: CodeQualitySeverity
  location: { path: string; lines: { begin: number } }
}

/**
 * Our severity in Code Quality terms. `blocker` and `info` are unused: a critical finding is
 * exploitable or an outage (GitLab's "critical"), and a suggestion is still worth a look ("minor").
 */
export const codeQualitySeverity: Readonly<Record<Severity, CodeQualitySeverity>> = {
  critical: "critical",
  warning: "major",
  suggestion: "minor",
}

/** SARIF result level of each severity. */
export const sarifLevel: Readonly<Record<Severity, "error" | "warning" | "note">> = {
  critical: "error",
  warning: "warning",
  suggestion: "note",
}

/** What `sarifReport` needs besides the record. */
export interface SarifOptions {
  toolVersion: string
  informationUri?: string
}

/** A SARIF 2.1.0 log with the one run `sarifReport` writes. */
export interface SarifLog {
  $schema: string
  version: "2.1.0"
  runs: [SarifRun]
}

/** The run of a SARIF log: our tool, a rule per finding category, and the findings. */
export interface SarifRun {
  tool: {
    driver: {
      name: string
      version: string
      semanticVersion?: string
      informationUri?: string
      rules: { id: string; name: string; shortDescription: { text: string } }[]
    }
  }
  results: SarifResult[]
}

/** One finding in SARIF. */
export interface SarifResult {
  ruleId: string
  ruleIndex: number
  level: "error" | "warning" | "note"
  message: { text: string }
  locations: {
    physicalLocation: {
      artifactLocation: { uri: string; uriBaseId: string }
      region?: { startLine: number }
    }
  }[]
  partialFingerprints: Record<string, string>
  baselineState: "new" | "unchanged"
  properties: { findingId: string; reviewer: string; severity: Severity }
}

/** Where `writeReports` put the two files. */
export interface ReportPaths {
  codeQuality: string
  sarif: string
}

/** File names beside review.json. */
export const reportFiles = { codeQuality: "gl-code-quality-report.json", sarif: "review.sarif" } as const

/** The key of our fingerprint in SARIF `partialFingerprints`. */
export const sarifFingerprintKey = "opencodeReviewer/v1"

/** GitLab Code Quality entries for the record's findings, in the record's order. */
export function codeQualityReport(record: ReviewRecord): CodeQualityIssue[] {
  const fingerprints = findingFingerprints(record.findings)
  return record.findings.map((finding, index) => ({
    description: describeFinding(finding),
    check_name: `opencode-reviewer/${categorySlug(finding.category)}`,
    fingerprint: fingerprints[index] ?? "",
    severity: codeQualitySeverity[finding.severity],
    location: { path: reportPath(finding.file), lines: { begin: finding.line ?? 1 } },
  }))
}

/** A SARIF 2.1.0 log of the record's findings: one run, one rule per category, results in the record's order. */
export function sarifReport(record: ReviewRecord, options: SarifOptions): SarifLog {
  const fingerprints = findingFingerprints(record.findings)
  const ruleIds = [...new Set(record.findings.map((finding) => categorySlug(finding.category)))].sort()
  const rules = ruleIds.map((id) => ({
    id,
    name: id.replace(/(^|-)([a-z0-9])/g, (_match, _dash: string, letter: string) => letter.toUpperCase()),
    shortDescription: { text: `${id} findings of the opencode-reviewer agents` },
  }))
  const results = record.findings.map((finding, index): SarifResult => {
    const ruleId = categorySlug(finding.category)
    const title = removeInvisible(finding.title).trim()
    const body = removeInvisible(finding.body).trim()
    return {
      ruleId,
      ruleIndex: ruleIds.indexOf(ruleId),
      level: sarifLevel[finding.severity],
      message: { text: body ? `${title}\n\n${body}` : title },
      locations: [
        {
          physicalLocation: {
            artifactLocation: {
              uri: reportPath(finding.file).split("/").map(encodeURIComponent).join("/"),
              uriBaseId: "%SRCROOT%",
            },
            ...(finding.line === null ? {} : { region: { startLine: finding.line } }),
          },
        },
      ],
      partialFingerprints: { [sarifFingerprintKey]: fingerprints[index] ?? "" },
      baselineState: finding.status === "persisting" ? "unchanged" : "new",
      properties: { findingId: finding.id, reviewer: finding.reviewer, severity: finding.severity },
    }
  })
  const semanticVersion = /^\d+\.\d+\.\d+(?:[-+].*)?$/.test(options.toolVersion)
    ? { semanticVersion: options.toolVersion }
    : {}
  const driver = {
    name: "opencode-reviewer",
    version: options.toolVersion,
    ...semanticVersion,
    ...(options.informationUri ? { informationUri: options.informationUri } : {}),
    rules,
  }
  return { $schema: sarifSchema, version: "2.1.0", runs: [{ tool: { driver }, results }] }
}

/**
 * Writes `gl-code-quality-report.json` (a JSON array, UTF-8 without BOM) and `review.sarif` into
 * `dir`, the directory of review.json, creating it if needed; returns both paths.
 */
export async function writeReports(dir: string, record: ReviewRecord, options: SarifOptions): Promise<ReportPaths> {
  const paths = { codeQuality: join(dir, reportFiles.codeQuality), sarif: join(dir, reportFiles.sarif) }
  await mkdir(dir, { recursive: true })
  await writeFile(paths.codeQuality, `${JSON.stringify(codeQualityReport(record), null, 2)}\n`, "utf8")
  await writeFile(paths.sarif, `${JSON.stringify(sarifReport(record, options), null, 2)}\n`, "utf8")
  return paths
}

const sarifSchema = "https://json.schemastore.org/sarif-2.1.0.json"
const descriptionLimit = 500

// One line of plain text: title, then the body without code fences, cut at 500 characters.
function describeFinding(finding: ReviewFinding): string {
  const title = flatten(finding.title)
  const body = flatten(finding.body.replace(/^[ \t]*(?:`{3,}|~{3,}).*$/gm, " "))
  const text = body ? `${title} — ${body}` : title
  const characters = [...text]
  return characters.length <= descriptionLimit
    ? text
    : `${characters
        .slice(0, descriptionLimit - 1)
        .join("")
        .trimEnd()}…`
}

function flatten(text: string): string {
  return removeInvisible(text).replace(/\s+/g, " ").trim()
}
