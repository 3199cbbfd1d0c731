CREATE TABLE "split_finals" (
	"split_id" uuid PRIMARY KEY NOT NULL,
	"marked_by" uuid,
	"marked_by_name" text,
	"note" text DEFAULT '' NOT NULL,
	"marked_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "split_test_claims" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"split_id" uuid NOT NULL,
	"experiment_id" uuid,
	"study_id" text,
	"claimer_name" text NOT NULL,
	"recipe_hash" text NOT NULL,
	"models" jsonb NOT NULL,
	"claimed_by" uuid,
	"claimed_by_name" text,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"override_reason" text,
	"override_by" uuid,
	"override_by_name" text
);
--> statement-breakpoint
CREATE TABLE "split_test_overrides" (
	"split_id" uuid NOT NULL,
	"experiment_id" uuid NOT NULL,
	"reason" text NOT NULL,
	"granted_by" uuid,
	"granted_by_name" text,
	"granted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "split_test_overrides_split_id_experiment_id_pk" PRIMARY KEY("split_id","experiment_id")
);
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "cluster" text;--> statement-breakpoint
ALTER TABLE "split_finals" ADD CONSTRAINT "split_finals_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_finals" ADD CONSTRAINT "split_finals_marked_by_users_id_fk" FOREIGN KEY ("marked_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_claims" ADD CONSTRAINT "split_test_claims_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_claims" ADD CONSTRAINT "split_test_claims_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_claims" ADD CONSTRAINT "split_test_claims_claimed_by_users_id_fk" FOREIGN KEY ("claimed_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_claims" ADD CONSTRAINT "split_test_claims_override_by_users_id_fk" FOREIGN KEY ("override_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_overrides" ADD CONSTRAINT "split_test_overrides_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_overrides" ADD CONSTRAINT "split_test_overrides_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_test_overrides" ADD CONSTRAINT "split_test_overrides_granted_by_users_id_fk" FOREIGN KEY ("granted_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "split_test_claims_split_idx" ON "split_test_claims" USING btree ("split_id","claimed_at");--> statement-breakpoint
CREATE UNIQUE INDEX "split_test_claims_experiment_idx" ON "split_test_claims" USING btree ("experiment_id") WHERE "split_test_claims"."experiment_id" is not null;--> statement-breakpoint
-- The test-read ledger is append-only: a read that happened stays counted. Rows go only with their
-- split (a delete the deleting transaction named with 'agentlab.delete_split', queries/archive.ts).
CREATE OR REPLACE FUNCTION agentlab_test_claims_append_only() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('agentlab.delete_split', true) = OLD.split_id::text THEN
    RETURN OLD;
  END IF;
  -- Only the ON DELETE SET NULL of a deleted experiment or user: the claim stays, with the names
  -- recorded when it was made.
  IF TG_OP = 'UPDATE'
     AND (to_jsonb(NEW) - 'experiment_id' - 'claimed_by' - 'override_by') = (to_jsonb(OLD) - 'experiment_id' - 'claimed_by' - 'override_by')
     AND (NEW.experiment_id IS NULL OR NEW.experiment_id = OLD.experiment_id)
     AND (NEW.claimed_by IS NULL OR NEW.claimed_by = OLD.claimed_by)
     AND (NEW.override_by IS NULL OR NEW.override_by = OLD.override_by) THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'the test-read ledger is append-only (split %)', OLD.split_id USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER split_test_claims_append_only BEFORE UPDATE OR DELETE ON "split_test_claims"
  FOR EACH ROW EXECUTE FUNCTION agentlab_test_claims_append_only();
--> statement-breakpoint
-- A claim on a final split carries the admin's override reason, whatever code path writes it.
CREATE OR REPLACE FUNCTION agentlab_test_claim_final_guard() RETURNS trigger AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM split_finals WHERE split_id = NEW.split_id)
     AND (NEW.override_reason IS NULL OR btrim(NEW.override_reason) = '') THEN
    RAISE EXCEPTION 'split % is final: a test claim needs an admin override with a reason', NEW.split_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER split_test_claims_final_guard BEFORE INSERT ON "split_test_claims"
  FOR EACH ROW EXECUTE FUNCTION agentlab_test_claim_final_guard();
--> statement-breakpoint
-- A split once final stays final: the mark is what later readers rely on.
CREATE OR REPLACE FUNCTION agentlab_split_final_kept() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('agentlab.delete_split', true) = OLD.split_id::text THEN
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND NEW.split_id = OLD.split_id AND NEW.marked_at = OLD.marked_at AND NEW.note = OLD.note
     AND NEW.marked_by IS NULL THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'split % is final and stays final', OLD.split_id USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER split_finals_kept BEFORE UPDATE OR DELETE ON "split_finals"
  FOR EACH ROW EXECUTE FUNCTION agentlab_split_final_kept();
--> statement-breakpoint
-- Test runs claimed before the ledger existed are its first entries: they were reads all the same.
-- Their recipe hash was never computed (core recipeHash hashes canonical JSON, which SQL cannot
-- reproduce), so it is marked as such.
INSERT INTO "split_test_claims" ("split_id", "experiment_id", "claimer_name", "recipe_hash", "models", "claimed_by", "claimed_by_name", "claimed_at")
SELECT e."split_id", e."id", e."name", 'unrecorded (claimed before the ledger)',
  COALESCE((SELECT jsonb_agg(CASE m->>'model'
      WHEN 'base' THEN 'base'
      WHEN 'dpo' THEN format('DPO r%s · seed %s · epoch %s', m->>'round', m->>'seed', m->>'epoch')
      ELSE format('seed %s · epoch %s', m->>'seed', m->>'epoch') END)
    FROM jsonb_array_elements(r."models") m), '[]'::jsonb),
  e."created_by", u."name", r."started_at"
FROM "experiment_test_runs" r
JOIN "experiments" e ON e."id" = r."experiment_id"
LEFT JOIN "users" u ON u."id" = e."created_by";
