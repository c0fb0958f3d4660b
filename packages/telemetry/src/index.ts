// The telemetry package's public surface: a fire-and-forget tracker client and Prometheus metrics.
// The CLI creates both around a review, tracks events as it goes and flushes both just before exit.
export * from "./events"
export * from "./metrics"
export * from "./tracker"
