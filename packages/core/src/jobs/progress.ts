import { z } from "zod";
import { TrainerGrpoStepEvent, TrainerProgressEvent } from "../trainer/events";

// A running job's progress events: what a handler reports, what the server parses where it
// receives them (with the job type's own variant, JOB_CONTRACTS[type].progress) and stores as
// job_progress rows and the job's latest progress. A union by `event`, so every reader (training
// curves, the jobs and audits pages) knows which kind of event a row holds.

/**
 * One optimizer step of a train or dpo job: the Python trainer's own stdout event, forwarded as is.
 * Strict, and the trainer checks what it emits against the JSON Schema generated from it
 * (agentlab_trainer/schemas/progress.json), so both sides read one contract.
 */
export const TrainStepProgress = TrainerProgressEvent.strict();
export type TrainStepProgress = z.infer<typeof TrainStepProgress>;

/** A dpo job's step: the train step with its DPO figures, which every dpo step reports. */
export const DpoStepProgress = TrainStepProgress.required({
  dpo_loss: true,
  sft_loss: true,
  reward_margin: true,
  preference_accuracy: true,
  chosen_reward: true,
  rejected_reward: true,
});
export type DpoStepProgress = z.infer<typeof DpoStepProgress>;

/**
 * One optimizer step of a grpo job: reward mean and spread, zero-variance groups, completion
 * length and truncation, KL (β > 0), judge throughput and the reward-hacking audit (tampered,
 * timeouts, unparseable, infra errors and judge flags of the step's completions). The trainer's
 * stdout event, forwarded as is and checked by the trainer against schemas/grpo_step.json.
 */
export const GrpoStepProgress = TrainerGrpoStepEvent.strict();
export type GrpoStepProgress = z.infer<typeof GrpoStepProgress>;

/** Items done of a total: generate (answers written), grade-batch (items graded, with verdict counts). */
export const ItemsProgress = z
  .strictObject({
    event: z.literal("items"),
    done: z.number().int().min(0),
    total: z.number().int().min(0),
    /** grade-batch: how many of the items graded so far got each verdict. */
    verdicts: z.record(z.string(), z.number().int().min(0)).optional(),
  })
  .refine((p) => p.done <= p.total, { message: "done exceeds total", path: ["done"] });
export type ItemsProgress = z.infer<typeof ItemsProgress>;

export const JobProgress = z.discriminatedUnion("event", [TrainStepProgress, GrpoStepProgress, ItemsProgress]);
export type JobProgress = z.infer<typeof JobProgress>;

/** The job types that report no progress: any event they send breaks their contract. */
export const NoProgress = z.never({ error: "this job type reports no progress" });
