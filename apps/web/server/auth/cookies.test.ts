import { describe, expect, it } from "vitest";
import { isSecureRequest, serializeCookie } from "./cookies";

describe("cookies", () => {
  it("sets HttpOnly, SameSite=Lax and Secure as asked", () => {
    expect(serializeCookie("agentlab_session", "ses_abc", { httpOnly: true, maxAgeS: 60, secure: true })).toBe(
      "agentlab_session=ses_abc; Path=/; Max-Age=60; SameSite=Lax; HttpOnly; Secure",
    );
    expect(serializeCookie("agentlab_csrf", "x", { httpOnly: false, maxAgeS: 60, secure: false })).toBe(
      "agentlab_csrf=x; Path=/; Max-Age=60; SameSite=Lax",
    );
  });

  it("expires a cleared cookie and refuses header injection", () => {
    expect(serializeCookie("a", "", { httpOnly: true, maxAgeS: 0, secure: false })).toContain(
      "Max-Age=0; SameSite=Lax; Expires=Thu, 01 Jan 1970",
    );
    expect(() => serializeCookie("a", "x\r\nSet-Cookie: b=1", { httpOnly: true, maxAgeS: 1, secure: false })).toThrow();
    expect(() => serializeCookie("a", "x; Domain=evil", { httpOnly: true, maxAgeS: 1, secure: false })).toThrow();
  });

  it("is Secure over TLS or when the public URL is https", () => {
    expect(isSecureRequest(true, undefined)).toBe(true);
    expect(isSecureRequest(false, "https://lab.example.com")).toBe(true);
    expect(isSecureRequest(false, "http://localhost:3000")).toBe(false);
    expect(isSecureRequest(false, undefined)).toBe(false);
  });
});
