import { describe, expect, it } from "vitest";
import { scrubSecrets } from "./scrub";

describe("scrubSecrets", () => {
  const key = "my-local-proxy-key-1234";
  it("removes a known key in raw, URL- and JSON-escaped forms", () => {
    const raw = `401 {"error":"bad key ${key}","echo":"${encodeURIComponent(key + "/x")}"}`;
    const out = scrubSecrets(raw, [key + "/x", key]);
    expect(raw).toContain(key); // positive control
    expect(out).not.toContain(key);
    expect(out).not.toContain(encodeURIComponent(key));
  });
  it("removes Authorization-like headers, bearer tokens and sk-… tokens it was not told about", () => {
    const cases = [
      "401 Unauthorized: header was Authorization: Bearer abcdefghijklmnop",
      '{"headers":{"authorization":"Bearer zzzzzzzzzzzz","x-api-key":"qqqqqqqqqq"}}',
      "invalid key sk-proj-AbCdEf0123456789xyz provided",
      "got bearer eyJhbGciOiJIUzI1NiJ9.payload.sig",
      "api_key=plainvalue123 in query",
    ];
    for (const c of cases) {
      const out = scrubSecrets(c);
      for (const secret of [
        "abcdefghijklmnop",
        "zzzzzzzzzzzz",
        "qqqqqqqqqq",
        "AbCdEf0123456789xyz",
        "eyJhbGciOiJIUzI1NiJ9",
        "plainvalue123",
      ])
        expect(out).not.toContain(secret);
      expect(out).toContain("[redacted]");
    }
  });
  it("leaves ordinary error text alone", () => {
    const msg = "429 Too Many Requests: slow down (after 3 attempts)";
    expect(scrubSecrets(msg, ["abc", ""])).toBe(msg);
  });
});
