import { describe, expect, it } from "vitest";
import { holmAdjust } from "./holm";

describe("holmAdjust", () => {
  it("matches R's p.adjust(method = 'holm') on known values", () => {
    // p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02
    const adj = holmAdjust([0.01, 0.04, 0.03, 0.005]);
    [0.03, 0.06, 0.06, 0.02].forEach((v, i) => expect(adj[i]).toBeCloseTo(v, 12));
    // p.adjust(c(0.2, 0.5, 0.001), "holm") = 0.4 0.5 0.003
    const b = holmAdjust([0.2, 0.5, 0.001]);
    [0.4, 0.5, 0.003].forEach((v, i) => expect(b[i]).toBeCloseTo(v, 12));
  });

  it("caps at 1, keeps one p unchanged, and never lowers a p-value", () => {
    expect(holmAdjust([0.6, 0.7])).toEqual([1, 1]);
    expect(holmAdjust([0.037])).toEqual([0.037]);
    const ps = [0.001, 0.02, 0.02, 0.3, 0.049];
    holmAdjust(ps).forEach((a, i) => expect(a).toBeGreaterThanOrEqual(ps[i] ?? 0));
  });

  it("refuses a value that is not a probability", () => {
    expect(() => holmAdjust([0.1, 1.2])).toThrow(/not in \[0, 1\]/);
    expect(() => holmAdjust([Number.NaN])).toThrow();
  });
});
