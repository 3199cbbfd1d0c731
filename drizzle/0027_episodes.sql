CREATE TABLE "episode_blobs" (
	"sha256" text PRIMARY KEY NOT NULL,
	"content" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "episode_branches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"episode_id" uuid NOT NULL,
	"state_hash" text NOT NULL,
	"kind" text NOT NULL,
	"continuations" integer NOT NULL,
	"passes" integer NOT NULL,
	"pass_rate" double precision,
	CONSTRAINT "episode_branches_kind" CHECK ("episode_branches"."kind" in ('start', 'after_failed_tests')),
	CONSTRAINT "episode_branches_passes" CHECK ("episode_branches"."passes" >= 0 and "episode_branches"."passes" <= "episode_branches"."continuations")
);
--> statement-breakpoint
CREATE TABLE "episode_snapshots" (
	"tree_hash" text PRIMARY KEY NOT NULL,
	"manifest" jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "episode_states" (
	"hash" text PRIMARY KEY NOT NULL,
	"tree_hash" text NOT NULL,
	"t" integer NOT NULL,
	"transcript_hash" text NOT NULL,
	"counters" jsonb NOT NULL,
	"seed" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "episode_steps" (
	"episode_id" uuid NOT NULL,
	"index" integer NOT NULL,
	"role" text NOT NULL,
	"tool" text NOT NULL,
	"args" jsonb,
	"status" text NOT NULL,
	"refusal" text,
	"result_hash" text NOT NULL,
	"snapshot_before" text NOT NULL,
	"snapshot_after" text NOT NULL,
	"wall_ms" double precision NOT NULL,
	CONSTRAINT "episode_steps_episode_id_index_pk" PRIMARY KEY("episode_id","index"),
	CONSTRAINT "episode_steps_role" CHECK ("episode_steps"."role" in ('assistant', 'environment'))
);
--> statement-breakpoint
CREATE TABLE "episode_training_uses" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"episode_id" uuid NOT NULL,
	"split_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "episodes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"job_id" uuid,
	"ordinal" integer NOT NULL,
	"task_row_id" uuid NOT NULL,
	"task_key" text NOT NULL,
	"policy_name" text NOT NULL,
	"policy_hash" text NOT NULL,
	"seed" integer NOT NULL,
	"budget" jsonb NOT NULL,
	"parent_episode_id" uuid,
	"from_state_hash" text,
	"branch_id" uuid,
	"final_state_hash" text NOT NULL,
	"verdict" text NOT NULL,
	"grade" jsonb NOT NULL,
	"submitted_by" text NOT NULL,
	"exhausted" text,
	"turns" integer NOT NULL,
	"test_runs" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "episodes_submitted_by" CHECK ("episodes"."submitted_by" in ('policy', 'budget')),
	CONSTRAINT "episodes_verdict" CHECK ("episodes"."verdict" <> 'infra_error'),
	CONSTRAINT "episodes_continuation" CHECK (("episodes"."parent_episode_id" is null) = ("episodes"."from_state_hash" is null))
);
--> statement-breakpoint
ALTER TABLE "episode_branches" ADD CONSTRAINT "episode_branches_episode_id_episodes_id_fk" FOREIGN KEY ("episode_id") REFERENCES "public"."episodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_branches" ADD CONSTRAINT "episode_branches_state_hash_episode_states_hash_fk" FOREIGN KEY ("state_hash") REFERENCES "public"."episode_states"("hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_states" ADD CONSTRAINT "episode_states_tree_hash_episode_snapshots_tree_hash_fk" FOREIGN KEY ("tree_hash") REFERENCES "public"."episode_snapshots"("tree_hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_steps" ADD CONSTRAINT "episode_steps_episode_id_episodes_id_fk" FOREIGN KEY ("episode_id") REFERENCES "public"."episodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_steps" ADD CONSTRAINT "episode_steps_result_hash_episode_blobs_sha256_fk" FOREIGN KEY ("result_hash") REFERENCES "public"."episode_blobs"("sha256") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_steps" ADD CONSTRAINT "episode_steps_snapshot_before_episode_snapshots_tree_hash_fk" FOREIGN KEY ("snapshot_before") REFERENCES "public"."episode_snapshots"("tree_hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_steps" ADD CONSTRAINT "episode_steps_snapshot_after_episode_snapshots_tree_hash_fk" FOREIGN KEY ("snapshot_after") REFERENCES "public"."episode_snapshots"("tree_hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_training_uses" ADD CONSTRAINT "episode_training_uses_episode_id_episodes_id_fk" FOREIGN KEY ("episode_id") REFERENCES "public"."episodes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episode_training_uses" ADD CONSTRAINT "episode_training_uses_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_parent_episode_id_episodes_id_fk" FOREIGN KEY ("parent_episode_id") REFERENCES "public"."episodes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_from_state_hash_episode_states_hash_fk" FOREIGN KEY ("from_state_hash") REFERENCES "public"."episode_states"("hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_branch_id_episode_branches_id_fk" FOREIGN KEY ("branch_id") REFERENCES "public"."episode_branches"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "episodes" ADD CONSTRAINT "episodes_final_state_hash_episode_states_hash_fk" FOREIGN KEY ("final_state_hash") REFERENCES "public"."episode_states"("hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "episode_branches_point_idx" ON "episode_branches" USING btree ("episode_id","state_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "episode_training_uses_idx" ON "episode_training_uses" USING btree ("episode_id","purpose");--> statement-breakpoint
CREATE UNIQUE INDEX "episodes_job_ordinal_idx" ON "episodes" USING btree ("job_id","ordinal");--> statement-breakpoint
CREATE INDEX "episodes_task_idx" ON "episodes" USING btree ("task_row_id","created_at");--> statement-breakpoint
CREATE INDEX "episodes_parent_idx" ON "episodes" USING btree ("parent_episode_id");--> statement-breakpoint
-- Written by hand: an episode is used for training only when its task is in the TRAIN part of a
-- frozen split (as sft_samples and preference_pairs), so no code path can train on a dev or test
-- episode, a continuation included (it carries its task like any episode).
CREATE OR REPLACE FUNCTION episode_training_uses_train_only() RETURNS trigger AS $$
DECLARE
  is_frozen boolean;
  task_part split_part;
  ep_task uuid;
  ep_key text;
BEGIN
  SELECT s.frozen INTO is_frozen FROM splits s WHERE s.id = NEW.split_id;
  IF is_frozen IS DISTINCT FROM true THEN
    RAISE EXCEPTION 'episodes for training need a frozen split (split %)', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT e.task_row_id, e.task_key INTO ep_task, ep_key FROM episodes e WHERE e.id = NEW.episode_id;
  SELECT a.part INTO task_part FROM split_assignments a WHERE a.split_id = NEW.split_id AND a.task_row_id = ep_task;
  IF task_part IS DISTINCT FROM 'train' THEN
    RAISE EXCEPTION 'episodes for training come from train tasks only: episode % (task %) is %', NEW.episode_id, ep_key,
      coalesce(task_part::text || ' in the split', 'not in the split') USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER episode_training_uses_train_only BEFORE INSERT OR UPDATE ON episode_training_uses FOR EACH ROW EXECUTE FUNCTION episode_training_uses_train_only();
