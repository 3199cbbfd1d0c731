-- Issue 12. SFT data comes from TRAIN tasks only, enforced here so that no code path (the teacher
-- datasets, a replay, a script with a database connection) can put a dev or test task into an SFT
-- snapshot: every sample's task must be assigned to the train part of its dataset's split, and that
-- split must be frozen (its assignments can then never change, migration `frozen_splits`).
CREATE OR REPLACE FUNCTION sft_samples_train_only() RETURNS trigger AS $$
DECLARE
  ds_split uuid;
  is_frozen boolean;
  task_part split_part;
  assigned_id text;
BEGIN
  SELECT d.split_id INTO ds_split FROM sft_datasets d WHERE d.id = NEW.dataset_id;
  SELECT s.frozen INTO is_frozen FROM splits s WHERE s.id = ds_split;
  IF is_frozen IS DISTINCT FROM true THEN
    RAISE EXCEPTION 'SFT samples need a frozen split (dataset %)', NEW.dataset_id USING ERRCODE = 'check_violation';
  END IF;
  SELECT a.part, a.task_id INTO task_part, assigned_id FROM split_assignments a WHERE a.split_id = ds_split AND a.task_row_id = NEW.task_row_id;
  IF task_part IS DISTINCT FROM 'train' THEN
    RAISE EXCEPTION 'SFT data comes from train tasks only: task % is %', NEW.task_key, coalesce(task_part::text || ' in the split', 'not in the split')
      USING ERRCODE = 'check_violation';
  END IF;
  IF assigned_id IS DISTINCT FROM NEW.task_key THEN
    RAISE EXCEPTION 'SFT sample task key % does not name its task (%)', NEW.task_key, assigned_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER sft_samples_train_only BEFORE INSERT OR UPDATE ON sft_samples FOR EACH ROW EXECUTE FUNCTION sft_samples_train_only();
--> statement-breakpoint
-- The once-only test rule guards test GENERATION: a test-split answer can only be stored after the
-- experiment claimed its single test run (experiment_test_runs, one row per experiment).
CREATE OR REPLACE FUNCTION experiment_generations_test_claimed() RETURNS trigger AS $$
BEGIN
  IF NEW.split = 'test' AND NOT EXISTS (SELECT 1 FROM experiment_test_runs r WHERE r.experiment_id = NEW.experiment_id) THEN
    RAISE EXCEPTION 'test generations need the experiment''s claimed test run (experiment %)', NEW.experiment_id USING ERRCODE = 'check_violation';
  END IF;
  IF TG_OP = 'UPDATE' AND (NEW.text IS DISTINCT FROM OLD.text OR NEW.protocol IS DISTINCT FROM OLD.protocol OR NEW.split IS DISTINCT FROM OLD.split
      OR NEW.model_key IS DISTINCT FROM OLD.model_key OR NEW.task_id IS DISTINCT FROM OLD.task_id OR NEW.generate_job_id IS DISTINCT FROM OLD.generate_job_id) THEN
    RAISE EXCEPTION 'stored generations are immutable (only their grading state changes)' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER experiment_generations_guard BEFORE INSERT OR UPDATE ON experiment_generations FOR EACH ROW EXECUTE FUNCTION experiment_generations_test_claimed();
