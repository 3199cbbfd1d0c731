import {
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import type {
  ChosenSource,
  FailingLayer,
  GradeVerdict,
  PairSource,
  PromptMessage,
  RejectedSource,
} from "@agentlab/core";
import { episodeStates, episodes } from "./episodes";
import { experiments } from "./experiments";
import { splits, tasks } from "./tasks";

// Preference pairs: one row per (experiment, round, pair). chosen = a graded passing
// answer, rejected = a graded model failure of the policy for the same task, with its failing layer
// and tests and the policy's margin before training. A trigger (migration preference_pairs) refuses
// any pair whose task is not in the train part of its frozen split, like sft_samples, and (0034) an
// episode-branch pair whose continuations are not episodes of its task from its state.

export const preferencePairs = pgTable(
  "preference_pairs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    experimentId: uuid("experiment_id")
      .notNull()
      .references(() => experiments.id, { onDelete: "cascade" }),
    /** 0 = pairs from the SFT start; k = pairs re-sampled from round k's policy. */
    round: integer("round").notNull(),
    pairKey: text("pair_key").notNull(),
    splitId: uuid("split_id")
      .notNull()
      .references(() => splits.id),
    taskRowId: uuid("task_row_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "restrict" }),
    taskKey: text("task_key").notNull(),
    /** Which source built the pair (core PairSource); rows from before sources existed were cross_state. */
    pairSource: text("pair_source").$type<PairSource>().notNull().default("cross_state"),
    prompt: jsonb("prompt").$type<PromptMessage[]>().notNull(),
    chosenSource: text("chosen_source").$type<ChosenSource>().notNull(),
    chosenText: text("chosen_text").notNull(),
    rejectedSource: text("rejected_source").$type<RejectedSource>().notNull(),
    rejectedModelKey: text("rejected_model_key").notNull(),
    rejectedSample: integer("rejected_sample").notNull(),
    rejectedText: text("rejected_text").notNull(),
    rejectedVerdict: text("rejected_verdict").$type<GradeVerdict>().notNull(),
    failingLayer: text("failing_layer").$type<FailingLayer>().notNull(),
    failingTests: jsonb("failing_tests").$type<string[]>().notNull(),
    /** log π(chosen) − log π(rejected) under the policy the pairs were built against. */
    marginBefore: doublePrecision("margin_before").notNull(),
    weight: doublePrecision("weight").notNull(),
    /** episode_branch: the stored state both continuations resumed, and the two continuations. */
    stateHash: text("state_hash").references(() => episodeStates.hash),
    chosenEpisodeId: uuid("chosen_episode_id").references(() => episodes.id, { onDelete: "restrict" }),
    rejectedEpisodeId: uuid("rejected_episode_id").references(() => episodes.id, { onDelete: "restrict" }),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("preference_pairs_key_idx").on(t.experimentId, t.round, t.pairKey),
    index("preference_pairs_task_idx").on(t.taskRowId),
    check("preference_pairs_round", sql`${t.round} >= 0`),
    check("preference_pairs_weight", sql`${t.weight} > 0`),
    check("preference_pairs_chosen_source", sql`${t.chosenSource} in ('teacher', 'reference', 'on_policy', 'episode')`),
    check("preference_pairs_rejected_source", sql`${t.rejectedSource} in ('on_policy', 'mutant', 'buggy', 'episode')`),
    check(
      "preference_pairs_pair_source",
      sql`${t.pairSource} in ('cross_state', 'near_miss', 'on_policy', 'episode_branch')`,
    ),
    // an episode-branch pair names its state and both continuations; no other pair names any
    check(
      "preference_pairs_episode_branch",
      sql`(${t.pairSource} = 'episode_branch') = (${t.stateHash} is not null) and (${t.stateHash} is null) = (${t.chosenEpisodeId} is null) and (${t.stateHash} is null) = (${t.rejectedEpisodeId} is null)`,
    ),
    // a rejected answer is a model failure: neither a pass nor an infra error
    check("preference_pairs_rejected_fails", sql`${t.rejectedVerdict} not in ('pass', 'infra_error')`),
    check("preference_pairs_distinct", sql`${t.chosenText} <> ${t.rejectedText}`),
  ],
);
