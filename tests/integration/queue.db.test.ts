import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  claimJob,
  enqueueJob,
  finishAttempt,
  reapJobs,
  renewLeases,
  appendLogs,
  requestCancel,
  getJob,
  enrollAgent,
  createEnrollmentToken,
} from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { gradePayload } from "./helpers/payloads";

let t: TestDb;
let agentId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  const { token } = await createEnrollmentToken(t.db, { name: "a1", ttlS: 60, shellJobs: true });
  ({ agentId } = await enrollAgent(t.db, token));
});
afterAll(async () => t?.drop());

const fit = () => ({
  agentId,
  labels: ["cpu"],
  gpuCount: 0,
  gpuMemoryMb: 0,
  sandbox: "bwrap",
  leaseTtlMs: 30_000,
  shellJobs: true,
});

describe("job queue on Postgres", () => {
  it("claims by requirements and fences stale attempts", async () => {
    const gpuJob = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] }, requirements: { gpus: 1 } });
    const job = await enqueueJob(t.db, {
      type: "shell",
      payload: { argv: ["true"] },
      requirements: { labels: ["cpu"] },
    });
    const claimed = await claimJob(t.db, fit());
    expect(claimed?.jobId).toBe(job.id);
    expect(await claimJob(t.db, fit())).toBeNull(); // the GPU job does not fit
    if (!claimed) throw new Error("no claim");
    expect(await appendLogs(t.db, agentId, job.id, claimed.attemptId, [{ seq: 0, stream: "stdout", data: "hi" }])).toBe(
      true,
    );
    const fake = "00000000-0000-4000-8000-000000000000";
    expect(await appendLogs(t.db, agentId, job.id, fake, [{ seq: 0, stream: "stdout", data: "x" }])).toBe(false);
    // Another agent cannot write to an attempt it does not hold, even knowing its id.
    const other = await enrollAgent(
      t.db,
      (await createEnrollmentToken(t.db, { name: "a2", ttlS: 60, shellJobs: true })).token,
    );
    expect(
      await appendLogs(t.db, other.agentId, job.id, claimed.attemptId, [{ seq: 1, stream: "stdout", data: "x" }]),
    ).toBe(false);
    expect(
      (
        await finishAttempt(
          t.db,
          {
            jobId: job.id,
            attemptId: claimed.attemptId,
            reason: "user_error",
            exitCode: 1,
            signal: null,
            result: {},
            error: null,
          },
          other.agentId,
        )
      ).accepted,
    ).toBe(false);
    const done = await finishAttempt(t.db, {
      jobId: job.id,
      attemptId: claimed.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: {},
      error: null,
    });
    expect(done).toMatchObject({ accepted: true, state: "succeeded" });
    // A retried delivery of the same result is accepted without effect.
    const again = await finishAttempt(t.db, {
      jobId: job.id,
      attemptId: claimed.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: {},
      error: null,
    });
    expect(again.accepted).toBe(true);
    expect((await requestCancel(t.db, gpuJob.id))?.state).toBe("canceled");
    // Untrusted code goes only to agents whose sandbox passed its self-test.
    const grade = await enqueueJob(t.db, { type: "grade", payload: gradePayload() });
    expect(await claimJob(t.db, { ...fit(), sandbox: "none" })).toBeNull();
    expect((await claimJob(t.db, fit()))?.jobId).toBe(grade.id);
  });

  it("requeues an expired lease as agent_lost and refuses the dead attempt's result", async () => {
    const job = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] }, maxAttempts: 2 });
    const first = await claimJob(t.db, { ...fit(), leaseTtlMs: 1 });
    if (!first) throw new Error("no claim");
    await new Promise((r) => setTimeout(r, 20));
    const reaped = await reapJobs(t.db);
    expect(reaped).toEqual([expect.objectContaining({ jobId: job.id, state: "queued" })]);
    const second = await claimJob(t.db, fit());
    expect(second?.attempt).toBe(2);
    const late = await finishAttempt(t.db, {
      jobId: job.id,
      attemptId: first.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: {},
      error: null,
    });
    expect(late.accepted).toBe(false);
    expect(await renewLeases(t.db, agentId, [first.attemptId], 30_000)).toEqual({
      stale: [first.attemptId],
      cancel: [],
    });
    if (!second) throw new Error("no claim");
    await finishAttempt(t.db, {
      jobId: job.id,
      attemptId: second.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: { ok: 1 },
      error: null,
    });
    expect((await getJob(t.db, job.id))?.state).toBe("succeeded");
  });
});
