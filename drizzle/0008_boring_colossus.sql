CREATE TYPE "public"."generation_grade_state" AS ENUM('pending', 'graded', 'no_verdict');--> statement-breakpoint
CREATE TABLE "experiment_generations" (
	"experiment_id" uuid NOT NULL,
	"split" "evaluation_split" NOT NULL,
	"model_key" text NOT NULL,
	"task_id" text NOT NULL,
	"source_group" text NOT NULL,
	"text" text NOT NULL,
	"parsed" boolean NOT NULL,
	"protocol" jsonb NOT NULL,
	"generate_job_id" uuid NOT NULL,
	"grade_job_ids" uuid[] DEFAULT '{}' NOT NULL,
	"grade_state" "generation_grade_state" DEFAULT 'pending' NOT NULL,
	"grade_error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "experiment_generations_experiment_id_split_model_key_task_id_pk" PRIMARY KEY("experiment_id","split","model_key","task_id")
);
--> statement-breakpoint
ALTER TABLE "experiment_generations" ADD CONSTRAINT "experiment_generations_experiment_id_experiments_id_fk" FOREIGN KEY ("experiment_id") REFERENCES "public"."experiments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "experiment_generations_state_idx" ON "experiment_generations" USING btree ("experiment_id","split","grade_state");