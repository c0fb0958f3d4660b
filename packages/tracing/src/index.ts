export * from "./attributes"
export * from "./pass-through"
export * from "./tracing"
