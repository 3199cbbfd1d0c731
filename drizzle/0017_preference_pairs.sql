CREATE TABLE "preference_pairs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"experiment_id" uuid NOT NULL,
	"round" integer NOT NULL,
	"pair_key" text NOT NULL,
	"split_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"task_key" text NOT NULL,
	"prompt" jsonb NOT NULL,
	"chosen_source" text NOT NULL,
	"chosen_text" text NOT NULL,
	"rejected_source" text NOT NULL,
	"rejected_model_key" text NOT NULL,
	"rejected_sample" integer NOT NULL,
	"rejected_text" text NOT NULL,
	"rejected_verdict" text NOT NULL,
	"failing_layer" text NOT NULL,
	"failing_tests" jsonb NOT NULL,
	"margin_before" double precision NOT NULL,
	"weight" double precision NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "preference_pairs_round" CHECK ("preference_pairs"."round" >= 0),
	CONSTRAINT "preference_pairs_weight" CHECK ("preference_pairs"."weight" > 0),
	CONSTRAINT "preference_pairs_chosen_source" CHECK ("preference_pairs"."chosen_source" in ('teacher', 'reference')),
	CONSTRAINT "preference_pairs_rejected_source" CHECK ("preference_pairs"."rejected_source" in ('on_policy', 'mutant')),
	CONSTRAINT "preference_pairs_rejected_fails" CHECK ("preference_pairs"."rejected_verdict" not in ('pass', 'infra_error')),
	CONSTRAINT "preference_pairs_distinct" CHECK ("preference_pairs"."chosen_text" <> "preference_pairs"."rejected_text")
);
--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "preference_pairs_key_idx" ON "preference_pairs" USING btree ("experiment_id","round","pair_key");--> statement-breakpoint
CREATE INDEX "preference_pairs_task_idx" ON "preference_pairs" USING btree ("task_row_id");--> statement-breakpoint
-- Issue 18. Preference pairs come from TRAIN tasks only, whatever code path writes them (like
-- sft_samples_train_only, migration 0009): the pair's task must be assigned to the train part of
-- its split, the split must be frozen and be its experiment's, and task_key must name that task.
CREATE OR REPLACE FUNCTION preference_pairs_train_only() RETURNS trigger AS $$
DECLARE
  is_frozen boolean;
  exp_split uuid;
  task_part split_part;
  assigned_id text;
BEGIN
  SELECT e.split_id INTO exp_split FROM experiments e WHERE e.id = NEW.experiment_id;
  IF exp_split IS DISTINCT FROM NEW.split_id THEN
    RAISE EXCEPTION 'preference pair split % is not its experiment''s split', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT s.frozen INTO is_frozen FROM splits s WHERE s.id = NEW.split_id;
  IF is_frozen IS DISTINCT FROM true THEN
    RAISE EXCEPTION 'preference pairs need a frozen split (split %)', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT a.part, a.task_id INTO task_part, assigned_id FROM split_assignments a WHERE a.split_id = NEW.split_id AND a.task_row_id = NEW.task_row_id;
  IF task_part IS DISTINCT FROM 'train' THEN
    RAISE EXCEPTION 'preference pairs come from train tasks only: task % is %', NEW.task_key, coalesce(task_part::text || ' in the split', 'not in the split')
      USING ERRCODE = 'check_violation';
  END IF;
  IF assigned_id IS DISTINCT FROM NEW.task_key THEN
    RAISE EXCEPTION 'preference pair task key % does not name its task (%)', NEW.task_key, assigned_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER preference_pairs_train_only BEFORE INSERT OR UPDATE ON preference_pairs FOR EACH ROW EXECUTE FUNCTION preference_pairs_train_only();
