import { grpoPromptTasks, insertGrpoPrompts, stageJobs } from "@agentlab/db";
import {
  DomainError,
  GRPO_SAMPLE_KEY,
  grpoJobPayload,
  grpoJobRequirements,
  grpoRecipeOf,
  isTerminal,
  modelLabel,
  parseJobResult,
  publicContext,
  renderRepairPrompt,
  type GrpoJobResult,
  type StageOutputs,
} from "@agentlab/core";
import { splitTasks } from "../tasks";
import { evalModelOf } from "./models";
import { grpoSampleOutput, grpoStart } from "./grpo-sample";
import { ownOutput, recordedOutput, type StageCtx, type StageResult } from "./context";

// `grpo:s<seed>`: one seed's online RL run. Its start is the dev selection among the base and every
// SFT epoch (a tie keeps the base, so GRPO may start from the base), recorded at the first step. Its
// prompts are every train task's repair prompt (with the recipe's pass-rate filter, only the tasks
// grpo_sample kept, measured under the same start), stored in grpo_prompts before the job exists (the
// database refuses a dev or test task there) and the job is built from the stored rows. The output
// keeps every snapshot (one per K steps) for the dev evaluation and the run's hack-audit totals.

type GrpoOut = StageOutputs["grpo"];

export function grpoOutput(c: StageCtx, key: string): GrpoOut | undefined {
  return recordedOutput(c, key, "grpo");
}

async function startAndPrompts(c: StageCtx, seed: number, filtered: boolean): Promise<GrpoOut> {
  // With the pass-rate filter the start and the kept tasks are grpo_sample's (measured under that start).
  const sample = filtered ? grpoSampleOutput(c, GRPO_SAMPLE_KEY) : undefined;
  if (filtered && (!sample?.start || !sample.kept || !sample.filter))
    throw new DomainError(
      "PRECONDITION_FAILED",
      `${GRPO_SAMPLE_KEY} recorded no pass-rate filter to take prompts from`,
    );
  const { start, reason } = sample?.start
    ? { start: sample.start, reason: sample.startReason ?? "" }
    : await grpoStart(c);
  const keep = sample?.kept ? new Set(sample.kept) : null;
  const train = (await splitTasks(c.services.db, c.config.splitId, "train")).filter((t) => !keep || keep.has(t.id));
  const prompts = await insertGrpoPrompts(c.services.db, {
    experimentId: c.experimentId,
    seed,
    prompts: train.map((task) => ({
      taskId: task.id,
      prompt: renderRepairPrompt(publicContext(task, c.config.training.promptVariant)),
    })),
  });
  return {
    start,
    startLabel: modelLabel(start),
    startReason: reason,
    adapter: evalModelOf(c, start).adapter,
    prompts,
    ...(sample?.filter ? { promptFilter: sample.filter } : {}),
  };
}

/** The run's audit summed over its steps: completions per flagged verdict kind and per judge flag. */
function auditTotals(record: GrpoJobResult): Record<string, number> {
  const out: Record<string, number> = { tampered: 0, timeout: 0, resource_limit: 0, unparseable: 0, infra_error: 0 };
  for (const s of record.step_metrics) {
    for (const k of ["tampered", "timeout", "resource_limit", "unparseable", "infra_error"] as const)
      out[k] = (out[k] ?? 0) + s.audit[k];
    for (const f of s.audit.flags) out[`flag:${f.flag}`] = (out[`flag:${f.flag}`] ?? 0) + f.count;
  }
  return out;
}

export async function grpoStage(c: StageCtx): Promise<StageResult<"grpo">> {
  const grpo = grpoRecipeOf(c.config);
  const t = c.stage.target;
  if (!grpo || t?.model !== "grpo")
    throw new DomainError("PRECONDITION_FAILED", `${c.stage.key} runs only in an sft+grpo experiment`);
  const filtered = grpo.dynamicSampling?.passRateFilter === true;
  const begun = ownOutput(c, "grpo") ?? (await startAndPrompts(c, t.seed, filtered));
  const keys = new Set(await grpoPromptTasks(c.services.db, { experimentId: c.experimentId, seed: t.seed }));
  const tasks = (await splitTasks(c.services.db, c.config.splitId, "train")).filter((x) => keys.has(x.id));
  if (tasks.length === 0) throw new DomainError("PRECONDITION_FAILED", "the split has no train task to do GRPO on");
  const job = await c.services.queue.enqueue({
    type: "grpo",
    experimentId: c.experimentId,
    dedupeKey: `exp:${c.experimentId}:${c.stage.key}`,
    maxDurationS: 7 * 24 * 3600,
    maxAttempts: 2,
    payload: grpoJobPayload(c.config, grpo, { seed: t.seed, tasks, start: begun.adapter }),
    requirements: grpoJobRequirements(c.config),
  });
  const base = { ...begun, jobId: job.id };
  const [j] = await stageJobs(c.services.db, [job.id]);
  if (!j || !isTerminal(j.state)) return { state: "running", output: base, jobIds: [job.id] };
  if (j.state !== "succeeded")
    throw new DomainError(
      "PRECONDITION_FAILED",
      `GRPO seed ${t.seed} ${j.state}: ${j.error ?? j.terminalReason ?? "no error given"}`,
    );
  const record = parseJobResult("grpo", j.result);
  if (!record || record.snapshots.length === 0)
    throw new DomainError("PRECONDITION_FAILED", `GRPO seed ${t.seed} returned no run record with snapshots`);
  const method = c.config.training.method;
  if (method && record.method !== method)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `GRPO seed ${t.seed} ran ${record.method}, the experiment resolved ${method}`,
    );
  const missing = record.snapshots.find((s) => !s.artifact);
  if (missing)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `GRPO seed ${t.seed} snapshot ${missing.epoch} has no uploaded archive`,
    );
  const snapshots = record.snapshots.map((s) => ({
    epoch: s.epoch,
    path: s.path,
    sha256: s.sha256,
    artifact: s.artifact,
    step: s.step,
    rewardMean: s.reward_mean,
  }));
  return {
    state: "succeeded",
    output: {
      ...base,
      method: record.method,
      snapshots,
      steps: record.steps,
      gradedCompletions: record.graded_completions,
      maskedGroups: record.masked_groups,
      audit: auditTotals(record),
      trainTimeS: record.train_time_s,
      gradeTimeS: record.grade_time_s,
    },
    jobIds: [job.id],
  };
}
