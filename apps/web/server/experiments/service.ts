import {
  countGpuAgents,
  getExperiment,
  getSplit,
  insertExperiment,
  listStages,
  setExperimentState,
  stageJobs,
  updateStage,
  type Db,
  type ExperimentRow,
} from "@agentlab/db";
import {
  DomainError,
  ExperimentConfig,
  dpoRecipeOf,
  grpoRecipeOf,
  parseStageOutput,
  stagePlan,
  type ExperimentConfigInput,
  type GenerationSplit,
  type StageKind,
  type TrainMethod,
} from "@agentlab/core";
import type { Services } from "../services";
import { emptyEval, forgetFailedGenerations } from "./evaluate";
import { refuseUnfitRecipe } from "./memory-fit";

/**
 * Resolves everything that would otherwise depend on the agent that claims a job: the device and
 * dtype of every generation and the training method of every seed. "auto" reads the enrolled
 * agents once, now: CUDA when one of them has a GPU, CPU otherwise. NF4 QLoRA is used only when
 * the recipe asks for nf4 (bitsandbytes availability is a property of one agent, not of the recipe).
 */
export async function resolveProtocol(db: Db, config: ExperimentConfig): Promise<ExperimentConfig> {
  const cuda = (await countGpuAgents(db)) > 0;
  const ev = config.evaluation;
  const device = ev.device === "auto" ? (cuda ? "cuda" : "cpu") : ev.device;
  const dtype = ev.dtype === "auto" ? (device === "cuda" ? "bfloat16" : "float32") : ev.dtype;
  if (device === "cpu" && dtype === "bfloat16")
    throw new DomainError("BAD_REQUEST", "bfloat16 generation needs the cuda device");
  const q = config.training.quantization;
  const trainCuda = q === "nf4" || (device === "cuda" && cuda);
  const method: TrainMethod =
    config.training.method ?? (q === "nf4" ? "qlora-nf4" : trainCuda ? "lora-bf16" : "lora-fp32");
  if (method === "qlora-nf4" && q === "none")
    throw new DomainError("BAD_REQUEST", "training method qlora-nf4 contradicts quantization none");
  if (method === "qlora-nf4" && config.training.parallel === "fsdp")
    throw new DomainError(
      "BAD_REQUEST",
      'training.parallel "fsdp" does not shard NF4-quantized bases: quantization nf4 resolves to qlora-nf4; use quantization none or parallel ddp',
    );
  // The recipe schema refuses gpus > 1 with an explicit lora-fp32; an unset method resolved to it
  // (no GPU agent enrolled) would otherwise start N CPU processes or never be claimed.
  const gpus = config.training.gpus;
  if (gpus > 1 && method === "lora-fp32")
    throw new DomainError(
      "BAD_REQUEST",
      `training.gpus = ${gpus} needs GPUs, but no enrolled agent has one, so the method would resolve to lora-fp32 (CPU): set training.gpus to 1, or training.method to lora-bf16 or qlora-nf4 and enroll a GPU agent`,
    );
  // sft+dpo without a dpo block gets the defaults now, so the stored recipe says what ran.
  const dpo = dpoRecipeOf(config);
  const grpo = grpoRecipeOf(config);
  return {
    ...config,
    evaluation: { ...ev, device, dtype },
    training: { ...config.training, method },
    ...(dpo ? { dpo } : {}),
    ...(grpo ? { grpo } : {}),
  };
}

/** Validates the recipe against its frozen split and writes the experiment with its pending stages; the runner picks it up. */
export async function createExperiment(
  db: Db,
  input: ExperimentConfigInput,
  createdBy: string | null,
): Promise<ExperimentRow> {
  const config = await resolveProtocol(db, ExperimentConfig.parse(input));
  await refuseUnfitRecipe(db, config);
  const split = await getSplit(db, config.splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  if (!split.frozen) throw new DomainError("PRECONDITION_FAILED", "experiments need a frozen split");
  const stages = stagePlan(config).map((s) => ({ key: s.key, kind: s.kind }));
  return insertExperiment(db, {
    name: config.name,
    splitId: config.splitId,
    config,
    createdBy,
    stages,
  });
}

/**
 * A failed experiment continues from where it stopped: its failed stages go back to running and
 * keep their outputs (stored answers, claimed test run, job ids), so a failure before the report —
 * a lost grade job, an unreadable record, a transient refusal — never wastes the once-only test
 * generation. Canceled and succeeded experiments are not resumed.
 */
/** The stages that generate answers, and on which split (sample, grpo_sample: the start policy's answers on train). */
const SPLIT_OF: Partial<Record<StageKind, GenerationSplit>> = {
  dev_eval: "dev",
  test_eval: "test",
  sample: "train",
  grpo_sample: "train",
};

export async function resumeExperiment(db: Db, id: string): Promise<void> {
  const exp = await getExperiment(db, id);
  if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
  if (exp.state !== "failed")
    throw new DomainError("PRECONDITION_FAILED", `only a failed experiment can be resumed (this one is ${exp.state})`);
  for (const s of await listStages(db, id)) {
    if (s.state !== "failed") continue;
    // An evaluation whose generate job failed gets a fresh one (never one whose answers exist).
    const split = SPLIT_OF[s.kind];
    const recorded =
      s.kind === "dev_eval" || s.kind === "test_eval" || s.kind === "sample" || s.kind === "grpo_sample"
        ? parseStageOutput(s.kind, s.key, s.output)
        : null;
    const output = split ? await forgetFailedGenerations(db, id, split, { ...emptyEval(), ...recorded }) : null;
    await updateStage(db, id, s.key, {
      state: "running",
      error: null,
      ...(output ? { output: { ...recorded, ...output } } : {}),
    });
  }
  await setExperimentState(db, id, "running");
}

/** Stops advancing a running experiment (canceled, with why) and cancels its unfinished jobs. */
export async function cancelExperiment(
  services: Pick<Services, "db" | "queue">,
  id: string,
  reason: string,
): Promise<void> {
  await setExperimentState(services.db, id, "canceled", reason);
  const ids = (await listStages(services.db, id)).flatMap((s) => s.jobIds);
  for (const j of await stageJobs(services.db, ids))
    if (j.state === "queued" || j.state === "running") await services.queue.cancel(j.id);
}
