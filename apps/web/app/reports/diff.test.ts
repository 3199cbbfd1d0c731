import { describe, expect, it } from "vitest";
import { diffRows, diffStat } from "./diff";

describe("diffRows", () => {
  it("marks the changed line with its old and new numbers and collapses far unchanged lines", () => {
    const before = [
      "def f(xs):",
      ...Array.from({ length: 10 }, (_, i) => `    a${i} = ${i}`),
      "    return a0 <= a1",
      "",
    ].join("\n");
    const after = before.replace("a0 <= a1", "a0 < a1");
    const rows = diffRows(before, after, 2);
    expect(rows[0]).toEqual({ kind: "skip", count: 9 });
    expect(rows.filter((r) => r.kind !== "skip" && r.kind !== "same")).toEqual([
      { kind: "del", text: "    return a0 <= a1", oldNo: 12, newNo: null },
      { kind: "add", text: "    return a0 < a1", oldNo: null, newNo: 12 },
    ]);
    expect(diffStat(rows)).toEqual({ added: 1, removed: 1 });
  });
  it("identical texts: no change rows (control)", () => {
    const rows = diffRows("a\nb\n", "a\nb\n");
    expect(diffStat(rows)).toEqual({ added: 0, removed: 0 });
    expect(rows.map((r) => r.kind)).toEqual(["skip"]);
  });
});
