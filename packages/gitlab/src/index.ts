export type { UnreviewedFile } from "./api-diff"
export { type CiContext, type Environment, isMergeRequestPipeline, readCiContext } from "./ci-context"
export { GitlabAuthError, GitlabContextError, GitlabRequestError, GitlabResponseError } from "./errors"
export {
  type BreakGlass,
  createGitlabProvider,
  type GitlabChange,
  type GitlabProvider,
  type GitlabProviderOptions,
} from "./gitlab-provider"
export type { ApprovalOutcome, PublishResult, ThreadRef } from "./publisher"
export {
  createRequester,
  type GitlabRequest,
  type GitlabRequester,
  type GitlabResponse,
  type RequesterOptions,
} from "./requester"
