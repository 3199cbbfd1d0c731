import { describe, expect, it } from "vitest";
import { noVerdictSection } from "./report-missing";
import type { TaskOutcome } from "./report-tasks";

// No-verdict answers are counted per model and compared base vs adapter with an exact test.

const graded = (n: number, from = 0): TaskOutcome[] =>
  Array.from({ length: n }, (_, i) => ({ taskId: `t${from + i}`, group: `g${from + i}`, verdict: "pass" }));
const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => `t${from + i}`);
const table = [{ ref: { model: "adapter" as const, seed: 7, seedIndex: 0, epoch: 1 }, n: 40, passed: 10, pass1: 0.25 }];

describe("no-verdict counts", () => {
  it("counts every model's lost answers and flags a lopsided loss with an exact test", () => {
    // 40 test tasks: the adapter lost 9 answers (tasks 31-39) the base graded; the base lost none.
    const s = noVerdictSection(
      { dev: {}, test: { base: graded(40), s7e1: graded(31) }, noVerdict: { dev: {}, test: { s7e1: ids(31, 9) } } },
      0.05,
      table,
    );
    expect(s.counts).toEqual([
      { split: "test", modelKey: "base", tasks: 40, noVerdict: 0, taskIds: [] },
      { split: "test", modelKey: "s7e1", tasks: 40, noVerdict: 9, taskIds: ids(31, 9) },
    ]);
    const a = s.asymmetry[0];
    expect(a).toMatchObject({ split: "test", otherKey: "s7e1", baseOnly: 0, otherOnly: 9, both: 0, flagged: true });
    expect(a?.p).toBeCloseTo(2 / 2 ** 9, 10); // exact: 2 · 0.5^9
    expect(a?.note).toContain("ASYMMETRIC");
    expect(a?.note).toContain("seed 7");
  });
  it("does not flag a symmetric loss or a loss on both sides (control: the same counts one-sided are flagged)", () => {
    const sym = noVerdictSection(
      {
        dev: {},
        test: { base: graded(36), s7e1: graded(36) },
        noVerdict: { dev: {}, test: { base: [...ids(36, 2), "t0x"], s7e1: [...ids(38, 2), "t0x"] } },
      },
      0.05,
      table,
    ).asymmetry[0];
    expect(sym).toMatchObject({ baseOnly: 2, otherOnly: 2, both: 1, p: 1, flagged: false });
    const none = noVerdictSection({ dev: { base: graded(4), s7e1: graded(4) }, test: {} }, 0.05, table);
    expect(none.asymmetry[0]).toMatchObject({ split: "dev", baseOnly: 0, otherOnly: 0, p: 1, flagged: false });
    expect(none.counts.every((c) => c.noVerdict === 0 && c.tasks === 4)).toBe(true);
  });
});
