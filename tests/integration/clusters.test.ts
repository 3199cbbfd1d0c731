import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { eq } from "drizzle-orm";
import { createSplit, importPool, schema } from "@agentlab/db";
import type { TaskSpec } from "@agentlab/core";
import { LEARNABLE_POOL_FILE } from "../../apps/web/server/bootstrap/builtin-pool";
import { LEARNABLE_SHAPES } from "../../apps/agent/src/synth/learnable";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { splitTasks } from "../../apps/web/server/experiments/tasks";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { callerAs, type Caller } from "./helpers/callers";
import { storedReport } from "./helpers/reports";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { baseConfig, drive, makeAgent, makeServices, startExperiment } from "./experiments-harness";

// The unit of dependence: tasks may declare a `cluster` (family, shape, source program) apart from
// their source group; the import proposes clusters for references shared across groups, stores a
// declared one, and the report's statistics cluster by it.

let t: TestDb;
let s: Services;
let viewer: Caller;
const learnable = gunzipSync(readFileSync(LEARNABLE_POOL_FILE))
  .toString("utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as TaskSpec);
const enc = (tasks: readonly unknown[]) => [new TextEncoder().encode(toJsonl(tasks))];
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  viewer = await callerAs(s, "viewer", "viewer@clusters.test");
});
afterAll(async () => t?.drop());

describe("declared clusters", () => {
  it("the built-in learnable pool declares its shapes, so the import proposes nothing; with shared answers and no clusters, one family per shape", async () => {
    expect(new Set(learnable.map((x) => x.cluster)).size).toBe(LEARNABLE_SHAPES.length);
    const declared = await importPool(t.db, { name: "learnable-declared", lines: enc(learnable) });
    if (!declared.ok) throw new Error("import failed");
    expect(declared.clusterProposals).toEqual({ total: 0, proposals: [] });
    const [row] = await t.db
      .select()
      .from(schema.tasks)
      .where(eq(schema.tasks.taskId, learnable[0]?.id ?? ""));
    expect(row?.cluster).toBe(learnable[0]?.cluster);

    // Positive control: the same tasks without their clusters (same-shape tasks share their
    // answer): one proposed family per shape.
    const bare = learnable.map(({ cluster: _c, ...rest }) => ({ ...rest, id: `bare-${rest.id}` }));
    const res = await importPool(t.db, { name: "learnable-bare", lines: enc(bare) });
    if (!res.ok) throw new Error("import failed");
    expect(res.clusterProposals.total).toBe(LEARNABLE_SHAPES.length);
    // Largest first, at most 20 listed: each shape's tasks, one group each.
    const perShape = new Map<string, number>();
    for (const x of learnable) perShape.set(x.cluster ?? "", (perShape.get(x.cluster ?? "") ?? 0) + 1);
    expect(res.clusterProposals.proposals.map((p) => p.tasks)).toEqual(
      [...perShape.values()].sort((a, b) => b - a).slice(0, 20),
    );
    expect(res.clusterProposals.proposals.every((p) => p.groups === p.tasks)).toBe(true);
    // The pool page reads the same proposals.
    expect(await viewer.pools.clusterProposals({ poolId: res.poolId })).toEqual(res.clusterProposals);
  });

  it("is optional (stored tasks unchanged) and checked like the other ids", async () => {
    const [plain] = makePool(1, 1, 900);
    const ok = await importPool(t.db, { name: "plain", lines: enc([plain]) });
    expect(ok.ok).toBe(true);
    const [row] = await t.db
      .select()
      .from(schema.tasks)
      .where(eq(schema.tasks.taskId, plain?.id ?? ""));
    expect(row?.cluster).toBeNull();
    const bad = await importPool(t.db, {
      name: "bad",
      lines: enc([{ ...plain, id: "x1", cluster: "no spaces allowed" }]),
    });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems[0]).toMatchObject({ line: 1, field: "cluster" });
  });

  it("the report clusters its comparison by the declared cluster and names the unit", async () => {
    // 40 tasks in 20 groups; clusters of 4 groups each: 5 units where 20 groups would be counted.
    const pool = makePool(40, 2, 300).map((x, i) => ({ ...x, cluster: `fam${Math.floor(i / 8)}` }));
    const res = await importPool(t.db, { name: "clustered", lines: enc(pool) });
    if (!res.ok) throw new Error("import failed");
    const { split } = await createSplit(t.db, { poolId: res.poolId, seed: 1, devRatio: 0.25, testRatio: 0.25 });
    const test = await splitTasks(t.db, split.id, "test");
    expect(test.every((x) => x.cluster?.startsWith("fam"))).toBe(true);
    const fit = await makeAgent(t.db);
    const id = await startExperiment(s, baseConfig(split.id, { name: "clustered", seeds: [1] }));
    const tasks = new Map(pool.map((x) => [x.id, x as TaskSpec]));
    expect(
      await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, {
        fixes: (m) => m.startsWith("s1e"),
      }),
    ).toEqual({ state: "succeeded", error: null });
    const report = (await storedReport(t.db, id)).body;
    const stats = report.summary[1].stats;
    const clusters = new Set(test.map((x) => x.cluster)).size;
    const groups = new Set(test.map((x) => x.source_group)).size;
    expect(clusters).toBeLessThan(groups);
    expect(stats).toMatchObject({ unit: "cluster", units: clusters, sourceGroups: groups });
    expect(report.tasks.filter((r) => r.split === "test").every((r) => r.cluster?.startsWith("fam"))).toBe(true);
  });
});
