import { describe, expect, it } from "vitest";
import { isDomainError } from "@agentlab/core";
import { createLoginLimiter, createRateLimiter } from "./rate-limit";

describe("token bucket", () => {
  it("allows a burst, then refills over time", () => {
    const rl = createRateLimiter({ capacity: 3, refillPerS: 1 });
    const t0 = 1_000_000;
    expect([rl.take("a", t0), rl.take("a", t0), rl.take("a", t0)]).toEqual([0, 0, 0]);
    expect(rl.take("a", t0)).toBe(1);
    expect(rl.take("b", t0)).toBe(0); // keys are independent
    expect(rl.take("a", t0 + 1000)).toBe(0);
    expect(rl.take("a", t0 + 1000)).toBeGreaterThan(0);
  });

  it("bounds memory by dropping full buckets when the key limit is reached", () => {
    const rl = createRateLimiter({ capacity: 2, refillPerS: 1 }, 10);
    for (let i = 0; i < 10; i++) rl.take(`k${i}`, 0);
    rl.take("new", 60_000);
    expect(rl.size()).toBe(1);
  });
});

describe("login limiter", () => {
  const err = (fn: () => void) => {
    try {
      fn();
      return null;
    } catch (e) {
      return isDomainError(e) ? e.code : "other";
    }
  };

  it("limits one account across many IPs and one IP across many accounts", () => {
    const l = createLoginLimiter({ capacity: 3, refillPerS: 0.001 }, { capacity: 2, refillPerS: 0.001 });
    expect(err(() => l.check("1.1.1.1", "Ann@x.io"))).toBeNull();
    expect(err(() => l.check("2.2.2.2", "ann@x.io"))).toBeNull();
    expect(err(() => l.check("3.3.3.3", "ANN@x.io"))).toBe("TOO_MANY_REQUESTS");
    expect(err(() => l.check("9.9.9.9", "b@x.io"))).toBeNull();
    expect(err(() => l.check("9.9.9.9", "c@x.io"))).toBeNull();
    expect(err(() => l.check("9.9.9.9", "d@x.io"))).toBeNull();
    expect(err(() => l.check("9.9.9.9", "e@x.io"))).toBe("TOO_MANY_REQUESTS");
  });

  it("a successful sign-in clears the account's bucket", () => {
    const l = createLoginLimiter({ capacity: 100, refillPerS: 0.001 }, { capacity: 1, refillPerS: 0.001 });
    l.check("1.1.1.1", "a@x.io");
    l.succeeded("a@x.io", "1.1.1.1");
    expect(err(() => l.check("1.1.1.1", "a@x.io"))).toBeNull();
  });

  it("an IP pays only for failed attempts: successes refund its token", () => {
    const l = createLoginLimiter({ capacity: 2, refillPerS: 0.001 }, { capacity: 100, refillPerS: 0.001 });
    for (let i = 0; i < 5; i++) {
      expect(err(() => l.check("7.7.7.7", `user${i}@x.io`))).toBeNull();
      l.succeeded(`user${i}@x.io`, "7.7.7.7");
    }
    l.check("7.7.7.7", "x@x.io");
    l.check("7.7.7.7", "y@x.io");
    expect(err(() => l.check("7.7.7.7", "z@x.io"))).toBe("TOO_MANY_REQUESTS");
  });
});
