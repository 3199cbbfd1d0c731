import { describe, expect, it } from "vitest";
import { extent, formatTick, linePath, niceTicks, scale } from "./chart";

describe("chart geometry", () => {
  it("niceTicks covers the range with round steps", () => {
    expect(niceTicks(0, 10, 5)).toEqual([0, 2, 4, 6, 8, 10]);
    expect(niceTicks(0.31, 2.83, 4)).toEqual([0.5, 1, 1.5, 2, 2.5]);
    expect(niceTicks(1, 1)).toEqual([1]);
    expect(niceTicks(0, Number.NaN)).toEqual([]);
    // reversed bounds give the same ticks
    expect(niceTicks(10, 0, 5)).toEqual([0, 2, 4, 6, 8, 10]);
  });

  it("extent ignores non-finite values and pads a flat series", () => {
    expect(extent([3, Number.NaN, 1, 2])).toEqual([1, 3]);
    expect(extent([0.5, 0.5])).toEqual([0.45, 0.55]);
    expect(extent([0, 0])).toEqual([-1, 1]);
    expect(extent([])).toBeNull();
  });

  it("scale maps linearly, including inverted ranges for SVG y", () => {
    const sy = scale([0, 1], [100, 0]);
    expect(sy(0)).toBe(100);
    expect(sy(0.25)).toBe(75);
    expect(scale([2, 2], [0, 10])(2)).toBe(5);
  });

  it("linePath sorts by x and breaks at gaps", () => {
    const id = (v: number) => v;
    expect(
      linePath(
        [
          { x: 2, y: 2 },
          { x: 1, y: 1 },
        ],
        id,
        id,
      ),
    ).toBe("M1.00,1.00L2.00,2.00");
    expect(
      linePath(
        [
          { x: 1, y: 1 },
          { x: 2, y: Number.NaN },
          { x: 3, y: 3 },
        ],
        id,
        id,
      ),
    ).toBe("M1.00,1.00M3.00,3.00");
  });

  it("formatTick stays short", () => {
    expect(formatTick(0)).toBe("0");
    expect(formatTick(0.25)).toBe("0.25");
    expect(formatTick(12_000)).toBe("12k");
    expect(formatTick(2_500_000)).toBe("2.5M");
    expect(formatTick(0.000123)).toBe("1.23e-4");
    expect(formatTick(0.0001)).toBe("1e-4");
  });
});
