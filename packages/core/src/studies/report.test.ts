import { describe, expect, it } from "vitest";
import { buildStudyReport, type ArmOutcomes } from "./report";
import { holmAdjust } from "./holm";

// 60 test tasks in 30 source groups; arm outcomes per seed from a fixed rule.
function arm(
  name: string,
  role: ArmOutcomes["role"],
  fixes: (task: number, seed: number) => boolean,
  seeds = [1, 2, 3],
): ArmOutcomes {
  return {
    name,
    role,
    factor: role === "arm" ? "datasetId" : null,
    experimentId: `exp-${name}`,
    seeds,
    dev: null,
    supervisedTokens: role === "arm" ? 10_030 : 10_000,
    trainSamples: 40,
    trainTasks: 20,
    steps: seeds.map(() => 10),
    tasks: Array.from({ length: 60 }, (_, t) => ({
      taskId: `t${t}`,
      group: `g${Math.floor(t / 2)}`,
      bySeed: seeds.map((s, j) => (fixes(t, j) ? 1 : 0)),
    })),
  };
}

const input = (arms: ArmOutcomes[], contrasts: [string, string][]) => ({
  studyId: "s1",
  name: "study",
  generatedAt: "2026-01-01T00:00:00.000Z",
  alpha: 0.05,
  bootstrap: { iterations: 500, seed: 1 },
  arms,
  contrasts: contrasts.map((c) => ({ arms: c })),
  testClaim: { splitId: "sp", claimedAt: "2026-01-01T00:00:00.000Z", models: [], readsOfSplit: 1 },
  tokenMatching: { tolerance: 0.005 },
});

describe("buildStudyReport", () => {
  const ref = arm("ref", "reference", (t) => t % 3 === 0);
  const strong = arm("strong", "arm", (t) => t % 3 === 0 || t % 3 === 1);
  const weak = arm("weak", "arm", (t, j) => t % 3 === 0 || (t < 8 && j === 0));
  const aa = arm("A/A", "aa", (t) => t % 3 === 0, [4, 5, 6]);

  it("pairs arms, Holm-adjusts the primary contrasts (adjusted ≥ unadjusted) and reports A/A apart", () => {
    const r = buildStudyReport(
      input(
        [ref, strong, weak, aa],
        [
          ["strong", "ref"],
          ["weak", "ref"],
        ],
      ),
    );
    expect(r.contrasts).toHaveLength(2);
    const [s, w] = r.contrasts;
    expect(s?.delta).toBeCloseTo(20 / 60, 12);
    expect(holmAdjust(r.contrasts.map((c) => c.p))).toEqual(r.contrasts.map((c) => c.p_holm));
    for (const c of r.contrasts) expect(c.p_holm).toBeGreaterThanOrEqual(c.p);
    expect(s?.significant).toBe(true);
    expect(w?.significant).toBe(false);
    expect(r.aa?.delta).toBe(0);
    expect(r.aa?.arms).toEqual(["A/A", "ref"]);
    expect(r.tokens.maxRelativeGap).toBeCloseTo(0.003, 12);
    expect(r.arms.find((a) => a.name === "strong")?.test).toBeCloseTo(40 / 60, 12);
  });

  it("never labels a contrast significant with fewer than 3 seeds (positive control: the same data with 3 is)", () => {
    const two = (a: ArmOutcomes) => ({
      ...a,
      seeds: [1, 2],
      tasks: a.tasks.map((t) => ({ ...t, bySeed: t.bySeed.slice(0, 2) })),
    });
    const r = buildStudyReport(input([two(ref), two(strong)], [["strong", "ref"]]));
    expect(r.contrasts[0]?.scope).toBe("given-seeds");
    expect(r.contrasts[0]?.significant).toBe(false);
  });

  it("refuses a contrast between arms without common tasks", () => {
    const other = { ...strong, tasks: strong.tasks.map((t) => ({ ...t, taskId: `x${t.taskId}` })) };
    expect(() => buildStudyReport(input([ref, other], [["strong", "ref"]]))).toThrow(/share no graded test task/);
  });
});
