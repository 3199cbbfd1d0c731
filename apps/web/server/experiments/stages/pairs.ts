import { insertPreferencePairs, stageJobs, useEpisodesForTraining } from "@agentlab/db";
import {
  DomainError,
  applyMarginFilter,
  dpoJobPayload,
  dpoJobRequirements,
  dpoStartKey,
  isTerminal,
  pairSourcesOf,
  pairStats,
  pairsJsonl,
  parseJobResult,
  sampleKey,
  sha256Hex,
  type StageOutputs,
} from "@agentlab/core";
import { publishBlob } from "../../artifacts/publish";
import { roundPairs } from "../pair-inputs";
import { splitTasks } from "../tasks";
import { dpoRound } from "./dpo-start";
import { ownOutput, recordedOutput, type StageCtx, type StageResult } from "./context";

// `pairs:r<k>`: the round's pairs from the recipe's pair sources (../pair-inputs.ts), scored
// under the start policy by a dpo score job (log-prob of chosen minus rejected: the margin before
// training, recorded per pair; it filters only a recipe that opts in: at step 1 it does not change a
// pair's loss, core MarginFilter), stored in preference_pairs (train tasks only: the database refuses others) and
// published as the JSONL the round's DPO jobs train on. Re-entrant: the pairs are rebuilt from the stored answers at
// each step and must hash to what was scored.

export async function pairsStage(c: StageCtx): Promise<StageResult<"pairs">> {
  const { round, dpo } = dpoRound(c);
  const start = recordedOutput(c, dpoStartKey(round), "dpo_start");
  const sample = recordedOutput(c, sampleKey(round), "sample");
  const data = recordedOutput(c, "dataset", "dataset");
  if (!start || !sample?.modelKey)
    throw new DomainError("PRECONDITION_FAILED", `round ${round} has no sampled answers`);
  if (!data) throw new DomainError("PRECONDITION_FAILED", "no SFT dataset recorded: the chosen answers come from it");
  const built = await roundPairs(c.services.db, {
    experimentId: c.experimentId,
    splitId: c.config.splitId,
    datasetId: data.datasetId,
    policyKey: sample.modelKey,
    tasks: await splitTasks(c.services.db, c.config.splitId, "train"),
    sources: pairSourcesOf(dpo),
    promptVariant: c.config.training.promptVariant,
  });
  const skipped: Record<string, number> = {};
  for (const s of built.skipped) skipped[s.reason] = (skipped[s.reason] ?? 0) + 1;
  if (built.pairs.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `round ${round}: no preference pair could be built from ${start.label}'s train answers (skipped: ${JSON.stringify(skipped)})`,
    );
  const jsonl = pairsJsonl(built.pairs);
  const prev = ownOutput(c, "pairs");
  let out: StageOutputs["pairs"] = {
    round,
    policy: start.start,
    built: built.pairs.length,
    skipped,
    tasksWithoutPairs: built.tasksWithoutPairs,
    builtHash: prev?.builtHash,
    scoreJobId: prev?.scoreJobId,
  };
  if (out.builtHash && out.builtHash !== sha256Hex(jsonl))
    throw new DomainError("INTERNAL", `round ${round}: the rebuilt pairs differ from the scored ones`);
  if (!out.scoreJobId) {
    const builtHash = await publishBlob(c.services, Buffer.from(jsonl));
    const job = await c.services.queue.enqueue({
      type: "dpo",
      experimentId: c.experimentId,
      dedupeKey: `exp:${c.experimentId}:${c.stage.key}:score`,
      maxDurationS: 24 * 3600,
      maxAttempts: 2,
      payload: dpoJobPayload(c.config, dpo, {
        seed: c.config.seeds[0] ?? 0,
        pairsHash: builtHash,
        start: start.adapter,
        scoreOnly: true,
      }),
      requirements: dpoJobRequirements(c.config),
    });
    out = { ...out, builtHash, scoreJobId: job.id };
  }
  const scoreJobId = out.scoreJobId ?? "";
  const [j] = await stageJobs(c.services.db, [scoreJobId]);
  if (!j || !isTerminal(j.state)) return { state: "running", output: out, jobIds: [scoreJobId] };
  const record = j.state === "succeeded" ? parseJobResult("dpo", j.result) : null;
  if (!record || record.mode !== "score")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `round ${round}: scoring the pairs ${j.state}: ${j.error ?? (record ? "not a score record" : "unreadable result")}`,
    );
  const filtered = applyMarginFilter(built.pairs, record.pairs, dpo.marginFilter);
  if (filtered.kept.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `round ${round}: the start policy already prefers every one of its ${built.pairs.length} pairs by more than ${dpo.marginFilter.threshold}: nothing to train on`,
    );
  // Episodes a pair trains on are training uses like an SFT snapshot's (refused unless on train tasks of the frozen split).
  const episodeIds = filtered.kept.flatMap((p) => [p.chosenEpisodeId ?? [], p.rejectedEpisodeId ?? []].flat());
  if (episodeIds.length)
    await useEpisodesForTraining(c.services.db, {
      splitId: c.config.splitId,
      episodeIds: [...new Set(episodeIds)],
      purpose: `dpo:${c.experimentId}:r${round}`,
    });
  // All or none, idempotent per pair key: a re-run after a crash writes nothing twice.
  await insertPreferencePairs(c.services.db, { experimentId: c.experimentId, round, pairs: filtered.kept });
  const stored = filtered.kept.length;
  const pairsHash = await publishBlob(c.services, Buffer.from(pairsJsonl(filtered.kept)));
  return {
    state: "succeeded",
    output: {
      ...out,
      pairsHash,
      stored,
      stats: pairStats(filtered.kept, filtered.dropped, filtered.counts.downweighted),
    },
    jobIds: [scoreJobId],
  };
}
