import { describe, expect, it } from "vitest";
import { clientIp, parseTrustedProxies } from "./client-ip";

describe("client address behind proxies", () => {
  const proxies = parseTrustedProxies("10.0.0.0/8, 127.0.0.1, fd00::/8");

  it("ignores X-Forwarded-For when no proxy is trusted (the default)", () => {
    expect(clientIp("127.0.0.1", "203.0.113.9", null)).toBe("127.0.0.1");
    expect(clientIp("::ffff:127.0.0.1", undefined, null)).toBe("127.0.0.1");
  });

  it("ignores it from a peer that is not a trusted proxy (a client sending the header itself)", () => {
    expect(clientIp("198.51.100.7", "203.0.113.9", proxies)).toBe("198.51.100.7");
  });

  it("from a trusted proxy: the first untrusted address from the right, not what the client prepended", () => {
    expect(clientIp("10.1.2.3", "203.0.113.9", proxies)).toBe("203.0.113.9");
    // The client sent "1.1.1.1" itself; our proxy appended the real address, then a second proxy hop.
    expect(clientIp("::ffff:10.1.2.3", "1.1.1.1, 203.0.113.9, 10.9.9.9", proxies)).toBe("203.0.113.9");
    expect(clientIp("127.0.0.1", ["1.1.1.1", "203.0.113.9"], proxies)).toBe("203.0.113.9");
    expect(clientIp("fd00::1", "2001:db8::5", proxies)).toBe("2001:db8::5");
  });

  it("stops at a malformed entry and when every hop is a proxy", () => {
    expect(clientIp("10.1.2.3", "203.0.113.9, garbage", proxies)).toBe("10.1.2.3");
    expect(clientIp("10.1.2.3", "garbage, 10.4.4.4", proxies)).toBe("10.4.4.4");
    expect(clientIp("10.1.2.3", "10.5.5.5, 10.4.4.4", proxies)).toBe("10.5.5.5");
  });

  it("refuses a setting that is neither an address nor a CIDR range, naming the entry", () => {
    expect(() => parseTrustedProxies("10.0.0.0/8, localhost")).toThrow(/AGENTLAB_TRUSTED_PROXIES: "localhost"/);
    expect(() => parseTrustedProxies("10.0.0.0/33")).toThrow(/10\.0\.0\.0\/33/);
    expect(parseTrustedProxies(" , ")).toBeNull();
  });
});
