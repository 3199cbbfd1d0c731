import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { claimJob, createEnrollmentToken, enqueueJob, enrollAgent, queueWaits, schema } from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { gradePayload } from "./helpers/payloads";

// What a queued job waits for (the experiment page's and the CLI's "queued behind X on agent Y"),
// computed from the same requirements the claim matches on.

let t: TestDb;
let cpuAgent: string;
beforeAll(async () => {
  t = await createTestDatabase();
  const { token } = await createEnrollmentToken(t.db, { name: "cpu-box", ttlS: 60, shellJobs: true });
  ({ agentId: cpuAgent } = await enrollAgent(t.db, token));
  await t.db
    .update(schema.agents)
    .set({ online: true, sandboxBackend: "bwrap", sandboxOk: true, labels: ["cpu"] })
    .where(eq(schema.agents.id, cpuAgent));
});
afterAll(async () => t?.drop());

const fit = () => ({
  agentId: cpuAgent,
  labels: ["cpu"],
  gpuCount: 0,
  gpuMemoryMb: 0,
  sandbox: "bwrap",
  leaseTtlMs: 30_000,
  shellJobs: true,
});

describe("why a queued job waits", () => {
  it("counts the jobs ahead and names what runs on the agents that could take it", async () => {
    const first = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    const claimed = await claimJob(t.db, fit());
    expect(claimed?.jobId).toBe(first.id);
    const second = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    const third = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    const [w] = await queueWaits(t.db, [third.id]);
    expect(w).toMatchObject({
      jobId: third.id,
      ahead: 1,
      fitting: [{ id: cpuAgent, name: "cpu-box" }],
      busy: [{ jobId: first.id, type: "shell", agentName: "cpu-box" }],
      unfit: [],
    });
    expect((await queueWaits(t.db, [second.id]))[0]?.ahead).toBe(0);
    // A job that is not queued (the running one) has nothing to wait for.
    expect(await queueWaits(t.db, [first.id])).toEqual([]);
  });

  it("names the requirement no online agent meets (control: the same agent fits a CPU job)", async () => {
    const gpu = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] }, requirements: { gpus: 1 } });
    const [w] = await queueWaits(t.db, [gpu.id]);
    expect(w?.fitting).toEqual([]);
    expect(w?.unfit).toEqual([{ name: "cpu-box", missing: "1 GPU(s)" }]);
    const labelled = await enqueueJob(t.db, {
      type: "shell",
      payload: { argv: ["true"] },
      requirements: { labels: ["a100"] },
    });
    expect((await queueWaits(t.db, [labelled.id]))[0]?.unfit).toEqual([{ name: "cpu-box", missing: "label a100" }]);
    // An agent whose sandbox self-test failed cannot take a grade job; it still takes a shell job.
    await t.db.update(schema.agents).set({ sandboxOk: false }).where(eq(schema.agents.id, cpuAgent));
    const grade = await enqueueJob(t.db, { type: "grade", payload: gradePayload() });
    expect((await queueWaits(t.db, [grade.id]))[0]?.unfit).toEqual([
      { name: "cpu-box", missing: "a working grading sandbox" },
    ]);
    const shell = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    expect((await queueWaits(t.db, [shell.id]))[0]?.fitting).toHaveLength(1);
    await t.db.update(schema.agents).set({ online: false }).where(eq(schema.agents.id, cpuAgent));
    expect((await queueWaits(t.db, [shell.id]))[0]).toMatchObject({ fitting: [], unfit: [] });
  });
});
