import { describe, expect, it } from "vitest";
import { compareRecipes, flattenLeaves, sideBySide } from "./compare";

describe("recipe and protocol side by side", () => {
  it("flattens nested objects to dotted leaves, arrays whole", () => {
    expect([...flattenLeaves({ a: { b: 1, c: "x" }, s: [1, 2], n: null })]).toEqual([
      ["a.b", "1"],
      ["a.c", "x"],
      ["s", "[1,2]"],
      ["n", "null"],
    ]);
  });

  it("marks the rows that differ and shows a missing field as null", () => {
    const rows = sideBySide([{ t: { lr: 1e-4, r: 8 } }, { t: { lr: 2e-4, r: 8, extra: true } }]);
    expect(rows).toEqual([
      { field: "t.extra", values: [null, "true"], differs: true },
      { field: "t.lr", values: ["0.0001", "0.0002"], differs: true },
      { field: "t.r", values: ["8", "8"], differs: false },
    ]);
  });

  it("warns when the evaluation protocols differ, not when only the model or the name does", () => {
    const p = (maxNew: number, weights: string) => ({ maxNewTokens: maxNew, model: { weightsSha256: weights } });
    const same = compareRecipes([
      { config: { name: "a", lr: 1 }, protocol: p(256, "w1") },
      { config: { name: "b", lr: 2 }, protocol: p(256, "w2") },
    ]);
    expect(same.protocolsDiffer).toBe(false);
    expect(same.recipe.map((r) => r.field)).toEqual(["lr"]);
    const differ = compareRecipes([
      { config: {}, protocol: p(256, "w1") },
      { config: {}, protocol: p(512, "w1") },
    ]);
    expect(differ.protocolsDiffer).toBe(true);
    expect(differ.protocol.find((r) => r.differs)?.field).toBe("maxNewTokens");
  });
});
