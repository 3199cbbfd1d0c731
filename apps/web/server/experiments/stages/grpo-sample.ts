import { trainAnswers } from "@agentlab/db";
import {
  DomainError,
  grpoPromptFilter,
  grpoRecipeOf,
  grpoSamplingConfig,
  modelKey,
  modelLabel,
  selectByDev,
  type ModelRef,
  type StageOutputs,
} from "@agentlab/core";
import { advanceEvaluation, emptyEval } from "../evaluate";
import { splitTasks } from "../tasks";
import { evalModelOf } from "./models";
import { storedDevCandidates } from "./select";
import { ownOutput, recordedOutput, type StageCtx, type StageResult } from "./context";

// `grpo_sample` (recipe grpo.dynamicSampling.passRateFilter): numGenerations sampled answers per
// TRAIN task from GRPO's start policy, generated and graded exactly like the DPO rounds' train
// answers (../evaluate.ts: stored, batch-graded, retried, the generation cache), under the RL run's
// temperature, top-p and completion length (core grpoSamplingConfig). Once graded, each task's pass
// rate decides whether it becomes an RL prompt (core grpoPromptFilter: strictly between 0 and 1).
// One stage for every seed: the start is the same dev selection for all of them.

type Out = StageOutputs["grpo_sample"];

/** GRPO's start: the dev selection among the base and every SFT epoch (a tie keeps the base). */
export async function grpoStart(c: StageCtx): Promise<{ start: ModelRef; reason: string }> {
  const candidates = await storedDevCandidates(c.services.db, c.experimentId, c.config);
  const decision = selectByDev(candidates.filter((d) => d.ref.model === "base" || d.ref.model === "adapter"));
  return { start: decision.selected, reason: decision.reason };
}

/** What the filter recorded, for the grpo stages; undefined when the recipe has no filter. */
export function grpoSampleOutput(c: StageCtx, key: string): Out | undefined {
  return recordedOutput(c, key, "grpo_sample");
}

export async function grpoSampleStage(c: StageCtx): Promise<StageResult<"grpo_sample">> {
  const grpo = grpoRecipeOf(c.config);
  if (!grpo?.dynamicSampling?.passRateFilter)
    throw new DomainError("PRECONDITION_FAILED", `${c.stage.key} runs only with grpo.dynamicSampling.passRateFilter`);
  const prev = ownOutput(c, "grpo_sample");
  const { start, reason } = prev?.start ? { start: prev.start, reason: prev.startReason ?? "" } : await grpoStart(c);
  const model = evalModelOf(c, start);
  const tasks = await splitTasks(c.services.db, c.config.splitId, "train");
  const step = await advanceEvaluation(
    c.services,
    {
      experimentId: c.experimentId,
      config: grpoSamplingConfig(c.config, grpo),
      split: "train",
      tasks,
      models: [model],
    },
    { ...emptyEval(), ...prev },
  );
  const base: Out = {
    ...step.output,
    start,
    startLabel: modelLabel(start),
    startReason: reason,
    modelKey: modelKey(start),
  };
  if (step.state !== "succeeded") return { state: "running", output: base, jobIds: step.jobIds };
  const answers = await trainAnswers(c.services.db, { experimentId: c.experimentId, modelKey: model.key });
  const ids = tasks.map((t) => t.id).sort();
  const { kept, counts } = grpoPromptFilter(ids, answers, grpo.numGenerations);
  if (kept.length === 0)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `no train task has a pass rate strictly between 0 and 1 under ${modelLabel(start)} at n = ${grpo.numGenerations} ` +
        `(${counts.allPass} all pass, ${counts.allFail} all fail, ${counts.unmeasured} without a verdict): nothing for GRPO to learn from`,
    );
  return { state: "succeeded", output: { ...base, filter: counts, kept }, jobIds: step.jobIds };
}
