ALTER TABLE "splits" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "task_pools" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "sft_datasets" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "teacher_providers" ADD COLUMN "archived_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "tasks_instruction_fts_idx" ON "tasks" USING gin (to_tsvector('english', "instruction"));--> statement-breakpoint
-- Archive and delete (issue 15). A frozen split still never changes what it holds: the guard now
-- lets an UPDATE through only when archived_at is the sole column that differs, and a DELETE only
-- of the one split the deleting transaction named with set_config('agentlab.delete_split', id, true)
-- (packages/db/src/queries/archive.ts; foreign keys still refuse it while an experiment, collection or
-- dataset uses the split). The setting is transaction-local, so it cannot leak into other work.
CREATE OR REPLACE FUNCTION agentlab_refuse_frozen_split() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.frozen AND current_setting('agentlab.delete_split', true) IS DISTINCT FROM OLD.id::text THEN
      RAISE EXCEPTION 'split % is frozen and cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF OLD.frozen AND (to_jsonb(NEW) - 'archived_at') IS DISTINCT FROM (to_jsonb(OLD) - 'archived_at') THEN
    RAISE EXCEPTION 'split % is frozen and cannot be changed', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agentlab_refuse_frozen_assignment() RETURNS trigger AS $$
DECLARE
  is_frozen boolean;
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('agentlab.delete_split', true) = OLD.split_id::text THEN
    RETURN OLD;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    SELECT frozen INTO is_frozen FROM splits WHERE id = OLD.split_id;
    IF is_frozen THEN
      RAISE EXCEPTION 'split % is frozen: its assignments cannot be changed', OLD.split_id USING ERRCODE = 'check_violation';
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    SELECT frozen INTO is_frozen FROM splits WHERE id = NEW.split_id;
    IF is_frozen THEN
      RAISE EXCEPTION 'split % is frozen: no assignment can be added', NEW.split_id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  RETURN OLD;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
-- The same for SFT snapshots: samples never change; a whole unused snapshot may go, named by
-- 'agentlab.delete_dataset'; besides the token counts (once) only archived_at may change.
CREATE OR REPLACE FUNCTION sft_samples_immutable() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('agentlab.delete_dataset', true) = OLD.dataset_id::text THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'SFT dataset samples are immutable' USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sft_datasets_immutable() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF current_setting('agentlab.delete_dataset', true) = OLD.id::text THEN
      RETURN OLD;
    END IF;
    RAISE EXCEPTION 'SFT dataset snapshots are immutable' USING ERRCODE = 'check_violation';
  END IF;
  IF (to_jsonb(NEW) - 'token_counts' - 'archived_at') IS DISTINCT FROM (to_jsonb(OLD) - 'token_counts' - 'archived_at')
     OR (OLD.token_counts IS NOT NULL AND NEW.token_counts IS DISTINCT FROM OLD.token_counts) THEN
    RAISE EXCEPTION 'SFT dataset snapshots are immutable (only token counts may be set, once)' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
