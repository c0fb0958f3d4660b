export { type Io, main } from "./main"
export { renderPlan } from "./render"
