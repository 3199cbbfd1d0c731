import { DomainError, dpoStartKey, modelKey, pairSourcesOf, samplingConfig } from "@agentlab/core";
import { advanceEvaluation, emptyEval } from "../evaluate";
import { splitTasks } from "../tasks";
import { dpoRound } from "./dpo-start";
import { ownOutput, recordedOutput, type StageCtx, type StageResult } from "./context";

// `sample:r<k>`: n sampled answers per TRAIN task from the round's start policy, generated
// and graded exactly like an evaluation (../evaluate.ts: stored answers, batched grading, bounded
// retries, no verdict never read as a failure), under the recipe's protocol with the DPO block's
// sampling. Its graded failures become the rejected answers of the round's cross-state pairs, its
// passes and failures the on-policy pairs; a recipe with near-miss or episode-branch pairs only
// samples nothing.

export async function sampleStage(c: StageCtx): Promise<StageResult<"sample">> {
  const { round, dpo } = dpoRound(c);
  const start = recordedOutput(c, dpoStartKey(round), "dpo_start");
  if (!start) throw new DomainError("PRECONDITION_FAILED", `no start policy recorded for round ${round}`);
  const model = { key: modelKey(start.start), adapter: start.adapter, trainingMethod: start.trainingMethod };
  const sources = pairSourcesOf(dpo);
  // Near-miss and episode-branch pairs need no sampled answer (both sides are graded already): nothing to generate.
  if (!sources.includes("cross_state") && !sources.includes("on_policy"))
    return {
      state: "succeeded",
      output: { ...emptyEval(), round, policy: start.start, modelKey: model.key },
      jobIds: [],
    };
  const tasks = await splitTasks(c.services.db, c.config.splitId, "train");
  const step = await advanceEvaluation(
    c.services,
    { experimentId: c.experimentId, config: samplingConfig(c.config, dpo), split: "train", tasks, models: [model] },
    { ...emptyEval(), ...ownOutput(c, "sample") },
  );
  return {
    state: step.state,
    output: { ...step.output, round, policy: start.start, modelKey: model.key },
    jobIds: step.jobIds,
  };
}
