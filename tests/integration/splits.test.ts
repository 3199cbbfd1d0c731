import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import {
  createSplit,
  getPool,
  importPool,
  listSplitGroups,
  queryRows,
  splitGroupsSpanningParts,
  schema,
} from "@agentlab/db";
import type { SplitPart, TaskSpec } from "@agentlab/core";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { groupProgram, makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";

let t: TestDb;
const createCaller = createCallerFactory(appRouter);
let caller: ReturnType<typeof createCaller>;
const enc = (tasks: readonly TaskSpec[]) => [new TextEncoder().encode(toJsonl(tasks))];

beforeAll(async () => {
  t = await createTestDatabase();
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "m@example.test", name: "m", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  const ctx = {
    env: loadEnv({ NODE_ENV: "test" }),
    db: t.db,
    log: createLogger("silent"),
    viewer: { userId: u.id, email: u.email, name: u.name, role: "member", via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
  } as unknown as Context;
  caller = createCaller(ctx);
});
afterAll(async () => t?.drop());

async function poolWith(name: string, tasks: TaskSpec[]) {
  const res = await importPool(t.db, { name, lines: enc(tasks) });
  if (!res.ok) throw new Error(JSON.stringify(res.problems.slice(0, 3)));
  return res;
}

// A near-copy filed under another source group: same program, one constant changed.
const nearCopy = (g: number, id: string): TaskSpec => {
  const base = makeTask(g, 0);
  return {
    ...base,
    id,
    source_group: `copies/${id}`,
    files: [
      { path: "solution.py", role: "main", content: groupProgram(g).replace("# accumulate", "# accumulate values") },
    ],
    reference: [],
  };
};

describe("splits", () => {
  it("assigns whole source groups, is identical for identical inputs (even in another pool), and shows sizes", async () => {
    const pool = await poolWith("s1", makePool(600, 3));
    const params = { poolId: pool.poolId, seed: 42, devRatio: 0.1, testRatio: 0.2 };
    const a = await caller.splits.create(params);
    expect(a.created).toBe(true);
    expect(await splitGroupsSpanningParts(t.db, a.id)).toEqual([]);
    const rows = await queryRows<{ group_key: string; parts: number }>(
      t.db,
      sql`select group_key, count(distinct part)::int as parts from split_assignments where split_id = ${a.id} group by group_key`,
    );
    expect(rows).toHaveLength(200);
    expect(rows.every((r) => r.parts === 1)).toBe(true);
    expect(a.counts.train.tasks + a.counts.dev.tasks + a.counts.test.tasks).toBe(600);
    expect(Math.abs(a.counts.test.tasks - 120)).toBeLessThanOrEqual(3);
    expect(Math.abs(a.counts.dev.tasks - 60)).toBeLessThanOrEqual(3);

    const again = await caller.splits.create(params);
    expect(again).toMatchObject({ id: a.id, manifestHash: a.manifestHash, created: false });
    // The same tasks in another pool (imported in another order) give the same manifest.
    const other = await poolWith("s1-copy", makePool(600, 3).reverse());
    const b = await caller.splits.create({ ...params, poolId: other.poolId });
    expect(b.manifestHash).toBe(a.manifestHash);
    const c = await caller.splits.create({ ...params, seed: 43 });
    expect(c.manifestHash).not.toBe(a.manifestHash);

    const shown = await caller.splits.byId({ id: a.id });
    expect(shown).toMatchObject({ frozen: true, poolSnapshotHash: pool.snapshotHash, manifestHash: a.manifestHash });
    const groups = await caller.splits.groups({ splitId: a.id, part: "test", limit: 10 });
    expect(groups.items).toHaveLength(10);
    expect(groups.items.every((g) => g.part === "test" && g.size === 3)).toBe(true);
    const next = await listSplitGroups(t.db, {
      splitId: a.id,
      part: "test",
      after: groups.nextCursor ?? undefined,
      limit: 1000,
    });
    expect(groups.items.length + next.items.length).toBe(a.counts.test.groups);
    const testPart = await caller.pools.exportPage({ poolId: pool.poolId, splitId: a.id, part: "test", limit: 1000 });
    expect(testPart.items).toHaveLength(a.counts.test.tasks);
  });

  it("cannot be altered once frozen: the database refuses UPDATE, DELETE, INSERT and TRUNCATE", async () => {
    const pool = await poolWith("s2", makePool(40, 2, 300));
    const { split } = await createSplit(t.db, { poolId: pool.poolId, seed: 1, devRatio: 0.2, testRatio: 0.2 });
    const [row] = await queryRows<{ task_id: string; task_row_id: string; part: SplitPart }>(
      t.db,
      sql`select task_id, task_row_id, part from split_assignments where split_id = ${split.id} limit 1`,
    );
    if (!row) throw new Error("no assignment");
    const refused = [
      sql`update splits set seed = 2 where id = ${split.id}`,
      sql`update splits set frozen = false where id = ${split.id}`,
      sql`delete from splits where id = ${split.id}`,
      sql`update split_assignments set part = 'train' where split_id = ${split.id} and part <> 'train'`,
      sql`delete from split_assignments where split_id = ${split.id}`,
      sql`insert into split_assignments (split_id, task_row_id, task_id, group_key, part) values (${split.id}, ${row.task_row_id}, 'extra', 'x', 'train')`,
      sql`truncate split_assignments`,
      sql`delete from tasks where id = ${row.task_row_id}`,
    ];
    for (const q of refused) {
      // drizzle wraps the driver's error; the database's own message is its cause.
      const err = await t.db.execute(q).then(
        () => null,
        (e: Error & { cause?: Error }) => e.cause?.message ?? e.message,
      );
      expect(err, String(q.queryChunks[0])).toMatch(
        /is frozen|TRUNCATE of split_assignments is refused|violates foreign key/,
      );
    }
    const after = await queryRows<{ n: number; manifest: string }>(
      t.db,
      sql`select count(*)::int as n, min(s.manifest_hash) as manifest from split_assignments a join splits s on s.id = a.split_id where s.id = ${split.id}`,
    );
    expect(after[0]).toEqual({ n: 40, manifest: split.manifestHash });
  });

  it("the leakage report finds planted near-copies across parts, per task pair", async () => {
    const tasks = makePool(400, 2);
    // Near-copies of groups 0..59 under their own groups: some land in test while their original does not.
    const copies = Array.from({ length: 60 }, (_, g) => nearCopy(g, `copy/${g}`));
    const pool = await poolWith("s3", [...tasks, ...copies]);
    const { split } = await createSplit(t.db, { poolId: pool.poolId, seed: 5, devRatio: 0.1, testRatio: 0.2 });
    const parts = new Map(
      (
        await queryRows<{ task_id: string; part: SplitPart }>(
          t.db,
          sql`select task_id, part from split_assignments where split_id = ${split.id}`,
        )
      ).map((r) => [r.task_id, r.part]),
    );
    const expected: [string, string][] = [];
    for (let g = 0; g < 60; g++) {
      const copy = `copy/${g}`;
      for (const orig of [`synth/g${g}/v0`, `synth/g${g}/v1`]) {
        if (parts.get(copy) === "test" && parts.get(orig) !== "test") expected.push([copy, orig]);
        if (parts.get(orig) === "test" && parts.get(copy) !== "test") expected.push([orig, copy]);
      }
    }
    expect(expected.length).toBeGreaterThan(4);
    const found = new Set(
      split.leakage.pairs.filter((p) => p.sharedNgrams > 0).map((p) => `${p.testTaskId}|${p.otherTaskId}`),
    );
    for (const [testId, otherId] of expected) expect(found, `${testId} ~ ${otherId}`).toContain(`${testId}|${otherId}`);
    // Unrelated tasks are not reported: every listed pair involves a planted copy and its original group.
    for (const p of split.leakage.pairs)
      expect([p.testTaskId, p.otherTaskId].some((id) => id.startsWith("copy/"))).toBe(true);
    const copyPair = split.leakage.pairs.find((p) => p.testTaskId.startsWith("copy/"));
    if (copyPair) expect(copyPair.overlap).toBeGreaterThan(0.5);
  });

  it("proposes merging groups that hold near-duplicates; accepting folds them and later splits keep them together", async () => {
    const pool = await poolWith("s4", [...makePool(40, 2, 500), nearCopy(503, "stray/1")]);
    expect(pool.mergeProposals).toBe(1);
    const page = await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending" });
    expect(page.total).toBe(1);
    const proposals = page.rows;
    expect(proposals).toEqual([
      expect.objectContaining({ groupA: "copies/stray/1", groupB: "synth/g503", status: "pending" }),
    ]);
    const p = proposals[0];
    if (!p) throw new Error("no proposal");
    expect(p.similarity).toBeGreaterThan(0.7);
    const before = await getPool(t.db, { id: pool.poolId });
    const res = await caller.pools.decideMerge({ id: p.id, accept: true });
    expect(res).toMatchObject({ status: "accepted", moved: 2, group: "copies/stray/1" });
    await expect(caller.pools.decideMerge({ id: p.id, accept: false })).rejects.toThrow(/already accepted/);
    const after = await getPool(t.db, { id: pool.poolId });
    expect(after?.groupCount).toBe((before?.groupCount ?? 0) - 1);
    expect(after?.snapshotHash).not.toBe(before?.snapshotHash);
    const split = await caller.splits.create({ poolId: pool.poolId, seed: 9, devRatio: 0.3, testRatio: 0.3 });
    const parts = await queryRows<{ part: string }>(
      t.db,
      sql`select distinct part from split_assignments where split_id = ${split.id} and task_id in ('stray/1', 'synth/g503/v0', 'synth/g503/v1')`,
    );
    expect(parts).toHaveLength(1);
    // A later import of another variant of a merged group joins the merged group.
    await poolWith("s4", [makeTask(503, 2)]);
    const [row] = await queryRows<{ group_key: string }>(
      t.db,
      sql`select group_key from tasks where task_id = 'synth/g503/v2'`,
    );
    expect(row?.group_key).toBe("copies/stray/1");
  });

  it("pages merge proposals and decides a selection in one transaction (a stale one refuses the batch)", async () => {
    const pool = await poolWith("s5", [
      ...makePool(40, 2, 600),
      ...[600, 601, 602, 603, 604].map((g) => nearCopy(g, `stray5/${g}`)),
    ]);
    expect(pool.mergeProposals).toBe(5);
    const first = await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending", limit: 2 });
    const second = await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending", limit: 2, offset: 2 });
    const third = await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending", limit: 2, offset: 4 });
    expect([first.total, first.rows.length, second.rows.length, third.rows.length]).toEqual([5, 2, 2, 1]);
    const ids = [...first.rows, ...second.rows, ...third.rows].map((r) => r.id);
    expect(new Set(ids).size).toBe(5);
    // One already decided in the selection: nothing of the batch is applied (control: it alone decides).
    const [a, b, c] = ids;
    if (!a || !b || !c) throw new Error("too few proposals");
    await caller.pools.decideMerge({ id: a, accept: false });
    await expect(caller.pools.decideMerges({ ids: [b, a], accept: true })).rejects.toThrow(/already rejected/);
    expect((await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending" })).total).toBe(4);
    const done = await caller.pools.decideMerges({ ids: [b, c], accept: true });
    expect(done.map((d) => d.status)).toEqual(["accepted", "accepted"]);
    expect((await caller.pools.mergeProposals({ poolId: pool.poolId, status: "accepted" })).total).toBe(2);
    expect((await caller.pools.mergeProposals({ poolId: pool.poolId, status: "pending" })).total).toBe(2);
  });

  it("lists and searches tasks with keyset pagination", async () => {
    const pool = await getPool(t.db, { name: "s1" });
    if (!pool) throw new Error("no pool");
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await caller.tasks.list({ poolId: pool.id, after, limit: 200 });
      seen.push(...page.items.map((i) => i.taskId));
      if (!page.nextCursor) break;
      after = page.nextCursor;
    }
    expect(seen).toHaveLength(600);
    expect([...seen].sort((a, b) => (a < b ? -1 : 1))).toEqual(seen);
    const hits = await caller.tasks.list({ poolId: pool.id, q: "synth/g17/", limit: 50 });
    expect(hits.items.map((i) => i.taskId)).toEqual(["synth/g17/v0", "synth/g17/v1", "synth/g17/v2"]);
    expect((await caller.tasks.list({ poolId: pool.id, q: "synth/g1%", limit: 50 })).items).toEqual([]);
    const first = hits.items[0];
    if (!first) throw new Error("no hit");
    const detail = await caller.tasks.byId({ id: first.id });
    expect(detail.task).toMatchObject({ taskId: "synth/g17/v0", sourceGroup: "synth/g17" });
    expect(detail.task).not.toHaveProperty("minhash");
  });
});
