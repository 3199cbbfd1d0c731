import { describe, expect, it } from "vitest";
import { computeSplit, poolSnapshotHash } from "./split";
import { leakageReport, type LeakTask } from "./leakage";
import { exactContentHash, normalizedContentHash, taskTokens } from "./fingerprint";

const pool = Array.from({ length: 1000 }, (_, i) => ({
  taskId: `t${i}`,
  group: `g${Math.floor(i / (1 + (i % 4)))}`,
  fingerprint: `f${i}`,
}));

describe("computeSplit", () => {
  const snapshotHash = poolSnapshotHash(pool);
  const params = { seed: 7, devRatio: 0.1, testRatio: 0.2, snapshotHash };

  it("never puts one source group in two parts and hits the ratios within a group", () => {
    const s = computeSplit(pool, params);
    const partOf = new Map<string, string>();
    for (const a of s.assignments) {
      expect(partOf.get(a.group) ?? a.part).toBe(a.part);
      partOf.set(a.group, a.part);
    }
    expect(s.assignments).toHaveLength(1000);
    const maxGroup = Math.max(...s.groups.map((g) => g.size));
    expect(Math.abs(s.counts.test.tasks - 200)).toBeLessThanOrEqual(maxGroup);
    expect(Math.abs(s.counts.dev.tasks - 100)).toBeLessThanOrEqual(maxGroup);
    expect(s.counts.train.tasks + s.counts.dev.tasks + s.counts.test.tasks).toBe(1000);
  });

  it("is identical for the same inputs, whatever the row order, and differs with the seed", () => {
    const a = computeSplit(pool, params);
    const b = computeSplit([...pool].reverse(), { ...params });
    expect(b).toEqual(a);
    expect(poolSnapshotHash([...pool].reverse())).toBe(snapshotHash);
    const c = computeSplit(pool, { ...params, seed: 8 });
    expect(c.manifestHash).not.toBe(a.manifestHash);
    expect(c.assignments).not.toEqual(a.assignments);
  });

  it("refuses ratios that leave no train part", () => {
    expect(() => computeSplit(pool, { ...params, devRatio: 0.5, testRatio: 0.5 })).toThrow(/leave some train/);
  });
});

describe("leakageReport", () => {
  const code = (n: number) =>
    Array.from({ length: 12 }, (_, i) => `def g${n}_${i}(v):\n    return v * ${n + i} - ${i}\n`).join("");
  const leak = (
    taskId: string,
    part: LeakTask["part"],
    content: string,
    instruction = "Fix the failing function.",
  ): LeakTask => {
    const t = { instruction, files: [{ path: "s.py", role: "main" as const, content }] };
    return {
      taskId,
      part,
      tokens: taskTokens(t),
      exactHash: exactContentHash(t),
      normalizedHash: normalizedContentHash(t),
    };
  };

  it("finds exact, normalized and 13-gram near-copies per task pair, and nothing for unrelated code", () => {
    const train = Array.from({ length: 30 }, (_, i) => leak(`train${i}`, i % 5 === 0 ? "dev" : "train", code(i)));
    const src = code(3);
    const tests = [
      leak("copy", "test", src),
      leak("reformatted", "test", src.replaceAll("    return", "  return ").replaceAll("):\n", "):  # changed\n\n")),
      leak("near", "test", src.split("\n").slice(0, 12).join("\n") + "\n" + code(99)),
      leak("clean", "test", code(500)),
    ];
    const r = leakageReport([...train, ...tests]);
    const byTest = (id: string) => r.pairs.filter((p) => p.testTaskId === id);
    expect(byTest("copy")).toEqual([
      expect.objectContaining({ otherTaskId: "train3", otherPart: "train", exact: true, normalized: true, overlap: 1 }),
    ]);
    expect(byTest("reformatted")).toEqual([
      expect.objectContaining({ otherTaskId: "train3", exact: false, normalized: true, overlap: 1 }),
    ]);
    const near = byTest("near");
    expect(near).toHaveLength(1);
    expect(near[0]).toMatchObject({ otherTaskId: "train3", exact: false, normalized: false });
    expect(near[0]?.sharedNgrams).toBeGreaterThan(10);
    expect(byTest("clean")).toEqual([]);
    expect(r).toMatchObject({
      testTasks: 4,
      testTasksWithLeak: 3,
      exactPairs: 1,
      normalizedPairs: 2,
      ngramPairs: 3,
      truncated: false,
    });
  });
});
