import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { fullJitter, isRetryable } from "./client";

describe("provider retry policy", () => {
  it("draws full-jitter delays in [0, min(cap, base·2^attempt)]", () => {
    const p = { baseMs: 100, capMs: 1000 };
    expect(fullJitter(0, { ...p, random: () => 0.999 })).toBe(99);
    expect(fullJitter(3, { ...p, random: () => 0.5 })).toBe(400);
    expect(fullJitter(10, { ...p, random: () => 0.999 })).toBe(999); // capped
    expect(fullJitter(5, { ...p, random: () => 0 })).toBe(0);
  });

  it("retries 429, 408, 5xx and connection failures, not other 4xx", () => {
    const apiError = (status: number) => OpenAI.APIError.generate(status, { error: { message: "x" } }, "x", new Headers());
    expect(isRetryable(apiError(429))).toBe(true);
    expect(isRetryable(apiError(408))).toBe(true);
    expect(isRetryable(apiError(503))).toBe(true);
    expect(isRetryable(apiError(400))).toBe(false);
    expect(isRetryable(apiError(401))).toBe(false);
    expect(isRetryable(new OpenAI.APIConnectionTimeoutError())).toBe(true);
    expect(isRetryable(new Error("other"))).toBe(false);
  });
});
