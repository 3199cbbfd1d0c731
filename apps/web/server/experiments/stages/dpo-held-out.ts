import { stageJobs } from "@agentlab/db";
import {
  dpoJobRequirements,
  isTerminal,
  pairsJsonl,
  parseJobResult,
  scoreJobPayload,
  type DpoRecipe,
  type DpoStartAdapter,
  type HeldOutScore,
} from "@agentlab/core";
import { publishBlob } from "../../artifacts/publish";
import { heldOutPairs } from "../held-out-pairs";
import { splitTasks } from "../tasks";
import { ownOutput, type StageCtx } from "./context";

// After a DPO run: its epoch snapshots scored on held-out dev pairs by a `score` job (log-prob of
// chosen and rejected under the start policy and each epoch). A diagnostic, not a gate: when there
// are no held-out pairs (no dev task has a passed audit) or the job fails, the output says so and
// the stage goes on; the DPO panel shows each epoch's held-out Δ and warns when the chosen one fell.

export type Snapshot = { epoch: number; sha256: string; artifact: string | null };

export async function heldOutStep(
  c: StageCtx,
  run: { dpo: DpoRecipe; start: DpoStartAdapter; snapshots: readonly Snapshot[] },
): Promise<{ done: boolean; heldOut: HeldOutScore; jobIds: string[] }> {
  const prev = ownOutput(c, "dpo")?.heldOut;
  if (prev?.epochs || prev?.note) return { done: true, heldOut: prev, jobIds: prev.jobId ? [prev.jobId] : [] };
  let heldOut: HeldOutScore = prev ?? { pairs: 0, tasks: 0 };
  if (!heldOut.jobId) {
    const built = await heldOutPairs(c.services.db, {
      splitId: c.config.splitId,
      devTasks: await splitTasks(c.services.db, c.config.splitId, "dev"),
      promptVariant: c.config.training.promptVariant,
    });
    heldOut = { pairs: built.pairs.length, tasks: built.tasks };
    if (built.pairs.length === 0)
      return {
        done: true,
        heldOut: { ...heldOut, note: "no held-out pairs: no dev task has a passed audit" },
        jobIds: [],
      };
    const snapshots = run.snapshots.flatMap((s) => (s.artifact ? [{ ...s, artifact: s.artifact }] : []));
    if (snapshots.length === 0)
      return { done: true, heldOut: { ...heldOut, note: "no epoch snapshot has an archive to score" }, jobIds: [] };
    const pairsHash = await publishBlob(c.services, Buffer.from(pairsJsonl(built.pairs)));
    const job = await c.services.queue.enqueue({
      type: "score",
      experimentId: c.experimentId,
      dedupeKey: `exp:${c.experimentId}:${c.stage.key}:held-out`,
      maxDurationS: 24 * 3600,
      maxAttempts: 2,
      payload: scoreJobPayload(c.config, run.dpo, { pairsHash, start: run.start, snapshots }),
      requirements: dpoJobRequirements(c.config),
    });
    heldOut = { ...heldOut, pairsHash, jobId: job.id };
  }
  const jobId = heldOut.jobId ?? "";
  const [j] = await stageJobs(c.services.db, [jobId]);
  if (!j || !isTerminal(j.state)) return { done: false, heldOut, jobIds: [jobId] };
  const record = j.state === "succeeded" ? parseJobResult("score", j.result) : null;
  if (!record)
    return {
      done: true,
      heldOut: { ...heldOut, note: `held-out scoring ${j.state}: ${j.error ?? "unreadable result"}` },
      jobIds: [jobId],
    };
  const epochs = record.policies.map((p) => ({
    epoch: Number(p.name.replace(/^epoch-/, "")),
    chosenLogpDelta: p.chosen_logp_delta,
    rejectedLogpDelta: p.rejected_logp_delta,
    marginGainRate: p.margin_gain_rate,
    warning: p.logp_warning,
  }));
  return { done: true, heldOut: { ...heldOut, epochs }, jobIds: [jobId] };
}
