import { describe, expect, it } from "vitest";
import OpenAI from "openai";
import { classifyProviderError, isRetryable } from "./client";

describe("provider retry classification", () => {
  const apiError = (status: number, headers: Record<string, string> = {}) =>
    OpenAI.APIError.generate(status, { error: { message: "x" } }, "x", new Headers(headers));

  it("retries 429, 408, 5xx and connection failures, not other 4xx", () => {
    expect(isRetryable(apiError(429))).toBe(true);
    expect(isRetryable(apiError(408))).toBe(true);
    expect(isRetryable(apiError(503))).toBe(true);
    expect(isRetryable(apiError(400))).toBe(false);
    expect(isRetryable(apiError(401))).toBe(false);
    expect(isRetryable(new OpenAI.APIConnectionTimeoutError())).toBe(true);
    expect(isRetryable(new Error("other"))).toBe(false);
  });

  it("reads Retry-After (seconds, HTTP-date) and retry-after-ms on a 429", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(classifyProviderError(apiError(429, { "retry-after": "2" }), now)).toEqual({
      retry: true,
      rateLimited: true,
      retryAfterMs: 2000,
    });
    expect(classifyProviderError(apiError(429, { "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now)).toMatchObject(
      { retryAfterMs: 5000 },
    );
    expect(classifyProviderError(apiError(429, { "retry-after-ms": "150", "retry-after": "9" }), now)).toMatchObject({
      retryAfterMs: 150,
    });
    expect(classifyProviderError(apiError(503), now)).toEqual({ retry: true, rateLimited: false, retryAfterMs: null });
  });
});
