export {
  createGitlabProvider,
  type BreakGlass,
  type GitlabChange,
  type GitlabProvider,
  type GitlabProviderOptions,
} from "./gitlab-provider"
export { describePublishResult, type ApprovalOutcome, type PublishResult, type ThreadRef } from "./publisher"
export { isMergeRequestPipeline, readCiContext, type CiContext, type Environment } from "./ci-context"
export { GitlabAuthError, GitlabContextError, GitlabRequestError, GitlabResponseError } from "./errors"
export {
  createRequester,
  type GitlabRequest,
  type GitlabRequester,
  type GitlabResponse,
  type RequesterOptions,
} from "./requester"
export type { UnreviewedFile } from "./api-diff"
