import { describe, expect, it } from "vitest";
import {
  DEFAULT_RETRY_POLICY,
  RetryGaveUp,
  parseRetryAfter,
  withRetry,
  type RetryDecision,
  type RetryPolicy,
} from "./retry";

const NOW = Date.parse("2026-01-01T00:00:00Z");

describe("parseRetryAfter", () => {
  it("reads delta-seconds and HTTP-dates", () => {
    expect(parseRetryAfter("3", NOW)).toBe(3000);
    expect(parseRetryAfter("0.5", NOW)).toBe(500);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", NOW)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 23:00:00 GMT", NOW)).toBe(0);
    for (const bad of [undefined, null, "", "soon", "-1"]) expect(parseRetryAfter(bad, NOW)).toBeNull();
  });
});

class Http extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterMs: number | null = null,
  ) {
    super(`status ${status}`);
  }
}
const classify = (e: unknown): RetryDecision =>
  e instanceof Http && (e.status === 429 || e.status >= 500)
    ? { retry: true, rateLimited: e.status === 429, retryAfterMs: e.retryAfterMs }
    : { retry: false };

function harness(policy: Partial<RetryPolicy> = {}) {
  let clock = NOW;
  const waits: number[] = [];
  const p: RetryPolicy = {
    ...DEFAULT_RETRY_POLICY,
    random: () => 0.5,
    now: () => clock,
    sleep: async (ms) => void (waits.push(ms), (clock += ms)),
    ...policy,
  };
  return { p, waits };
}

describe("withRetry", () => {
  it("waits at least Retry-After and does not spend the failure budget on 429s", async () => {
    const { p, waits } = harness({ maxAttempts: 1 });
    const answers = [new Http(429, 2000), new Http(429, 1000), new Http(429, null)];
    const out = await withRetry(
      async () => {
        const a = answers.shift();
        if (a) throw a;
        return "ok";
      },
      { policy: p, classify },
    );
    expect(out).toEqual({ value: "ok", attempts: 4, rateLimited: 3 });
    expect(waits[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[2]).toBeLessThanOrEqual(p.capMs);
  });

  it("uses full jitter within the cap, and stops after maxAttempts failures", async () => {
    const { p, waits } = harness({ maxAttempts: 4, baseMs: 100, capMs: 250 });
    await expect(withRetry(async () => Promise.reject(new Http(503)), { policy: p, classify })).rejects.toBeInstanceOf(
      RetryGaveUp,
    );
    expect(waits).toEqual([50, 100, 125]);
  });

  it("gives up instead of coming early when Retry-After is over the cap or the deadline", async () => {
    const capped = harness({ retryAfterCapMs: 5000 });
    await expect(
      withRetry(async () => Promise.reject(new Http(429, 60_000)), { policy: capped.p, classify }),
    ).rejects.toThrow(/over the 5 s cap/);
    expect(capped.waits).toEqual([]);
    const late = harness({ deadlineMs: 10_000 });
    await expect(
      withRetry(async () => Promise.reject(new Http(429, 4000)), { policy: late.p, classify }),
    ).rejects.toThrow(/deadline/);
    expect(late.waits.length).toBe(2);
  });

  it("does not retry what the classifier refuses", async () => {
    const { p } = harness();
    let calls = 0;
    await expect(
      withRetry(async () => (calls++, Promise.reject(new Http(401))), { policy: p, classify }),
    ).rejects.toThrow(/not retryable/);
    expect(calls).toBe(1);
  });
});
