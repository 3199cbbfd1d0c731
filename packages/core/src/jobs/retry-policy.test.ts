import { describe, expect, it } from "vitest";
import { retryBackoffMs, retryVerdict, type AttemptEnd } from "./retry-policy";
import { TerminalReason } from "./schemas";

const end = (over: Partial<AttemptEnd>): AttemptEnd => ({
  attempt: 1,
  maxAttempts: 3,
  reason: "agent_lost",
  canceling: false,
  ...over,
});
const fixed = { baseMs: 1000, capMs: 8000, random: () => 0.999999 };

describe("retryVerdict", () => {
  it("requeues the retryable reasons while attempts remain, and ends them after the last", () => {
    for (const reason of ["agent_lost", "infra_error"] as const) {
      expect(retryVerdict(end({ reason, attempt: 1 }), fixed)).toEqual({ state: "queued", backoffMs: 0 });
      expect(retryVerdict(end({ reason, attempt: 2 }), fixed).state).toBe("queued");
      expect(retryVerdict(end({ reason, attempt: 3 }), fixed)).toEqual({ state: "failed", terminalReason: reason });
    }
  });

  it("never retries the other reasons, even with attempts left", () => {
    expect(retryVerdict(end({ reason: "succeeded" }))).toEqual({ state: "succeeded", terminalReason: "succeeded" });
    expect(retryVerdict(end({ reason: "user_error" }))).toEqual({ state: "failed", terminalReason: "user_error" });
    expect(retryVerdict(end({ reason: "timeout" }))).toEqual({ state: "failed", terminalReason: "timeout" });
    expect(retryVerdict(end({ reason: "canceled" }))).toEqual({ state: "canceled", terminalReason: "canceled" });
  });

  it("ends a canceling job canceled whatever its attempt reports", () => {
    for (const reason of TerminalReason.options)
      expect(retryVerdict(end({ reason, canceling: true }))).toEqual({ state: "canceled", terminalReason: "canceled" });
  });

  it("every reason and attempt count gets exactly one of the four outcomes (no gaps in the rule)", () => {
    for (const reason of TerminalReason.options)
      for (let attempt = 1; attempt <= 4; attempt++) {
        const v = retryVerdict(end({ reason, attempt, maxAttempts: 3 }), fixed);
        expect(["queued", "succeeded", "failed", "canceled"]).toContain(v.state);
        if (v.state === "queued") expect(attempt).toBeLessThan(3);
      }
  });
});

describe("retryBackoffMs", () => {
  it("is 0 after the first attempt, then full jitter under a doubling ceiling, capped", () => {
    expect(retryBackoffMs(1, fixed)).toBe(0);
    expect(retryBackoffMs(2, fixed)).toBe(999);
    expect(retryBackoffMs(3, fixed)).toBe(1999);
    expect(retryBackoffMs(4, fixed)).toBe(3999);
    expect(retryBackoffMs(5, fixed)).toBe(7999);
    expect(retryBackoffMs(50, fixed)).toBe(7999);
    expect(retryBackoffMs(4, { ...fixed, random: () => 0 })).toBe(0);
  });

  it("spreads retries: draws with Math.random differ and stay under the ceiling", () => {
    const draws = Array.from({ length: 200 }, () => retryBackoffMs(3, { baseMs: 1000, capMs: 8000 }));
    expect(Math.max(...draws)).toBeLessThan(2000);
    expect(new Set(draws).size).toBeGreaterThan(50);
  });
});
