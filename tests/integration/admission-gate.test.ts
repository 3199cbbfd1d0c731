import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { BUILD_TIME_AUDIT, createSplit, getPool, importPool, poolAuditSummary, schema } from "@agentlab/db";
import {
  ensureBuiltinPool,
  BUILTIN_POOL_NAME,
  LEARNABLE_POOL_NAME,
} from "../../apps/web/server/bootstrap/builtin-pool";
import { createLogger } from "../../apps/web/server/logger";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { startTestApp, viewerOf, type TestApp } from "./auth-helpers";
import { createTestDatabase, type TestDb } from "./helpers/db";

// Split creation leaves out tasks whose newest admission audit failed, or
// includes them under an explicit override recorded on the split; built-in tasks carry their
// build-time audit as a passed audit row.

let t: TestDb;
let app: TestApp;
let member: { id: string; email: string; name: string; role: "member" };
let poolId = "";
const taskIds: string[] = [];

beforeAll(async () => {
  t = await createTestDatabase();
  app = await startTestApp(t);
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "gate@lab.test", name: "gate", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  member = { id: u.id, email: u.email, name: u.name, role: "member" };
  const pool = makePool(20, 1);
  const res = await importPool(t.db, { name: "gate", lines: [new TextEncoder().encode(toJsonl(pool))] });
  if (!res.ok) throw new Error("import failed");
  poolId = res.poolId;
  const rows = await t.db
    .select({ id: schema.tasks.id, taskId: schema.tasks.taskId })
    .from(schema.tasks)
    .where(eq(schema.tasks.poolId, poolId));
  rows.sort((a, b) => a.taskId.localeCompare(b.taskId));
  taskIds.push(...rows.map((r) => r.taskId));
  const audit = (i: number, status: "passed" | "failed", at: string) => {
    const row = rows[i];
    if (!row) throw new Error("no task");
    return {
      taskRowId: row.id,
      status,
      sandbox: "bwrap",
      graderVersion: "g/1",
      round: 0,
      createdAt: new Date(at),
      finishedAt: new Date(at),
    };
  };
  await t.db.insert(schema.taskAudits).values([
    audit(0, "failed", "2026-01-01T00:00:00Z"),
    audit(1, "failed", "2026-01-01T00:00:00Z"),
    // Failed once, passed on re-audit: the newest audit counts, so this one is admitted.
    audit(2, "failed", "2026-01-01T00:00:00Z"),
    audit(2, "passed", "2026-01-02T00:00:00Z"),
    audit(3, "passed", "2026-01-01T00:00:00Z"),
  ]);
}, 60_000);
afterAll(async () => (await app?.close(), await t?.drop()));

const assigned = async (splitId: string) =>
  (
    await t.db
      .select({ taskId: schema.splitAssignments.taskId })
      .from(schema.splitAssignments)
      .where(eq(schema.splitAssignments.splitId, splitId))
  ).map((r) => r.taskId);

describe("the admission gate", () => {
  it("leaves out tasks whose newest audit failed and records which", async () => {
    const out = await app.caller(viewerOf(member)).splits.create({ poolId, seed: 1, devRatio: 0.2, testRatio: 0.2 });
    expect(out.admission).toEqual({
      includeFailedAudits: false,
      excludedTaskIds: [taskIds[0], taskIds[1]].sort(),
      failedAuditsIncluded: 0,
      overrideBy: null,
    });
    const inSplit = await assigned(out.id);
    expect(inSplit).toHaveLength(18);
    expect(inSplit).not.toContain(taskIds[0]);
    expect(inSplit).toContain(taskIds[2]);
  });

  it("includes them under the explicit override, recorded with who asked", async () => {
    // Positive control for the test above: ungated, the failed tasks do enter a split.
    const out = await app
      .caller(viewerOf(member))
      .splits.create({ poolId, seed: 1, devRatio: 0.2, testRatio: 0.2, includeFailedAudits: true });
    expect(out.admission).toEqual({
      includeFailedAudits: true,
      excludedTaskIds: [],
      failedAuditsIncluded: 2,
      overrideBy: member.id,
    });
    expect(await assigned(out.id)).toContain(taskIds[0]);
    const byId = await app.caller(viewerOf(member)).splits.byId({ id: out.id });
    expect(byId.admission?.includeFailedAudits).toBe(true);
  });

  it("refuses a pool in which every task failed", async () => {
    const res = await importPool(t.db, {
      name: "all-bad",
      lines: [new TextEncoder().encode(toJsonl(makePool(2, 1, 500)))],
    });
    if (!res.ok) throw new Error("import failed");
    const rows = await t.db
      .select({ id: schema.tasks.id })
      .from(schema.tasks)
      .where(eq(schema.tasks.poolId, res.poolId));
    await t.db
      .insert(schema.taskAudits)
      .values(
        rows.map((r) => ({ taskRowId: r.id, status: "failed" as const, sandbox: "bwrap", graderVersion: "g/1" })),
      );
    await expect(
      createSplit(t.db, { poolId: res.poolId, seed: 1, devRatio: 0.2, testRatio: 0.2 }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED" });
  });
});

describe("the built-in pool", () => {
  it("shows its build-time audit: every task has a passed audit row, recorded once", async () => {
    const services = { db: t.db, log: createLogger("silent") };
    await ensureBuiltinPool(services);
    const pool = await getPool(t.db, { name: BUILTIN_POOL_NAME });
    if (!pool) throw new Error("built-in pool not loaded");
    const summary = await poolAuditSummary(t.db, pool.id);
    expect(summary.byState.passed).toBe(pool.taskCount);
    const rows = await t.db
      .select()
      .from(schema.taskAudits)
      .where(eq(schema.taskAudits.sandbox, BUILD_TIME_AUDIT))
      .limit(1);
    expect(rows[0]?.result?.referenceVerdicts).toEqual(["pass", "pass", "pass"]);
    await ensureBuiltinPool(services); // a restart records nothing twice
    expect((await poolAuditSummary(t.db, pool.id)).byState.passed).toBe(pool.taskCount);
    // The second built-in pool (the synthetic learnable family) is audited the same way.
    const learnable = await getPool(t.db, { name: LEARNABLE_POOL_NAME });
    if (!learnable) throw new Error("learnable built-in pool not loaded");
    expect((await poolAuditSummary(t.db, learnable.id)).byState.passed).toBe(learnable.taskCount);
    expect(
      (
        await t.db
          .select({ id: schema.taskAudits.id })
          .from(schema.taskAudits)
          .where(eq(schema.taskAudits.sandbox, BUILD_TIME_AUDIT))
      ).length,
    ).toBe(pool.taskCount + learnable.taskCount);
  }, 120_000);
});
