import { describe, expect, it } from "vitest";
import { budget, type BudgetSample } from "./budget";

// A pool of 3 groups × 40 tasks, two samples per task, lengths 50–449 tokens.
function pool(): BudgetSample[] {
  const out: BudgetSample[] = [];
  for (let g = 0; g < 3; g++)
    for (let t = 0; t < 40; t++)
      for (let s = 0; s < 2; s++)
        out.push({ taskId: `g${g}-t${t}`, group: `g${g}`, tokens: 50 + ((g * 97 + t * 31 + s * 13) % 400) });
  return out;
}

describe("budget", () => {
  it("draws whole tasks to B ± 0.5%, every sample of a drawn task included", () => {
    const samples = pool();
    for (const B of [5_000, 20_000, 40_000]) {
      const r = budget(samples, B, 7);
      expect(Math.abs(r.tokens - B)).toBeLessThanOrEqual(0.005 * B);
      expect(r.tokens).toBe(r.sampleIndices.reduce((s, i) => s + (samples[i]?.tokens ?? 0), 0));
      const drawn = new Set(r.taskIds);
      samples.forEach((s, i) => expect(r.sampleIndices.includes(i)).toBe(drawn.has(s.taskId)));
    }
  });

  it("is stratified: each source group is drawn in proportion to its size", () => {
    const samples = pool().filter((s) => s.group !== "g2" || Number(s.taskId.split("-t")[1]) < 20);
    const r = budget(samples, 20_000, 3);
    const share = (g: string) => (r.groups[g]?.drawn ?? 0) / r.taskIds.length;
    // Pool: 40/100 tasks in g0 and g1, 20/100 in g2.
    expect(share("g0")).toBeGreaterThan(0.3);
    expect(share("g0")).toBeLessThan(0.5);
    expect(share("g2")).toBeGreaterThan(0.1);
    expect(share("g2")).toBeLessThan(0.3);
  });

  it("is reproducible from its seed and differs between seeds", () => {
    const a = budget(pool(), 10_000, 1);
    expect(budget(pool(), 10_000, 1).taskIds).toEqual(a.taskIds);
    expect(budget(pool(), 10_000, 2).taskIds).not.toEqual(a.taskIds);
  });

  it("refuses a budget the pool cannot reach, and one whole tasks cannot hit within the tolerance", () => {
    const total = pool().reduce((s, x) => s + x.tokens, 0);
    expect(() => budget(pool(), total * 1.1, 1)).toThrow(/unreachable/);
    // Control: the whole pool is reachable exactly.
    expect(budget(pool(), total, 1).tokens).toBe(total);
    const coarse: BudgetSample[] = [
      { taskId: "a", group: "x", tokens: 1000 },
      { taskId: "b", group: "y", tokens: 1000 },
    ];
    expect(() => budget(coarse, 1500, 1)).toThrow(/no draw of whole tasks/);
    expect(budget(coarse, 1000, 1).taskIds).toHaveLength(1);
  });

  it("refuses samples without a token count", () => {
    expect(() => budget([{ taskId: "a", group: "x", tokens: Number.NaN }], 10, 1)).toThrow(/no token count/);
  });
});
