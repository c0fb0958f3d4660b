export * from "./chains"
export * from "./plugin"
export * from "./providers"
