export { main, type Io } from "./main"
export { renderPlan } from "./render"
