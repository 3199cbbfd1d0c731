CREATE TYPE "public"."audit_row_status" AS ENUM('pending', 'passed', 'failed', 'error');--> statement-breakpoint
CREATE TABLE "task_audits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"task_row_id" uuid NOT NULL,
	"job_id" uuid,
	"status" "audit_row_status" DEFAULT 'pending' NOT NULL,
	"result" jsonb,
	"mutation_score" real,
	"mutants_total" integer,
	"sandbox" text NOT NULL,
	"unsandboxed" boolean,
	"error" text,
	"grader_version" text NOT NULL,
	"round" integer DEFAULT 0 NOT NULL,
	"requested_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "task_audits" ADD CONSTRAINT "task_audits_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_audits" ADD CONSTRAINT "task_audits_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_audits" ADD CONSTRAINT "task_audits_requested_by_users_id_fk" FOREIGN KEY ("requested_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "task_audits_task_idx" ON "task_audits" USING btree ("task_row_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "task_audits_pending_idx" ON "task_audits" USING btree ("job_id") WHERE "task_audits"."status" = 'pending';