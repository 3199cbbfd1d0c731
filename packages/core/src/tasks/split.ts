import { z } from "zod";
import { canonicalJson, sha256Hex } from "../hash";
import { DomainError } from "../errors";

// Deterministic train/dev/test splits by source group: the same pool snapshot, seed and ratios
// always give the same assignment and manifest hash, and no group ever spans two parts.

export const SPLIT_PARTS = ["train", "dev", "test"] as const;
export const SplitPart = z.enum(SPLIT_PARTS);
export type SplitPart = z.infer<typeof SplitPart>;

export const SplitParams = z
  .object({
    seed: z.number().int().min(0).max(2_147_483_647),
    devRatio: z.number().min(0).max(0.9),
    testRatio: z.number().min(0).max(0.9),
  })
  .refine((p) => p.devRatio + p.testRatio < 1, {
    message: "dev + test ratios must leave some train",
    path: ["testRatio"],
  });
export type SplitParams = z.infer<typeof SplitParams>;

/**
 * The admission gate as applied when the split was made (recorded on it, frozen with it): tasks
 * whose newest admission audit failed are left out unless `includeFailedAudits`, an explicit
 * override that records who asked for it.
 */
export const SplitAdmission = z.object({
  includeFailedAudits: z.boolean(),
  /** Task ids left out because their newest audit failed (empty under the override). */
  excludedTaskIds: z.array(z.string()),
  /** Tasks with a failed audit that entered the split anyway (only under the override). */
  failedAuditsIncluded: z.number().int().min(0),
  overrideBy: z.string().uuid().nullable(),
});
export type SplitAdmission = z.infer<typeof SplitAdmission>;

export type SnapshotTask = { taskId: string; group: string; fingerprint: string };

/** Identity of a pool's content at one moment: ids, effective source groups and fingerprints. */
export function poolSnapshotHash(tasks: readonly SnapshotTask[]): string {
  const rows = tasks.map((t) => [t.taskId, t.group, t.fingerprint]).sort((a, b) => cmp(a[0] ?? "", b[0] ?? ""));
  return sha256Hex(canonicalJson({ v: 1, tasks: rows }));
}

export type SplitAssignment = { taskId: string; group: string; part: SplitPart };
export type SplitGroup = { group: string; part: SplitPart; size: number };
export type ComputedSplit = {
  assignments: SplitAssignment[];
  groups: SplitGroup[];
  counts: Record<SplitPart, { tasks: number; groups: number }>;
  manifestHash: string;
};

/**
 * Groups are ordered by sha256(snapshot | seed | group) — a seeded shuffle that does not depend on
 * row order — and dealt to test, then dev, until each reaches its target share of tasks; the rest
 * is train. Whole groups move, so a part may overshoot its target by less than one group.
 */
export function computeSplit(
  tasks: readonly SnapshotTask[],
  params: SplitParams & { snapshotHash: string },
): ComputedSplit {
  const p = SplitParams.parse(params);
  if (tasks.length === 0) throw new DomainError("BAD_REQUEST", "cannot split an empty pool");
  const members = new Map<string, string[]>();
  for (const t of tasks) {
    const list = members.get(t.group);
    if (list) list.push(t.taskId);
    else members.set(t.group, [t.taskId]);
  }
  const order = [...members.keys()]
    .map((g) => ({ g, key: sha256Hex(`${params.snapshotHash}|${p.seed}|${g}`) }))
    .sort((a, b) => cmp(a.key, b.key) || cmp(a.g, b.g));
  const total = tasks.length;
  const target = { test: Math.round(total * p.testRatio), dev: Math.round(total * p.devRatio) };
  const counts: ComputedSplit["counts"] = {
    train: { tasks: 0, groups: 0 },
    dev: { tasks: 0, groups: 0 },
    test: { tasks: 0, groups: 0 },
  };
  const groups: SplitGroup[] = [];
  const assignments: SplitAssignment[] = [];
  for (const { g } of order) {
    const ids = members.get(g) ?? [];
    const part: SplitPart = counts.test.tasks < target.test ? "test" : counts.dev.tasks < target.dev ? "dev" : "train";
    counts[part].tasks += ids.length;
    counts[part].groups += 1;
    groups.push({ group: g, part, size: ids.length });
    for (const taskId of ids) assignments.push({ taskId, group: g, part });
  }
  assignments.sort((a, b) => cmp(a.taskId, b.taskId));
  groups.sort((a, b) => cmp(a.group, b.group));
  return { assignments, groups, counts, manifestHash: splitManifestHash(params.snapshotHash, p, assignments) };
}

/** The hash a frozen split is known by: inputs plus every (task, group, part), in task-id order. */
export function splitManifestHash(
  snapshotHash: string,
  p: SplitParams,
  assignments: readonly SplitAssignment[],
): string {
  const rows = [...assignments].sort((a, b) => cmp(a.taskId, b.taskId)).map((a) => [a.taskId, a.group, a.part]);
  return sha256Hex(
    canonicalJson({
      format: "agentlab-split-v1",
      poolSnapshotHash: snapshotHash,
      seed: p.seed,
      devRatio: p.devRatio,
      testRatio: p.testRatio,
      assignments: rows,
    }),
  );
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
