export * from "./document"
export * from "./fetch"
export * from "./apply"
export * from "./reviewer-config"
