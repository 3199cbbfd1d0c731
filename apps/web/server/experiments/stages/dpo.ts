import { stageJobs } from "@agentlab/db";
import {
  DomainError,
  dpoJobPayload,
  dpoJobRequirements,
  dpoStartKey,
  isTerminal,
  pairsKey,
  parseJobResult,
  type StageOutputs,
} from "@agentlab/core";
import { dpoRound } from "./dpo-start";
import { heldOutStep } from "./dpo-held-out";
import { recordedOutput, type StageCtx, type StageResult } from "./context";

// `dpo:s<seed>:r<k>`: one dpo job per seed on the round's filtered pairs, from the round's
// start policy (also its frozen reference). The stage keeps every epoch's snapshot (and archive)
// for the dev evaluation, with the epoch's mean reward margin and preference accuracy, and each
// epoch's Δ log-prob on held-out dev pairs (./dpo-held-out.ts, a score job).

export function dpoOutput(c: StageCtx, key: string): StageOutputs["dpo"] | undefined {
  return recordedOutput(c, key, "dpo");
}

export async function dpoStage(c: StageCtx): Promise<StageResult<"dpo">> {
  const { round, dpo } = dpoRound(c);
  const t = c.stage.target;
  if (t?.model !== "dpo") throw new Error("dpo stage without a seed");
  const start = recordedOutput(c, dpoStartKey(round), "dpo_start");
  const pairs = recordedOutput(c, pairsKey(round), "pairs");
  if (!start || !pairs?.pairsHash)
    throw new DomainError("PRECONDITION_FAILED", `round ${round} has no filtered pairs to train on`);
  const job = await c.services.queue.enqueue({
    type: "dpo",
    experimentId: c.experimentId,
    dedupeKey: `exp:${c.experimentId}:${c.stage.key}`,
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    payload: dpoJobPayload(c.config, dpo, {
      seed: t.seed,
      pairsHash: pairs.pairsHash,
      start: start.adapter,
      scoreOnly: false,
    }),
    requirements: dpoJobRequirements(c.config),
  });
  const base = { round, jobId: job.id, start: start.start, pairCount: pairs.stored };
  const [j] = await stageJobs(c.services.db, [job.id]);
  if (!j || !isTerminal(j.state)) return { state: "running", output: base, jobIds: [job.id] };
  if (j.state !== "succeeded")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `DPO seed ${t.seed} round ${round} ${j.state}: ${j.error ?? j.terminalReason ?? "no error given"}`,
    );
  const record = parseJobResult("dpo", j.result);
  if (!record || record.mode !== "train" || record.snapshots.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `DPO seed ${t.seed} round ${round} returned no run record with snapshots`,
    );
  const method = c.config.training.method;
  if (method && record.method !== method)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `DPO seed ${t.seed} round ${round} ran ${record.method}, the experiment resolved ${method}`,
    );
  const snapshots = record.snapshots.map((s) => ({
    epoch: s.epoch,
    path: s.path,
    sha256: s.sha256,
    artifact: s.artifact,
    rewardMargin: s.reward_margin,
    preferenceAccuracy: s.preference_accuracy,
  }));
  const trained = { ...base, method: record.method, pairCount: record.pair_count, snapshots };
  const held = await heldOutStep(c, { dpo, start: start.adapter, snapshots });
  return {
    state: held.done ? "succeeded" : "running",
    output: { ...trained, heldOut: held.heldOut },
    jobIds: [job.id, ...held.jobIds],
  };
}
