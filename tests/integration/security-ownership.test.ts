import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { EnqueueJob, trainKey } from "@agentlab/core";
import { enqueueJob, getJob, jobs } from "@agentlab/db";
import { userCaller, type Caller } from "./helpers/callers";
import { startTestServer, type TestServer } from "./helpers/server";

// A member must not be able to steer another user's experiment: the dedupe keys the runner finds
// its stage jobs by are the server's, and a key that holds other work is refused, not adopted.

let s: TestServer;
const ids = { member: "", victim: "" };
const callers: Partial<Record<keyof typeof ids, Caller>> = {};
const as = (who: keyof typeof ids): Caller => {
  const c = callers[who];
  if (!c) throw new Error(`no caller ${who}`);
  return c;
};

beforeAll(async () => {
  s = await startTestServer();
  for (const who of ["member", "victim"] as const) {
    const { userId, caller } = await userCaller(s.app.services, "member", `${who}@lab.test`);
    ids[who] = userId;
    callers[who] = caller;
  }
});
afterAll(async () => {
  await s?.close();
});

const trainJob = (lr: number) => ({
  type: "train" as const,
  maxAttempts: 2,
  payload: {
    datasetHash: "a".repeat(64),
    spec: {
      base_model: "tiny",
      epochs: 1,
      batch_size: 2,
      grad_accum: 1,
      max_length: 64,
      seed: 1,
      learning_rate: lr,
      lr_schedule: "constant" as const,
      device: "cpu" as const,
      local_files_only: true,
      lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj"] },
    },
  },
});

describe("dedupe keys and experiments are the server's", () => {
  it("jobs.create refuses an experiment id or a dedupe key, naming the field", async () => {
    const experimentId = randomUUID();
    const key = `exp:${experimentId}:${trainKey(1)}`;
    // Positive control: the old input schema of jobs.create (EnqueueJob) took both fields.
    expect(EnqueueJob.safeParse({ ...trainJob(1e-7), experimentId, dedupeKey: key }).success).toBe(true);
    await expect(as("member").jobs.create({ ...trainJob(1e-7), dedupeKey: key } as never)).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("dedupeKey"),
    });
    await expect(as("member").jobs.create({ ...trainJob(1e-7), experimentId } as never)).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("experimentId"),
    });
    expect(await s.db.db.select().from(jobs)).toEqual([]);
  });

  it("a job made through jobs.create records its creator, and the job page returns them", async () => {
    const job = await as("member").jobs.create(trainJob(0.01));
    expect(job.createdBy).toBe(ids.member);
    const page = await as("victim").jobs.byId({ id: job.id });
    expect(page.creator).toEqual({ id: ids.member, name: "member" });
    await as("member").jobs.cancel({ id: job.id });
  });

  it("a key that holds different work is refused, so the runner never adopts a planted job", async () => {
    const experimentId = randomUUID();
    const key = `exp:${experimentId}:${trainKey(1)}`;
    // The attack as the old jobs.create let a member do it: a train job under the victim's
    // predictable key with another learning rate, enqueued before the runner's.
    const planted = await enqueueJob(s.db.db, { ...trainJob(1e-7), dedupeKey: key, createdBy: ids.member });
    // What the runner enqueues for the victim's train stage.
    const runner = { ...trainJob(0.01), dedupeKey: key };
    await expect(s.app.services.queue.enqueue(runner)).rejects.toMatchObject({
      code: "CONFLICT",
      message: expect.stringContaining("payload"),
    });
    // The planted job is untouched and still says whose it is.
    expect(await getJob(s.db.db, planted.id)).toMatchObject({ createdBy: ids.member, dedupeKey: key });

    // Positive control: the same work under a key is adopted (idempotent enqueue, what lets the
    // runner restart) — the conflict above is the payload check, not the key alone.
    const other = `exp:${experimentId}:${trainKey(2)}`;
    const first = await s.app.services.queue.enqueue({ ...trainJob(0.01), dedupeKey: other });
    const again = await s.app.services.queue.enqueue({ ...trainJob(0.01), dedupeKey: other });
    expect(again.id).toBe(first.id);
    // And the requirements count as the work too (a planted job could route itself elsewhere).
    await expect(
      s.app.services.queue.enqueue({ ...trainJob(0.01), dedupeKey: other, requirements: { labels: ["mine"] } }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("requiredLabels") });
    // Many at once: one mismatch refuses the batch, and none of it is inserted.
    await expect(
      s.app.services.queue.enqueueMany([
        { ...trainJob(0.01), dedupeKey: `${other}:x` },
        { ...trainJob(0.5), dedupeKey: other },
      ]),
    ).rejects.toMatchObject({ code: "CONFLICT" });
    expect((await s.db.db.select().from(jobs)).map((j) => j.dedupeKey)).not.toContain(`${other}:x`);
  });
});
