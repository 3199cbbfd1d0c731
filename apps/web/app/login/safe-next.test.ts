import { describe, expect, it } from "vitest";
import { safeNext } from "./safe-next";

describe("safeNext", () => {
  it("keeps local paths with their query and fragment", () => {
    expect(safeNext("/jobs?state=running")).toBe("/jobs?state=running");
    expect(safeNext("/experiments/abc#report")).toBe("/experiments/abc#report");
    expect(safeNext("/a/../b")).toBe("/b");
  });

  it("refuses everything that leaves the site, including what browsers rewrite", () => {
    const bad = [
      null,
      undefined,
      "",
      "https://evil.example",
      "//evil.example",
      "/\\evil.example",
      "\\\\evil.example",
      "javascript:alert(1)",
      "/\t/evil.example",
      "/\n/evil.example",
      "/\r\n/evil.example",
      "/\r/evil.example",
      "\t//evil.example",
      "/\u0000/evil.example",
      "/\u007f/evil.example",
      " //evil.example",
      "http:/evil.example",
      "/.//evil.example/..",
      "///evil.example",
      "/\\/evil.example",
    ];
    // Positive control: a naive prefix check lets the TAB/LF variants through, and the URL API then sends them off-site.
    expect("/\t/evil.example".startsWith("/") && !"/\t/evil.example".startsWith("//")).toBe(true);
    expect(new URL("/\t/evil.example", "http://x.invalid").host).toBe("evil.example");
    for (const b of bad) expect(safeNext(b), JSON.stringify(b)).toBe("/");
  });
});
