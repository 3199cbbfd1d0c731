import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import {
  claimJob,
  claimedWithResult,
  createEnrollmentToken,
  enqueueJob,
  enrollAgent,
  finishAndClaim,
  finishAttempt,
  getJob,
  requestCancel,
  schema,
  type AgentFit,
} from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";

// The gateway's one-statement path for an agent's result and its next claim (finish-and-claim.ts):
// the same guarded write and the same claim as finishAttempt + claimJob, or nothing at all.

let t: TestDb;
let fit: AgentFit;
let other: AgentFit;
const agent = async (name: string): Promise<AgentFit> => {
  const { token } = await createEnrollmentToken(t.db, { name, ttlS: 60, shellJobs: true });
  const { agentId } = await enrollAgent(t.db, token);
  return { agentId, labels: [], gpuCount: 0, gpuMemoryMb: 0, sandbox: "bwrap", leaseTtlMs: 30_000, shellJobs: true };
};
beforeAll(async () => {
  t = await createTestDatabase();
  fit = await agent("a");
  other = await agent("b");
});
afterAll(async () => t?.drop());

const shell = () => enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
const result = (job: { jobId: string; attemptId: string }, reason: "succeeded" | "user_error" | "infra_error") => ({
  jobId: job.jobId,
  attemptId: job.attemptId,
  reason,
  exitCode: 0,
  signal: null,
  result: { ok: true },
  error: null,
});
const attemptsOf = (jobId: string) => t.db.select().from(schema.jobAttempts).where(eq(schema.jobAttempts.jobId, jobId));

describe("finish and claim in one statement", () => {
  it("ends the job, records the attempt, and claims the next job for the same agent", async () => {
    await shell();
    const first = await claimJob(t.db, fit);
    const second = await shell();
    if (!first) throw new Error("no claim");
    const res = await finishAndClaim(t.db, result(first, "succeeded"), fit.agentId, fit);
    expect(res?.out).toMatchObject({ accepted: true, state: "succeeded", requeued: false });
    expect(res?.out.ended).toMatchObject({ kind: "job", jobId: first.jobId, state: "succeeded" });
    expect(res?.next?.jobId).toBe(second.id);
    expect((await getJob(t.db, first.jobId))?.result).toEqual({ ok: true });
    expect((await attemptsOf(first.jobId))[0]?.reason).toBe("succeeded");
    const next = await getJob(t.db, second.id);
    expect(next).toMatchObject({ state: "running", agentId: fit.agentId, currentAttemptId: res?.next?.attemptId });
    // A retried delivery of that result finds the job it claimed (same statement, same now()).
    expect((await claimedWithResult(t.db, fit.agentId, first.attemptId))?.jobId).toBe(second.id);
    // A repeat misses here (the job is no longer running) and is left to the general path.
    expect(await finishAndClaim(t.db, result(first, "succeeded"), fit.agentId, fit)).toBeNull();
    if (!res?.next) throw new Error("no next");
    expect((await finishAndClaim(t.db, result(res.next, "succeeded"), fit.agentId, fit))?.next).toBeNull();
  });

  it("does nothing for another agent's attempt, a canceling job, a retryable reason or a GPU agent", async () => {
    await shell();
    const job = await claimJob(t.db, fit);
    await shell(); // something a wrongful claim would take
    if (!job) throw new Error("no claim");
    expect(await finishAndClaim(t.db, result(job, "succeeded"), other.agentId, other)).toBeNull();
    expect(await finishAndClaim(t.db, result(job, "infra_error"), fit.agentId, fit)).toBeNull();
    expect(await finishAndClaim(t.db, result(job, "succeeded"), fit.agentId, { ...fit, gpuCount: 1 })).toBeNull();
    expect((await getJob(t.db, job.jobId))?.state).toBe("running");
    await requestCancel(t.db, job.jobId);
    expect(await finishAndClaim(t.db, result(job, "succeeded"), fit.agentId, fit)).toBeNull();
    // Nothing was claimed by any of them; the general path then decides (a canceled job).
    expect(await claimJob(t.db, other)).not.toBeNull();
    expect((await finishAttempt(t.db, result(job, "succeeded"), fit.agentId)).state).toBe("canceled");
    expect((await attemptsOf(job.jobId)).length).toBe(1);
  });
});
