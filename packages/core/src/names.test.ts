import { describe, expect, it } from "vitest";
import { derivedName, NAME_MAX_LENGTH } from "./names";

describe("derivedName", () => {
  it("leaves names that fit alone", () => {
    expect(derivedName("exp", ": train+dev n=4")).toBe("exp: train+dev n=4");
  });
  it("shortens the base so that a maximal user name plus its suffix still fits", () => {
    const long = "x".repeat(NAME_MAX_LENGTH);
    const name = derivedName(long, ": verified teacher data");
    expect(name.length).toBe(NAME_MAX_LENGTH);
    expect(name.endsWith("…: verified teacher data")).toBe(true);
  });
  it("never splits a surrogate pair", () => {
    const name = derivedName("😀".repeat(150), ": train+dev n=4");
    expect(name.length).toBeLessThanOrEqual(NAME_MAX_LENGTH);
    expect(name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });
});
