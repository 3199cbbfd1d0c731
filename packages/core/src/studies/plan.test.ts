import { describe, expect, it } from "vitest";
import { planStudyPower } from "./plan";

const tasks = (units: number, per: number) =>
  Array.from({ length: units * per }, (_, i) => ({ group: `g${Math.floor(i / per)}` }));

describe("planStudyPower", () => {
  const base = {
    contrasts: [{ arms: ["a", "r"] as [string, string] }],
    alpha: 0.05,
    seeds: 3,
    samplesPerTask: 1,
    changeRate: 0.2,
    withinUnitCorrelation: 0.3,
  };

  it("gives a smaller MDE for more test units, and a larger one at Holm's α/m", () => {
    const small = planStudyPower({ ...base, testTasks: tasks(20, 2) });
    const large = planStudyPower({ ...base, testTasks: tasks(200, 2) });
    const s = small.contrasts[0]?.mdeHolm ?? 1;
    const l = large.contrasts[0]?.mdeHolm ?? 1;
    expect(l).toBeLessThan(s);
    expect(large.units).toBe(200);
    const two = planStudyPower({
      ...base,
      contrasts: [...base.contrasts, { arms: ["b", "r"] }],
      testTasks: tasks(200, 2),
    });
    expect(two.contrasts[0]?.mdeHolm ?? 0).toBeGreaterThan(two.contrasts[0]?.mdeAlpha ?? 1);
    expect(two.contrasts[0]?.mdeAlpha).toBeCloseTo(l, 12);
  });

  it("says no effect is detectable with fewer than 3 seeds", () => {
    const p = planStudyPower({ ...base, seeds: 2, testTasks: tasks(50, 2) });
    expect(p.contrasts[0]?.mdeHolm).toBeNull();
    expect(p.notes.join(" ")).toMatch(/never labelled significant/);
  });
});
