import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  claimJob,
  createEnrollmentToken,
  enqueueJob,
  enrollAgent,
  finishAttempt,
  requestCancel,
  type AgentFit,
} from "@agentlab/db";
import { ExperimentConfig, trainJobRequirements, type ClaimedJob } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./helpers/db";

// A GPU runs one GPU job at a time unless the job declares it can share. The claim counts
// the GPUs the agent's running GPU jobs hold; CPU jobs are never held back by a busy GPU.
// A recipe with training.gpus = 2 gives its train job a requirement of 2 GPUs (core
// requirements.ts); the claim hands it only to an agent with 2 free GPUs, and the job holds both
// while it runs. Shell jobs stand in for GPU jobs: the claim reads the requirement only.

let t: TestDb;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t?.drop());

async function gpuAgent(name: string, gpus: number): Promise<AgentFit> {
  const { token } = await createEnrollmentToken(t.db, { name, ttlS: 60, shellJobs: true });
  const { agentId } = await enrollAgent(t.db, token);
  return { agentId, labels: [], gpuCount: gpus, gpuMemoryMb: 81_559, sandbox: "none", leaseTtlMs: 30_000 };
}

const gpuJob = (label: string, gpuShare?: boolean) =>
  enqueueJob(t.db, {
    type: "shell",
    payload: { argv: ["echo", label] },
    requirements: { gpus: 1, gpuMemoryMb: 20_000, ...(gpuShare === undefined ? {} : { gpuShare }) },
  });
const cpuJob = (label: string) => enqueueJob(t.db, { type: "shell", payload: { argv: ["echo", label] } });

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
const claim = (fit: AgentFit) => claimJob(t.db, { ...fit, shellJobs: true });

describe("one GPU job per GPU", () => {
  it("holds a second exclusive GPU job back while the first runs, and hands it over once the GPU is free", async () => {
    const a = await gpuAgent("one-gpu", 1);
    const first = await gpuJob("first");
    const second = await gpuJob("second");
    const cpu = await cpuJob("cpu");
    const c1 = await claim(a);
    expect(c1?.jobId).toBe(first.id);
    // the GPU is busy: the next claim passes over the second GPU job and takes the CPU job
    const c2 = await claim(a);
    expect(c2?.jobId).toBe(cpu.id);
    expect(await claim(a)).toBeNull();
    // positive control: a free GPU (another agent) takes it at once …
    const b = await gpuAgent("other-box", 1);
    const c3 = await claim(b);
    expect(c3?.jobId).toBe(second.id);
    // … and the first agent's GPU is free again after its job ends
    if (!c1 || !c2 || !c3) throw new Error("missing claims");
    await finish(c1, a.agentId);
    await finish(c2, a.agentId);
    await finish(c3, b.agentId);
    const third = await gpuJob("third");
    expect((await claim(a))?.jobId).toBe(third.id);
  });

  it("two GPUs take two exclusive jobs; sharing jobs share a GPU but never one an exclusive job holds", async () => {
    const two = await gpuAgent("two-gpus", 2);
    const x1 = await gpuJob("x1");
    const x2 = await gpuJob("x2");
    const x3 = await gpuJob("x3");
    const got = [await claim(two), await claim(two), await claim(two)];
    expect(got.map((c) => c?.jobId ?? null)).toEqual([x1.id, x2.id, null]);

    const one = await gpuAgent("shared-gpu", 1);
    await claim(one).then((c) => expect(c?.jobId).toBe(x3.id)); // x3 was waiting: exclusive on this GPU
    const s1 = await gpuJob("s1", true);
    expect(await claim(one)).toBeNull(); // a sharing job does not join an exclusive one

    const free = await gpuAgent("free-gpu", 1);
    const s2 = await gpuJob("s2", true);
    const shared = [await claim(free), await claim(free)];
    expect(shared.map((c) => c?.jobId)).toEqual([s1.id, s2.id]); // both share the one GPU
    const x4 = await gpuJob("x4");
    expect(await claim(free)).toBeNull(); // an exclusive job waits for the sharers
    await requestCancel(t.db, x4.id); // leaves the queue to the next test
  });

  it("concurrent claims of one agent never start two exclusive GPU jobs on its one GPU", async () => {
    const a = await gpuAgent("racing", 1);
    const jobs = await Promise.all([gpuJob("r1"), gpuJob("r2"), gpuJob("r3"), gpuJob("r4")]);
    const claims = await Promise.all([claim(a), claim(a), claim(a), claim(a)]);
    const started = claims.filter((c) => c !== null);
    expect(started).toHaveLength(1);
    expect(jobs.map((j) => j.id)).toContain(started[0]?.jobId);
  });
});

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

/** Runs whatever the earlier tests left queued, so the next claims see only the next jobs. */
async function drainQueue() {
  const box = await gpuAgent("drain", 8);
  for (let c = await claim(box); c; c = await claim(box)) await finish(c, box.agentId);
}

describe("a train job of training.gpus = 2", () => {
  it("goes only to an agent with 2 free GPUs, and holds both while it runs", async () => {
    await drainQueue();
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
