import { z } from "zod";
import { GradeLimits, GradingIsolation } from "../grading/schemas";
import { TaskSpec } from "../tasks/spec";
import { GrpoRecord, GrpoSnapshot, GrpoSpec } from "../trainer/grpo";
import { PromptVariant } from "../teacher/prompt";

// The `grpo` job: online RL on the agent, the reward graded by the agent's own isolated judge
// (never inside the trainer process). The payload carries the train tasks whole, since the agent
// needs their hidden tests to grade; the trainer is only given their repair prompts, which the
// agent renders from each task's public context.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const GrpoJobSpec = GrpoSpec.omit({
  prompts: true,
  reward_socket: true,
  output_dir: true,
  start_adapter: true,
  expected_start_adapter_sha256: true,
}).strict();
export type GrpoJobSpec = z.input<typeof GrpoJobSpec>;

/**
 * A task the policy is trained on. `part` is the task's part of the frozen split, as the sender
 * read it: RL prompts are train-only like SFT samples and preference pairs, and a payload naming
 * a dev or test task is refused at enqueue (the field named), not trained on.
 */
export const GrpoTask = z.strictObject({
  task: TaskSpec,
  part: z.literal("train", { error: "GRPO trains on train tasks only (this task is not in the train part)" }),
  /** Test ids the reference produced; computed by a reference run on the agent when absent. */
  expectedTestIds: z.array(z.string()).optional(),
  isolation: GradingIsolation.default("judge"),
  limits: GradeLimits.partial().default({}),
});
export type GrpoTask = z.input<typeof GrpoTask>;

/**
 * Where the rewards come from. `none`: each completion's own verdict. `shuffle_within_group`: the
 * control arm; each group's verdicts are permuted among its completions before the trainer sees
 * them (seeded by the run's seed and the request), so a group's rewards keep their mean and spread
 * but say nothing about which candidate earned them: a gain over the start under this control is
 * not a gain from the judge's signal.
 */
export const GRPO_REWARD_CONTROLS = ["none", "shuffle_within_group"] as const;
export const GrpoRewardControl = z.enum(GRPO_REWARD_CONTROLS);
export type GrpoRewardControl = z.infer<typeof GrpoRewardControl>;

export const GrpoJobPayload = z
  .strictObject({
    /** The frozen split the tasks' parts were read from. */
    splitId: z.string().uuid(),
    tasks: z.array(GrpoTask).min(1),
    startAdapterArtifact: Sha256.nullable().optional(),
    startAdapterSha256: Sha256.nullable().optional(),
    spec: GrpoJobSpec,
    rewardControl: GrpoRewardControl.default("none"),
    /** What the prompts show of the public context (the recipe's training.promptVariant); absent = all of it. */
    promptVariant: PromptVariant.optional(),
  })
  .superRefine((p, ctx) => {
    if (!p.startAdapterArtifact !== !p.startAdapterSha256)
      ctx.addIssue({
        code: "custom",
        path: ["startAdapterSha256"],
        message: "a start adapter needs both its archive (startAdapterArtifact) and its hash (startAdapterSha256)",
      });
    const seen = new Set<string>();
    for (const [i, t] of p.tasks.entries()) {
      if (seen.has(t.task.id))
        ctx.addIssue({ code: "custom", path: ["tasks", i, "task", "id"], message: "task listed twice" });
      seen.add(t.task.id);
    }
  });
export type GrpoJobPayload = z.input<typeof GrpoJobPayload>;

/** The grpo run record, each snapshot with the archive the agent uploaded. */
export const GrpoJobResult = GrpoRecord.extend({
  snapshots: z.array(GrpoSnapshot.extend({ artifact: Sha256.nullable() })),
}).strict();
export type GrpoJobResult = z.infer<typeof GrpoJobResult>;
