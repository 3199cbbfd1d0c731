import { describe, expect, it } from "vitest";
import { safeNext } from "./safe-next";

describe("safeNext", () => {
  it("keeps local paths and refuses anything that leaves the site", () => {
    expect(safeNext("/jobs?state=running")).toBe("/jobs?state=running");
    for (const bad of [null, "", "https://evil.example", "//evil.example", "/\\evil.example", "javascript:alert(1)"]) expect(safeNext(bad)).toBe("/");
  });
});
