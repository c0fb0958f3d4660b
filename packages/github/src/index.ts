// The GitHub VCS provider: Actions context, request layer, reading the pull request, publishing to it.

export type { BotIdentity } from "./bot"
export {
  type Environment,
  explicitTokenVariable,
  type GithubActor,
  type GithubCommentEvent,
  type GithubContext,
  type GithubEventName,
  type GithubPullRequestEvent,
  type GithubPullRequestSide,
  graphqlUrlFor,
  isBot,
  isForkPullRequest,
  isGithubActionsPullRequest,
  type ReadFile,
  readGithubContext,
  supportedGithubEvents,
} from "./context"
export {
  GithubAccessError,
  GithubContextError,
  GithubCreateLandedError,
  GithubRateLimitError,
  type GithubRateLimitFailure,
  GithubRequestError,
  type GithubRequestFailure,
} from "./errors"
export {
  createGithubProvider,
  type GithubProvider,
  type GithubProviderOptions,
} from "./github-provider"
export {
  anchorComment,
  type CommentAnchor,
  type GithubDecisionOutcome,
  type GithubPublishResult,
} from "./publisher"
export {
  createGithubClients,
  createGithubFetch,
  type GithubClients,
  type GithubFetch,
  type GithubFetchOptions,
  type GithubLandedRequest,
  graphqlOperation,
  unwrapRequestError,
} from "./requester"
