// The GitHub VCS provider (issue 12, in progress): Actions context, request layer, publisher.
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
  GithubContextError,
  GithubCreateLandedError,
  GithubRateLimitError,
  type GithubRateLimitFailure,
  GithubRequestError,
  type GithubRequestFailure,
} from "./errors"
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
