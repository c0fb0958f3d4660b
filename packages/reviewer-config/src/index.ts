export * from "./apply"
export * from "./document"
export * from "./fetch"
export * from "./reviewer-config"
