/**
 * Span attribute names. Model steps follow the OpenTelemetry GenAI conventions (`gen_ai.*`); what
 * those conventions have no name for (cost, reviewer outcome, the review's verdict) lives under
 * `opencode_reviewer.*`.
 */
export const Attr = {
  operation: "gen_ai.operation.name",
  provider: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  agent: "gen_ai.agent.name",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningTokens: "opencode_reviewer.usage.reasoning_tokens",
  costUsd: "opencode_reviewer.cost_usd",
  step: "opencode_reviewer.step",
  reviewer: "opencode_reviewer.reviewer.name",
  reviewerStatus: "opencode_reviewer.reviewer.status",
  reviewerError: "opencode_reviewer.reviewer.error",
  reviewerFindings: "opencode_reviewer.reviewer.findings",
  reviewerDurationMs: "opencode_reviewer.reviewer.duration_ms",
  decision: "opencode_reviewer.review.decision",
  tier: "opencode_reviewer.review.tier",
  findings: "opencode_reviewer.review.findings",
  failedReviewers: "opencode_reviewer.review.failed_reviewers",
  reviewCostUsd: "opencode_reviewer.review.cost_usd",
  reviewDurationMs: "opencode_reviewer.review.duration_ms",
  steps: "opencode_reviewer.review.steps",
  coordinatorOk: "opencode_reviewer.coordinator.ok",
  /** "approximate" on spans whose start and end are reconstructed after the fact. */
  timing: "opencode_reviewer.timing",
} as const
