CREATE TYPE "public"."study_state" AS ENUM('running', 'succeeded', 'failed');--> statement-breakpoint
CREATE TABLE "studies" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"split_id" uuid NOT NULL,
	"definition" jsonb NOT NULL,
	"state" "study_state" DEFAULT 'running' NOT NULL,
	"error" text,
	"test_claim_id" uuid,
	"report" jsonb,
	"report_at" timestamp with time zone,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "studies_name_length" CHECK (char_length("studies"."name") <= 200)
);
--> statement-breakpoint
CREATE TABLE "study_arms" (
	"study_id" uuid NOT NULL,
	"name" text NOT NULL,
	"ordinal" integer NOT NULL,
	"role" text NOT NULL,
	"factor" text,
	"experiment_id" uuid NOT NULL,
	"test_models" jsonb,
	CONSTRAINT "study_arms_study_id_name_pk" PRIMARY KEY("study_id","name")
);
--> statement-breakpoint
ALTER TABLE "studies" ADD CONSTRAINT "studies_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "studies" ADD CONSTRAINT "studies_test_claim_id_split_test_claims_id_fk" FOREIGN KEY ("test_claim_id") REFERENCES "public"."split_test_claims"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "studies" ADD CONSTRAINT "studies_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_arms" ADD CONSTRAINT "study_arms_study_id_studies_id_fk" FOREIGN KEY ("study_id") REFERENCES "public"."studies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "study_arms" ADD CONSTRAINT "study_arms_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "studies_split_idx" ON "studies" USING btree ("split_id");--> statement-breakpoint
CREATE UNIQUE INDEX "studies_test_claim_idx" ON "studies" USING btree ("test_claim_id");--> statement-breakpoint
CREATE UNIQUE INDEX "study_arms_experiment_idx" ON "study_arms" USING btree ("experiment_id");--> statement-breakpoint
-- A study reads its split's test set once: its ledger entry, once recorded, is never replaced or
-- cleared, and the definition the arms were built from never changes (whatever code path writes).
CREATE OR REPLACE FUNCTION agentlab_study_claim_once() RETURNS trigger AS $$
BEGIN
  IF OLD.test_claim_id IS NOT NULL AND NEW.test_claim_id IS DISTINCT FROM OLD.test_claim_id THEN
    RAISE EXCEPTION 'study % has already claimed its test set', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  IF NEW.definition IS DISTINCT FROM OLD.definition OR NEW.split_id IS DISTINCT FROM OLD.split_id THEN
    RAISE EXCEPTION 'study % keeps the definition it was created from', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER studies_claim_once BEFORE UPDATE ON "studies"
  FOR EACH ROW EXECUTE FUNCTION agentlab_study_claim_once();
