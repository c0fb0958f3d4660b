import * as z from "zod"

/** How bad a finding is: outage/exploitable, concrete risk, or worth considering. */
export const Severity = z.enum(["critical", "warning", "suggestion"])
export type Severity = z.infer<typeof Severity>

/** The review's verdict, ordered from most to least favourable. */
export const Decision = z.enum(["approved", "approved_with_comments", "minor_issues", "significant_concerns"])
export type Decision = z.infer<typeof Decision>


export * as Finding from "./finding"
