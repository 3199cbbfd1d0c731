CREATE TABLE "task_audit_mutants" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"audit_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"position" integer NOT NULL,
	"path" text NOT NULL,
	"operator" text NOT NULL,
	"line" integer NOT NULL,
	"description" text NOT NULL,
	"source" text NOT NULL,
	"verdict" text NOT NULL,
	"failing_tests" jsonb NOT NULL,
	CONSTRAINT "task_audit_mutants_killed" CHECK ("task_audit_mutants"."verdict" <> 'pass')
);
--> statement-breakpoint
ALTER TABLE "preference_pairs" DROP CONSTRAINT "preference_pairs_chosen_source";--> statement-breakpoint
ALTER TABLE "preference_pairs" DROP CONSTRAINT "preference_pairs_rejected_source";--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD COLUMN "pair_source" text DEFAULT 'cross_state' NOT NULL;--> statement-breakpoint
ALTER TABLE "task_audit_mutants" ADD CONSTRAINT "task_audit_mutants_audit_id_task_audits_id_fk" FOREIGN KEY ("audit_id") REFERENCES "public"."task_audits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_audit_mutants" ADD CONSTRAINT "task_audit_mutants_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "task_audit_mutants_audit_idx" ON "task_audit_mutants" USING btree ("audit_id","position");--> statement-breakpoint
CREATE INDEX "task_audit_mutants_task_idx" ON "task_audit_mutants" USING btree ("task_row_id");--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_pair_source" CHECK ("preference_pairs"."pair_source" in ('cross_state', 'near_miss', 'on_policy'));--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_chosen_source" CHECK ("preference_pairs"."chosen_source" in ('teacher', 'reference', 'on_policy'));--> statement-breakpoint
ALTER TABLE "preference_pairs" ADD CONSTRAINT "preference_pairs_rejected_source" CHECK ("preference_pairs"."rejected_source" in ('on_policy', 'mutant', 'buggy'));