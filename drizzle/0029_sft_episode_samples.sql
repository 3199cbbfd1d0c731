ALTER TABLE "sft_samples" ALTER COLUMN "candidate_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "sft_samples" ADD COLUMN "episode_id" uuid;--> statement-breakpoint
ALTER TABLE "sft_samples" ADD CONSTRAINT "sft_samples_episode_id_episodes_id_fk" FOREIGN KEY ("episode_id") REFERENCES "public"."episodes"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sft_samples_episode_idx" ON "sft_samples" USING btree ("episode_id");--> statement-breakpoint
ALTER TABLE "sft_samples" ADD CONSTRAINT "sft_samples_one_source" CHECK (("sft_samples"."candidate_id" is null) <> ("sft_samples"."episode_id" is null));--> statement-breakpoint
-- An SFT sample from an episode is the episode's verified trajectory: the episode passed the judge
-- and its task is the sample's (the train-only trigger sft_samples_train_only then checks that task
-- against the dataset's frozen split, as for every sample).
CREATE OR REPLACE FUNCTION sft_samples_episode_verified() RETURNS trigger AS $$
DECLARE
  ep_task uuid;
  ep_verdict text;
BEGIN
  IF NEW.episode_id IS NULL THEN
    RETURN NEW;
  END IF;
  SELECT e.task_row_id, e.verdict INTO ep_task, ep_verdict FROM episodes e WHERE e.id = NEW.episode_id;
  IF ep_verdict IS DISTINCT FROM 'pass' THEN
    RAISE EXCEPTION 'SFT samples from episodes need a passing episode: episode % is %', NEW.episode_id, coalesce(ep_verdict, 'missing')
      USING ERRCODE = 'check_violation';
  END IF;
  IF ep_task IS DISTINCT FROM NEW.task_row_id THEN
    RAISE EXCEPTION 'SFT sample task % is not the task of episode %', NEW.task_key, NEW.episode_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER sft_samples_episode_verified BEFORE INSERT OR UPDATE ON sft_samples FOR EACH ROW EXECUTE FUNCTION sft_samples_episode_verified();
