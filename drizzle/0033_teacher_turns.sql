CREATE TABLE "teacher_turns" (
	"cache_key" text PRIMARY KEY NOT NULL,
	"provider_id" uuid,
	"model" text NOT NULL,
	"job_id" uuid,
	"reply" jsonb NOT NULL,
	"tokens_in" integer NOT NULL,
	"tokens_out" integer NOT NULL,
	"cost_usd" double precision NOT NULL,
	"latency_ms" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "teacher_ledger" ADD COLUMN "job_id" uuid;--> statement-breakpoint
ALTER TABLE "teacher_turns" ADD CONSTRAINT "teacher_turns_provider_id_teacher_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."teacher_providers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_turns" ADD CONSTRAINT "teacher_turns_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_ledger" ADD CONSTRAINT "teacher_ledger_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "teacher_ledger_job_idx" ON "teacher_ledger" USING btree ("job_id");