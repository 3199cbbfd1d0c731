import { describe, expect, it } from "vitest";
import { proposeClusters, type ClusterCandidate } from "./clusters";

const program = (k: number, extra = "") =>
  [
    `def shape_${k}(values, limit):`,
    `    out = []`,
    `    for index, value in enumerate(values):`,
    `        if value > limit * ${k + 1}:`,
    `            out.append((index, value - ${k}))`,
    `        elif value == ${k}:`,
    `            out.append((index, 0))`,
    `    return sorted(out, key=lambda pair: pair[1])${extra}`,
    "",
  ].join("\n");
const t = (id: string, group: string, code: string, cluster?: string): ClusterCandidate => ({
  id,
  group,
  ...(cluster ? { cluster } : {}),
  reference: [{ path: "solution.py", content: code }],
});

describe("cluster proposals", () => {
  it("proposes one cluster per shared reference across source groups (positive control)", () => {
    // 3 shapes × 4 singleton groups each: the learnable family's design.
    const tasks = Array.from({ length: 12 }, (_, i) => t(`task${i}`, `g${i}`, program(i % 3)));
    const r = proposeClusters(tasks);
    expect(r.total).toBe(3);
    expect(r.proposals.map((p) => [p.tasks, p.groups])).toEqual([
      [4, 4],
      [4, 4],
      [4, 4],
    ]);
    expect(r.proposals[0]?.cluster).toMatch(/^answer-[0-9a-f]{10}$/);
    expect(r.proposals[0]?.sampleTaskIds).toEqual(["task0", "task3", "task6", "task9"]);
  });

  it("joins near-identical references (comments, a tiny edit) and keeps distinct ones apart", () => {
    const tasks = [
      t("a", "g1", program(1)),
      t("b", "g2", `# a comment\n${program(1)}`),
      t("c", "g3", program(1, " + []")),
      t("d", "g4", program(7)),
    ];
    const r = proposeClusters(tasks);
    expect(r.total).toBe(1);
    expect(r.proposals[0]).toMatchObject({ tasks: 3, groups: 3, sampleTaskIds: ["a", "b", "c"] });
  });

  it("stays quiet within one source group, or when the family already declares its cluster (negative controls)", () => {
    const same = [t("a", "g1", program(1)), t("b", "g1", program(1))];
    expect(proposeClusters(same).total).toBe(0);
    const declared = [t("a", "g1", program(1), "shape1"), t("b", "g2", program(1), "shape1")];
    expect(proposeClusters(declared).total).toBe(0);
    // Partly declared: the proposal reuses the declared name.
    const partly = [...declared, t("c", "g3", program(1))];
    expect(proposeClusters(partly).proposals[0]).toMatchObject({ cluster: "shape1", tasks: 3 });
  });

  it("bounds the list and counts the rest", () => {
    const tasks = Array.from({ length: 60 }, (_, i) => t(`x${i}`, `g${i}`, program(i % 30)));
    const r = proposeClusters(tasks, { max: 5 });
    expect(r.total).toBe(30);
    expect(r.proposals).toHaveLength(5);
  });
});
