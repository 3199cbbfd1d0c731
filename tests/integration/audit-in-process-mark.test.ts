import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TaskSpec } from "@agentlab/core";
import { importPool, schema } from "@agentlab/db";
import { eq } from "drizzle-orm";
import { callerAs, type Caller } from "./helpers/callers";
import { startTestServer, type TestServer } from "./helpers/server";

// In-process grading is an explicit exception: only an admin's mark with a reason lets an audit
// choose it (the agent's audit refuses a task that needs it otherwise: judge-audit.test.ts). The
// mark travels in the audit job's payload; withdrawing it puts the task back in the judge at once.

const task = TaskSpec.parse(
  JSON.parse(readFileSync(join(process.cwd(), "tests/fixtures/tasks/valid.jsonl"), "utf8").split("\n")[0] ?? ""),
);
let srv: TestServer;
let admin: Caller;
let member: Caller;
let poolId = "";
let taskRowId = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  admin = await callerAs(srv.app.services, "admin");
  member = await callerAs(srv.app.services, "member");
  const imp = await importPool(srv.app.services.db, {
    name: "marked",
    lines: [new TextEncoder().encode(JSON.stringify(task))],
  });
  if (!imp.ok) throw new Error("import failed");
  poolId = imp.poolId;
  taskRowId = (await member.tasks.list({ poolId, limit: 1 })).items[0]?.id ?? "";
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

const auditPayloads = async () =>
  (await srv.app.services.db.select().from(schema.jobs).where(eq(schema.jobs.type, "audit"))).map(
    (j) => j.payload as { inProcessReason?: string },
  );
const taskRow = async () =>
  (await srv.app.services.db.select().from(schema.tasks).where(eq(schema.tasks.id, taskRowId)))[0];

describe("the in-process mark", () => {
  it("is admin-only, needs a reason, and reaches the audit payload; withdrawn, the task is back in the judge", async () => {
    await member.audits.create({ poolId });
    expect((await auditPayloads()).map((p) => p.inProcessReason)).toEqual([undefined]);

    const reason = "the hidden tests monkeypatch a helper of the module by design";
    await expect(member.audits.markInProcess({ taskId: taskRowId, reason })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await expect(admin.audits.markInProcess({ taskId: taskRowId, reason: "short" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    expect(await admin.audits.markInProcess({ taskId: taskRowId, reason })).toEqual({ marked: true });
    expect(await taskRow()).toMatchObject({ inProcessReason: reason, gradingIsolation: "judge" });

    // A re-audit carries the mark in its own job (a marked task never shares an unmarked audit's job).
    expect(await member.audits.create({ poolId, rerun: true })).toMatchObject({ enqueued: 1 });
    expect((await auditPayloads()).map((p) => p.inProcessReason).sort()).toEqual([reason, undefined]);

    // Simulates an audit that chose in-process under the mark; withdrawing the mark undoes it at once.
    await srv.app.services.db
      .update(schema.tasks)
      .set({ gradingIsolation: "in_process" })
      .where(eq(schema.tasks.id, taskRowId));
    expect(await admin.audits.markInProcess({ taskId: taskRowId, reason: null })).toEqual({ marked: false });
    expect(await taskRow()).toMatchObject({
      inProcessReason: null,
      inProcessMarkedBy: null,
      gradingIsolation: "judge",
    });
    await expect(
      admin.audits.markInProcess({ taskId: "00000000-0000-4000-8000-000000000000", reason }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
