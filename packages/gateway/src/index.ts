export * from "./providers"
export * from "./chains"
export * from "./plugin"
