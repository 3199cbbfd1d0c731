import { describe, expect, it } from "vitest";
import { hashPassword, needsRehash, parsePasswordHash, verifyPassword } from "./password";

describe("scrypt password hashes", () => {
  it("verifies the right password and refuses a wrong one", async () => {
    const stored = await hashPassword("correct horse battery");
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
  });

  it("salts every hash", async () => {
    const [a, b] = await Promise.all([hashPassword("same password"), hashPassword("same password")]);
    expect(a).not.toBe(b);
  });

  it("keeps the parameters with the hash and flags weaker ones for re-hashing", async () => {
    const weak = await hashPassword("old password!", { N: 2 ** 10, r: 8, p: 1 });
    expect(parsePasswordHash(weak)?.params).toEqual({ N: 1024, r: 8, p: 1 });
    expect(await verifyPassword("old password!", weak)).toBe(true);
    expect(needsRehash(weak)).toBe(true);
    expect(needsRehash(await hashPassword("new password!"))).toBe(false);
  });

  it("never verifies against a malformed or hostile stored value", async () => {
    for (const bad of [
      "",
      "plain",
      "scrypt$0$8$1$c2FsdA$a2V5",
      "scrypt$1073741824$8$1$c2FsdA$a2V5",
      "scrypt$1000$8$1$c2FsdA$a2V5",
      "bcrypt$x",
    ]) {
      expect(await verifyPassword("anything", bad)).toBe(false);
    }
  });
});
