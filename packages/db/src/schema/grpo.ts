import { check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import type { ChatMessage } from "@agentlab/core";
import { experiments } from "./experiments";
import { splits, tasks } from "./tasks";

// The prompts of an experiment's GRPO runs: one row per (experiment, seed, task), stored before the
// run's job is enqueued, and the job is built from these rows. A trigger (migration grpo_prompts)
// refuses any task that is not in the train part of its experiment's frozen split, like
// sft_samples and preference_pairs, so no code path can do RL on a dev or test prompt.

export const grpoPrompts = pgTable(
  "grpo_prompts",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    /** The training seed of the run (one GRPO run per seed). */
    seed: integer("seed").notNull(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    taskKey: text("task_key").notNull(),
    /** The repair prompt as the policy is asked it (system and user turns; the public context only). */
    prompt: jsonb("prompt").$type<ChatMessage[]>().notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("grpo_prompts_key_idx").on(t.experimentId, t.seed, t.taskKey),
    index("grpo_prompts_task_idx").on(t.taskRowId),
    check("grpo_prompts_seed", sql`${t.seed} >= 0`),
  ],
);
