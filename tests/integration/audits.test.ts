import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TaskSpec } from "@agentlab/core";
import { importPool, schema } from "@agentlab/db";
import { eq } from "drizzle-orm";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import { startAuditAgent } from "./helpers/audit-agent";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

// Admission audits end to end: the audits router enqueues `audit` jobs, an in-process agent runs
// the real audit handler (real grader, `process` backend: the helper's agent advertises it), and
// the server's sync loop copies the results into task_audits, where the pool summary and the
// task list's audit filter read them.

const fixtures = readFileSync(join(process.cwd(), "tests/fixtures/tasks/valid.jsonl"), "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => TaskSpec.parse(JSON.parse(l)));
const good = fixtures[0];
const second = fixtures[2];
if (!good || !second) throw new Error("fixtures missing");
// The buggy file is the reference itself: the hidden tests cannot fail it, so admission fails.
const notBuggy: TaskSpec = {
  ...second,
  id: "synth/not-buggy",
  files: second.files.map((f) => ({
    ...f,
    content: second.reference.find((r) => r.path === f.path)?.content ?? f.content,
  })),
};
const encode = (ts: TaskSpec[]) => [new TextEncoder().encode(ts.map((t) => JSON.stringify(t)).join("\n"))];

const createCaller = createCallerFactory(appRouter);
let srv: TestServer;
let auditor: Awaited<ReturnType<typeof startAuditAgent>>;
let member: ReturnType<typeof createCaller>;
let viewer: ReturnType<typeof createCaller>;
let poolId = "";
const ids: Record<string, string> = {};

async function callerFor(role: "member" | "viewer") {
  const db = srv.app.services.db;
  const [u] = await db
    .insert(schema.users)
    .values({ email: `${role}@lab.test`, name: role, passwordHash: "x", role })
    .returning();
  if (!u) throw new Error("no user");
  return createCaller({
    ...srv.app.services,
    viewer: { userId: u.id, email: u.email, name: u.name, role, via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  });
}

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  auditor = await startAuditAgent(srv, "agentlab-audit-");
  member = await callerFor("member");
  viewer = await callerFor("viewer");
  const imp = await importPool(srv.app.services.db, { name: "audited", lines: encode([good, notBuggy]) });
  if (!imp.ok) throw new Error("import failed");
  poolId = imp.poolId;
  const page = await viewer.tasks.list({ poolId, limit: 10 });
  for (const t of page.items) ids[t.taskId] = t.id;
}, 120_000);

afterAll(async () => {
  await auditor?.stop();
  await srv?.close();
});

const settled = (pool: string) =>
  waitFor(
    async () => {
      const s = await viewer.audits.summary({ poolId: pool });
      return s.byState.pending === 0 && s.byState.none === 0 && s;
    },
    110_000,
    200,
  );

describe("task admission audits", () => {
  it("audits a pool on a real agent: the good task passes, the unbuggy one fails, and the summary counts them", async () => {
    await expect(viewer.audits.create({ poolId, sandbox: "process" })).rejects.toMatchObject({ code: "FORBIDDEN" });
    const started = await member.audits.create({ poolId, sandbox: "process", maxMutants: 8 });
    expect(started).toEqual({ enqueued: 2, skipped: 0, finished: 0 });
    const s = await settled(poolId);
    expect(s).toMatchObject({
      total: 2,
      byState: { none: 0, pending: 0, passed: 1, failed: 1, error: 0 },
      running: 0,
      unsandboxed: 2,
    });

    const [okAudit] = await viewer.audits.list({ taskId: ids[good.id] ?? "" });
    expect(okAudit).toMatchObject({
      status: "passed",
      sandbox: "process",
      unsandboxed: true,
      round: 0,
      jobState: "succeeded",
    });
    expect(okAudit?.result?.referenceVerdicts).toEqual(["pass", "pass", "pass"]);
    // The fixture's bug already breaks its public example.
    expect(okAudit?.result?.buggyVerdict).toBe("fail_public");
    expect(okAudit?.mutantsTotal).toBeGreaterThan(0);
    expect(okAudit?.mutationScore).toBe((okAudit?.result?.mutantsKilled ?? -1) / (okAudit?.mutantsTotal ?? 0));
    expect(okAudit?.result?.surviving.length).toBe(
      (okAudit?.mutantsTotal ?? 0) - (okAudit?.result?.mutantsKilled ?? 0),
    );
    // The killed mutants came back from the agent with their programs and are stored once, apart from the result.
    const killed = await srv.app.services.db
      .select()
      .from(schema.taskAuditMutants)
      .where(eq(schema.taskAuditMutants.taskRowId, ids[good.id] ?? ""));
    expect(killed.length).toBe(okAudit?.result?.mutantsKilled);
    expect(killed.every((m) => m.verdict !== "pass" && m.source.length > 0)).toBe(true);
    expect(okAudit?.result?.killed).toEqual([]);

    const [badAudit] = await viewer.audits.list({ taskId: ids[notBuggy.id] ?? "" });
    expect(badAudit).toMatchObject({ status: "failed", result: { buggyVerdict: "pass" } });
    expect(badAudit?.result?.reasons.join(" ")).toMatch(/buggy main file does not fail the hidden tests/);

    const byFilter = async (audit: "passed" | "failed" | "none") =>
      (await viewer.tasks.list({ poolId, audit, limit: 10 })).items.map((t) => [t.taskId, t.audit]);
    expect(await byFilter("passed")).toEqual([[good.id, "passed"]]);
    expect(await byFilter("failed")).toEqual([[notBuggy.id, "failed"]]);
    expect(await byFilter("none")).toEqual([]);
  });

  it("re-audits only when asked, and an identical task elsewhere reuses the finished audit", async () => {
    expect(await member.audits.create({ poolId, sandbox: "process", maxMutants: 8 })).toEqual({
      enqueued: 0,
      skipped: 2,
      finished: 0,
    });
    const goodId = ids[good.id] ?? "";
    const rerun = await member.audits.create({
      poolId,
      taskIds: [goodId],
      sandbox: "process",
      maxMutants: 8,
      rerun: true,
    });
    expect(rerun).toEqual({ enqueued: 1, skipped: 0, finished: 0 });
    await settled(poolId);
    const audits = await viewer.audits.list({ taskId: goodId });
    expect(audits.map((a) => [a.round, a.status])).toEqual([
      [1, "passed"],
      [0, "passed"],
    ]);
    expect(audits[0]?.jobId).not.toBe(audits[1]?.jobId);

    const db = srv.app.services.db;
    const auditJobs = async () =>
      (await db.select({ id: schema.jobs.id }).from(schema.jobs).where(eq(schema.jobs.type, "audit"))).length;
    const before = await auditJobs();
    const copy = await importPool(db, { name: "copy", lines: encode([good]) });
    if (!copy.ok) throw new Error("import failed");
    const shared = await member.audits.create({ poolId: copy.poolId, sandbox: "process", maxMutants: 8 });
    expect(shared).toEqual({ enqueued: 1, skipped: 0, finished: 1 });
    expect(await auditJobs()).toBe(before);
    expect(await settled(copy.poolId)).toMatchObject({ byState: { passed: 1 } });

    await expect(
      member.audits.create({ poolId: copy.poolId, taskIds: [goodId], sandbox: "process" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
