ALTER TABLE "preference_pairs" DROP CONSTRAINT "preference_pairs_chosen_source";--> statement-breakpoint
ALTER TABLE "preference_pairs" DROP CONSTRAINT "preference_pairs_rejected_source";--> statement-breakpoint
ALTER TABLE "preference_pairs" DROP CONSTRAINT "preference_pairs_pair_source";--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD COLUMN "state_hash" text;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD COLUMN "chosen_episode_id" uuid;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD COLUMN "rejected_episode_id" uuid;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_state_hash_episode_states_hash_fk" FOREIGN KEY ("state_hash") REFERENCES "public"."episode_states"("hash") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_chosen_episode_id_episodes_id_fk" FOREIGN KEY ("chosen_episode_id") REFERENCES "public"."episodes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_rejected_episode_id_episodes_id_fk" FOREIGN KEY ("rejected_episode_id") REFERENCES "public"."episodes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_episode_branch" CHECK (("preference_pairs"."pair_source" = 'episode_branch') = ("preference_pairs"."state_hash" is not null) and ("preference_pairs"."state_hash" is null) = ("preference_pairs"."chosen_episode_id" is null) and ("preference_pairs"."state_hash" is null) = ("preference_pairs"."rejected_episode_id" is null));--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_chosen_source" CHECK ("preference_pairs"."chosen_source" in ('teacher', 'reference', 'on_policy', 'episode'));--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_rejected_source" CHECK ("preference_pairs"."rejected_source" in ('on_policy', 'mutant', 'buggy', 'episode'));--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_pair_source" CHECK ("preference_pairs"."pair_source" in ('cross_state', 'near_miss', 'on_policy', 'episode_branch'));--> statement-breakpoint
-- An episode-branch pair holds two continuations of its own task from its own state, the chosen one
-- passing and the rejected one not; with preference_pairs_train_only (the pair's task is in the
-- train part of its frozen split) no writer can pair a dev or test task's episodes.
CREATE OR REPLACE FUNCTION preference_pairs_episode_branch() RETURNS trigger AS $$
DECLARE
  c record;
  r record;
BEGIN
  IF NEW.state_hash IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT e.task_row_id, e.from_state_hash, e.verdict INTO c FROM episodes e WHERE e.id = NEW.chosen_episode_id;
  SELECT e.task_row_id, e.from_state_hash, e.verdict INTO r FROM episodes e WHERE e.id = NEW.rejected_episode_id;
  IF c.task_row_id IS DISTINCT FROM NEW.task_row_id OR r.task_row_id IS DISTINCT FROM NEW.task_row_id THEN
    RAISE EXCEPTION 'episode-branch pair %: its episodes are not on its task %', NEW.pair_key, NEW.task_key USING ERRCODE = 'check_violation';
  END IF;
  IF c.from_state_hash IS DISTINCT FROM NEW.state_hash OR r.from_state_hash IS DISTINCT FROM NEW.state_hash THEN
    RAISE EXCEPTION 'episode-branch pair %: its episodes did not resume state %', NEW.pair_key, NEW.state_hash USING ERRCODE = 'check_violation';
  END IF;
  IF c.verdict IS DISTINCT FROM 'pass' OR r.verdict = 'pass' THEN
    RAISE EXCEPTION 'episode-branch pair %: the chosen continuation must pass and the rejected one fail', NEW.pair_key USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER preference_pairs_episode_branch BEFORE INSERT OR UPDATE ON preference_pairs FOR EACH ROW EXECUTE FUNCTION preference_pairs_episode_branch();
