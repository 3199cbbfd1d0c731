import { describe, expect, it } from "vitest";
import { unitText } from "./unit-text";

describe("unitText", () => {
  it("names declared clusters with the source groups they span, and the interval method", () => {
    expect(
      unitText({ groups: 8, unit: "cluster", units: 8, sourceGroups: 32, intervalMethod: "score-design-effect" }),
    ).toBe("unit: 8 clusters (declared clusters over 32 source groups) · interval: score-design-effect");
    expect(unitText({ groups: 1, unit: "source_group", units: 1, intervalMethod: "single-unit" })).toBe(
      "unit: 1 source group · interval: single-unit",
    );
  });

  it("reads a report stored before units were declared by its source groups", () => {
    expect(unitText({ groups: 30 })).toBe("unit: 30 source groups");
  });
});
