// The GitHub VCS provider (issue 12, in progress): Actions context, request layer, publisher.
export {}
