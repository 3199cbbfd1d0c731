import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimJob, createEnrollmentToken, enqueueJob, enrollAgent, finishAttempt, type AgentFit } from "@agentlab/db";
import { ExperimentConfig, trainJobRequirements, type ClaimedJob } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./helpers/db";

// Issue 19: a recipe with training.gpus = 2 gives its train job a requirement of 2 GPUs (core
// requirements.ts); the claim hands it only to an agent with 2 free GPUs, and the job holds both
// while it runs. Shell jobs stand in for the train job: the claim reads the requirement only.

let t: TestDb;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function gpuAgent(name: string, gpus: number): Promise<AgentFit> {
  const { token } = await createEnrollmentToken(t.db, { name, ttlS: 60 });
  const { agentId } = await enrollAgent(t.db, token);
  return { agentId, labels: [], gpuCount: gpus, gpuMemoryMb: 81_559, sandbox: "none", leaseTtlMs: 30_000 };
}
const claim = (fit: AgentFit) => claimJob(t.db, { ...fit, shellJobs: true });
const finish = (c: ClaimedJob, agentId: string) =>
  finishAttempt(
    t.db,
    {
      jobId: c.jobId,
      attemptId: c.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: { outputTruncated: false },
      error: null,
    },
    agentId,
  );

const recipe = (gpus: number) =>
  ExperimentConfig.parse({
    name: "multi-gpu",
    splitId: "00000000-0000-4000-8000-000000000001",
    teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
    baseModel: { source: "hub", ref: "org/model" },
    training: { method: "lora-bf16", gpus },
    evaluation: { graderVersion: "g1", device: "cuda", dtype: "bfloat16" },
  });
const trainLike = (gpus: number, label: string) =>
  enqueueJob(t.db, {
    type: "shell",
    payload: { argv: ["echo", label] },
    requirements: trainJobRequirements(recipe(gpus)),
  });

describe("a train job of training.gpus = 2", () => {
  it("goes only to an agent with 2 free GPUs, and holds both while it runs", async () => {
    expect(trainJobRequirements(recipe(2)).gpus).toBe(2);
    const job = await trainLike(2, "two");
    const one = await gpuAgent("one-gpu", 1);
    expect(await claim(one)).toBeNull(); // one GPU is not enough
    const two = await gpuAgent("two-gpus", 2);
    const c = await claim(two);
    expect(c?.jobId).toBe(job.id);
    // both GPUs are taken: a one-GPU job waits (another box takes it: the positive control)
    const single = await trainLike(1, "single");
    expect(await claim(two)).toBeNull();
    expect((await claim(one))?.jobId).toBe(single.id);
    if (!c) throw new Error("no claim");
    await finish(c, two.agentId);
    const next = await trainLike(1, "next");
    expect((await claim(two))?.jobId).toBe(next.id); // free again once the two-GPU job ended
  });
});
