import { describe, expect, test } from "vitest"
import { type BreakerEvent, createBreakers, selectModel } from "./breaker"

const setup = (failures = 3, cooldownMs = 120_000) => {
  let now = 0
  const events: BreakerEvent[] = []
  const breakers = createBreakers({ failures, cooldownMs, now: () => now }, (event) => events.push(event))
  return { breakers, events, advance: (ms: number) => void (now += ms) }
}

describe("circuit breakers", () => {
  test("opens the breaker after three consecutive retryable failures", () => {
    const { breakers, events } = setup()
    for (let i = 0; i < 2; i += 1) {
      expect(breakers.acquire("a/m")).toBe(true)
      breakers.fail("a/m")
    }
    expect(breakers.state("a/m")).toBe("closed")
    expect(breakers.acquire("a/m")).toBe(true)
    breakers.fail("a/m")
    expect(breakers.state("a/m")).toBe("open")
    expect(breakers.acquire("a/m")).toBe(false)
    expect(events).toEqual([{ type: "breaker-open", model: "a/m", failures: 3 }])
  })

  test("counts only consecutive failures: a success resets the count", () => {
    const { breakers } = setup()
    breakers.fail("a/m")
    breakers.fail("a/m")
    breakers.succeed("a/m")
    breakers.fail("a/m")
    breakers.fail("a/m")
    expect(breakers.state("a/m")).toBe("closed")
  })

  test("keeps breakers per model", () => {
    const { breakers } = setup(1)
    breakers.fail("a/m")
    expect(breakers.state("a/m")).toBe("open")
    expect(breakers.state("a/other")).toBe("closed")
    expect(breakers.acquire("a/other")).toBe(true)
  })

  test("lets exactly one probe through after the cooldown", () => {
    const { breakers, advance, events } = setup(1, 120_000)
    breakers.fail("a/m")
    advance(119_999)
    expect(breakers.acquire("a/m")).toBe(false)
    advance(1)
    expect(breakers.state("a/m")).toBe("half-open")
    expect(breakers.acquire("a/m")).toBe(true)
    expect(breakers.acquire("a/m")).toBe(false)
    expect(breakers.acquire("a/m")).toBe(false)
    expect(events.map((event) => event.type)).toEqual(["breaker-open", "breaker-probe"])
  })

  test("closes on a successful probe", () => {
    const { breakers, advance, events } = setup(1, 1_000)
    breakers.fail("a/m")
    advance(1_000)
    expect(breakers.acquire("a/m")).toBe(true)
    breakers.succeed("a/m")
    expect(breakers.state("a/m")).toBe("closed")
    expect(breakers.acquire("a/m")).toBe(true)
    expect(breakers.acquire("a/m")).toBe(true)
    expect(events.at(-1)).toEqual({ type: "breaker-close", model: "a/m" })
  })

  test("re-opens on a failed probe, for a whole new cooldown", () => {
    const { breakers, advance } = setup(3, 1_000)
    for (let i = 0; i < 3; i += 1) breakers.fail("a/m")
    advance(1_000)
    expect(breakers.acquire("a/m")).toBe(true)
    breakers.fail("a/m")
    expect(breakers.state("a/m")).toBe("open")
    advance(999)
    expect(breakers.acquire("a/m")).toBe(false)
    advance(1)
    expect(breakers.acquire("a/m")).toBe(true)
  })

  test("frees the probe slot on an inconclusive outcome", () => {
    const { breakers, advance } = setup(1, 1_000)
    breakers.fail("a/m")
    advance(1_000)
    expect(breakers.acquire("a/m")).toBe(true)
    breakers.release("a/m")
    expect(breakers.state("a/m")).toBe("half-open")
    expect(breakers.acquire("a/m")).toBe(true)
  })

  test("does not extend the cooldown for failures of calls that started before it opened", () => {
    const { breakers, advance } = setup(1, 1_000)
    breakers.fail("a/m")
    advance(600)
    breakers.fail("a/m")
    advance(400)
    expect(breakers.state("a/m")).toBe("half-open")
  })
})

describe("selectModel", () => {
  test("takes the primary when its circuit is closed", () => {
    const { breakers } = setup()
    expect(selectModel(["a/one", "a/two"], breakers)).toEqual({ model: "a/one", skipped: [] })
  })

  test("skips a model whose circuit is open for the next in the reviewer's own chain", () => {
    const { breakers } = setup(1)
    breakers.fail("a/one")
    expect(selectModel(["a/one", "a/two"], breakers)).toEqual({ model: "a/two", skipped: ["a/one"] })
  })

  test("skips models already tried in this call", () => {
    const { breakers } = setup()
    expect(selectModel(["a/one", "a/two"], breakers, new Set(["a/one"]))).toEqual({ model: "a/two", skipped: [] })
  })

  test("gives nothing when every model of the chain is open, never a model from outside it", () => {
    const { breakers } = setup(1)
    breakers.fail("a/one")
    breakers.fail("a/two")
    expect(breakers.acquire("b/other")).toBe(true)
    expect(selectModel(["a/one", "a/two"], breakers)).toEqual({ model: null, skipped: ["a/one", "a/two"] })
  })

  test("hands a half-open model to one reviewer only; the next goes down its chain", () => {
    const { breakers, advance } = setup(1, 1_000)
    breakers.fail("a/one")
    advance(1_000)
    expect(selectModel(["a/one", "a/two"], breakers).model).toBe("a/one")
    expect(selectModel(["a/one", "a/two"], breakers)).toEqual({ model: "a/two", skipped: ["a/one"] })
  })
})
