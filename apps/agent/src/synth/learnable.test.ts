import { describe, expect, it } from "vitest";
import { CPU_DEMO_WARM_CLUSTERS } from "@agentlab/core";
import { LEARNABLE_SHAPES, learnableCluster } from "./learnable";

describe("the learnable family and the CPU demo preset", () => {
  it("names every fourth shape as the preset's warm clusters (its base's recipe)", () => {
    const everyFourth = LEARNABLE_SHAPES.filter((_, i) => i % 4 === 0).map((s) => learnableCluster(s.fn));
    expect([...CPU_DEMO_WARM_CLUSTERS]).toEqual(everyFourth);
    // Each is a shape of the family (a renamed shape would leave the preset warming nothing).
    const all = new Set(LEARNABLE_SHAPES.map((s) => learnableCluster(s.fn)));
    for (const c of CPU_DEMO_WARM_CLUSTERS) expect(all.has(c)).toBe(true);
  });
});
