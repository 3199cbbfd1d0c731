import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  attachArtifact,
  claimJob,
  enqueueJob,
  finishAttempt,
  recordArtifactBlob,
  recordProgress,
  updateStage,
} from "@agentlab/db";
import { sha256Hex } from "@agentlab/core";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { baseConfig, makeAgent, makeServices, makeSplit, makeUser, startExperiment } from "./experiments-harness";

// The experiment page's training panel: the trainer's progress events, stored as job progress by
// the real fenced write path, read back per seed with epoch marks, eval loss per epoch and ETA.

let t: TestDb;
let s: Services;
const createCaller = createCallerFactory(appRouter);
let viewer: ReturnType<typeof createCaller>;

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  const u = await makeUser(t.db, "viewer");
  const ctx: Context = {
    ...s,
    viewer: { userId: u.id, email: u.email, name: u.name, role: "viewer", via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  };
  viewer = createCaller(ctx);
});
afterAll(async () => t?.drop());

const event = (step: number, epoch: number, loss: number) => ({
  event: "progress",
  step,
  total_steps: 8,
  epoch,
  epoch_progress: (step % 4) / 4,
  loss,
  lr: 2e-4 * (1 - step / 8),
  tokens_per_s: 1000 + step,
  eta_s: (8 - step) * 5,
  memory_mb: 512,
});

describe("training curves", () => {
  it("reads each seed's steps, epoch marks, per-epoch eval loss and ETA while training, and the run record after", async () => {
    const { splitId } = await makeSplit(t.db);
    const id = await startExperiment(s, baseConfig(splitId, { seeds: [1, 2] }));
    const fit = await makeAgent(t.db, { shellJobs: true }); // shell jobs stand in for the train and dpo jobs
    // Stand-in for the train job: the panel reads the stage's job and its attempt, whatever the job runs.
    const job = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] } });
    await updateStage(t.db, id, "train:s1", { state: "running", jobIds: [job.id] });
    const claimed = await claimJob(t.db, { ...fit, shellJobs: true });
    if (!claimed) throw new Error("not claimed");
    const at = claimed.attemptId;
    for (const [seq, [step, epoch, loss]] of [
      [1, 1, 2.0],
      [2, 1, 1.6],
      [3, 1, 1.5],
      [4, 1, 1.3],
      [5, 2, 1.2],
      [6, 2, 1.1],
    ].entries()) {
      expect(await recordProgress(t.db, fit.agentId, job.id, at, seq, event(step ?? 0, epoch ?? 0, loss ?? 0))).toBe(
        true,
      );
    }
    // A stale attempt's progress is refused by the fence, so it never reaches the curve (positive control: the writes above were accepted).
    expect(
      await recordProgress(t.db, fit.agentId, job.id, "00000000-0000-4000-8000-000000000099", 99, event(7, 2, 9)),
    ).toBe(false);
    const sha = sha256Hex("adapter-1");
    await recordArtifactBlob(t.db, sha, 10);
    expect(
      await attachArtifact(t.db, fit.agentId, {
        jobId: job.id,
        attemptId: at,
        name: "adapter-epoch-1",
        kind: "adapter",
        sha256: sha,
        meta: { epoch: 1, trainLoss: 1.55, evalLoss: 1.7 },
      }),
    ).toBe(true);

    const [s1, s2] = await viewer.runs.training({ id });
    expect(s1).toMatchObject({
      seed: 1,
      jobState: "running",
      marks: [{ epoch: 2, step: 5 }],
      epochs: [{ epoch: 1, step: 4, trainLoss: 1.55, evalLoss: 1.7 }],
      etaS: 10,
    });
    expect(s1?.points.map((p) => p.loss)).toEqual([2, 1.6, 1.5, 1.3, 1.2, 1.1]);
    expect(s1?.fraction).toBeCloseTo(6 / 8, 12);
    expect(s2).toMatchObject({ seed: 2, stageState: "pending", points: [], fraction: null, etaS: null });

    const result = {
      snapshots: [
        { epoch: 1, step: 4, train_loss: 1.5, eval_loss: 1.69 },
        { epoch: 2, step: 8, train_loss: 1.05, eval_loss: 1.4 },
      ],
    };
    await finishAttempt(
      t.db,
      { jobId: job.id, attemptId: at, reason: "succeeded", exitCode: 0, signal: null, result, error: null },
      fit.agentId,
    );
    await updateStage(t.db, id, "train:s1", { state: "succeeded" });
    const [done] = await viewer.runs.training({ id });
    expect(done).toMatchObject({ jobState: "succeeded", fraction: 1, etaS: null });
    expect(done?.epochs.map((e) => [e.epoch, e.evalLoss])).toEqual([
      [1, 1.69],
      [2, 1.4],
    ]);
  });

  it("a retried run that resumed continues the curve with a restart mark; its claim hands back the earlier attempt's adapters and state", async () => {
    const { splitId } = await makeSplit(t.db);
    const id = await startExperiment(s, baseConfig(splitId, { seeds: [1] }));
    const fit = await makeAgent(t.db, { shellJobs: true });
    const job = await enqueueJob(t.db, { type: "shell", payload: { argv: ["true"] }, maxAttempts: 2 });
    await updateStage(t.db, id, "train:s1", { state: "running", jobIds: [job.id] });
    const first = await claimJob(t.db, { ...fit, shellJobs: true });
    if (!first) throw new Error("not claimed");
    expect(first.earlierArtifacts).toEqual([]);
    for (const [seq, step] of [1, 2, 3, 4, 5].entries())
      await recordProgress(
        t.db,
        fit.agentId,
        job.id,
        first.attemptId,
        seq,
        event(step, step <= 4 ? 1 : 2, 3 - step / 4),
      );
    const upload = async (name: string, kind: string, meta: Record<string, unknown>) => {
      const sha = sha256Hex(`${job.id}:${name}`);
      await recordArtifactBlob(t.db, sha, 10);
      await attachArtifact(t.db, fit.agentId, {
        jobId: job.id,
        attemptId: first.attemptId,
        name,
        kind,
        sha256: sha,
        meta,
      });
      return sha;
    };
    const adapter = await upload("adapter-epoch-1", "adapter", { epoch: 1, trainLoss: 2.5, evalLoss: 2.6 });
    const state = await upload("trainer-state-epoch-1", "trainer_state", { epoch: 1 });
    await upload("log-bundle", "logs", {}); // not a kind a job resumes from
    // The agent is lost mid-epoch 2: the attempt ends as an infra error and the job is retried.
    await finishAttempt(
      t.db,
      {
        jobId: job.id,
        attemptId: first.attemptId,
        reason: "infra_error",
        exitCode: null,
        signal: null,
        result: {},
        error: "agent lost",
      },
      fit.agentId,
    );
    const second = await claimJob(t.db, { ...fit, shellJobs: true });
    if (!second) throw new Error("not claimed again");
    expect(second.attempt).toBe(2);
    expect(second.earlierArtifacts.map((a) => [a.kind, a.sha256, a.meta.epoch])).toEqual([
      ["adapter", adapter, 1],
      ["trainer_state", state, 1],
    ]);
    // Resumed after epoch 1: the second attempt reports from step 5 on (its step 5 replaces the lost one's).
    for (const [seq, step] of [5, 6, 7, 8].entries())
      await recordProgress(t.db, fit.agentId, job.id, second.attemptId, seq, event(step, 2, 1 - step / 16));
    const [run] = await viewer.runs.training({ id });
    expect(run?.restarts).toEqual([{ attempt: 2, step: 5, resumed: true }]);
    expect(run?.points.map((p) => [p.step, p.loss])).toEqual([
      [1, 2.75],
      [2, 2.5],
      [3, 2.25],
      [4, 2],
      [5, 1 - 5 / 16],
      [6, 1 - 6 / 16],
      [7, 1 - 7 / 16],
      [8, 0.5],
    ]);
    expect(run?.epochs.map((e) => e.epoch)).toContain(1); // the lost attempt's adapter still counts
  });
});
