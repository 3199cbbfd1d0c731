CREATE TABLE "grpo_prompts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"experiment_id" uuid NOT NULL,
	"seed" integer NOT NULL,
	"split_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"task_key" text NOT NULL,
	"prompt" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "grpo_prompts_seed" CHECK ("grpo_prompts"."seed" >= 0)
);
--> statement-breakpoint
ALTER TABLE "grpo_prompts" ADD CONSTRAINT "grpo_prompts_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grpo_prompts" ADD CONSTRAINT "grpo_prompts_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "grpo_prompts" ADD CONSTRAINT "grpo_prompts_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "grpo_prompts_key_idx" ON "grpo_prompts" USING btree ("experiment_id","seed","task_key");--> statement-breakpoint
CREATE INDEX "grpo_prompts_task_idx" ON "grpo_prompts" USING btree ("task_row_id");--> statement-breakpoint
-- Written by hand: GRPO prompts come from TRAIN tasks only, whatever code path writes them (like
-- sft_samples_train_only, migration 0009, and preference_pairs_train_only, 0017): the prompt's task
-- must be assigned to the train part of its split, the split must be frozen and be its
-- experiment's, and task_key must name that task.
CREATE OR REPLACE FUNCTION grpo_prompts_train_only() RETURNS trigger AS $$
DECLARE
  is_frozen boolean;
  exp_split uuid;
  task_part split_part;
  assigned_id text;
BEGIN
  SELECT e.split_id INTO exp_split FROM experiments e WHERE e.id = NEW.experiment_id;
  IF exp_split IS DISTINCT FROM NEW.split_id THEN
    RAISE EXCEPTION 'grpo prompt split % is not its experiment''s split', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT s.frozen INTO is_frozen FROM splits s WHERE s.id = NEW.split_id;
  IF is_frozen IS DISTINCT FROM true THEN
    RAISE EXCEPTION 'grpo prompts need a frozen split (split %)', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT a.part, a.task_id INTO task_part, assigned_id FROM split_assignments a WHERE a.split_id = NEW.split_id AND a.task_row_id = NEW.task_row_id;
  IF task_part IS DISTINCT FROM 'train' THEN
    RAISE EXCEPTION 'grpo prompts come from train tasks only: task % is %', NEW.task_key, coalesce(task_part::text || ' in the split', 'not in the split')
      USING ERRCODE = 'check_violation';
  END IF;
  IF assigned_id IS DISTINCT FROM NEW.task_key THEN
    RAISE EXCEPTION 'grpo prompt task key % does not name its task (%)', NEW.task_key, assigned_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER grpo_prompts_train_only BEFORE INSERT OR UPDATE ON grpo_prompts FOR EACH ROW EXECUTE FUNCTION grpo_prompts_train_only();
