CREATE TYPE "public"."collection_state" AS ENUM('queued', 'running', 'grading', 'done', 'stopped_budget', 'failed', 'canceled');--> statement-breakpoint
CREATE TYPE "public"."provider_kind" AS ENUM('openai', 'reference');--> statement-breakpoint
CREATE TYPE "public"."replay_state" AS ENUM('grading', 'done', 'failed');--> statement-breakpoint
CREATE TABLE "sft_datasets" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"hash" text NOT NULL,
	"split_id" uuid NOT NULL,
	"experiment_id" uuid,
	"source_collection_ids" uuid[] NOT NULL,
	"parent_id" uuid,
	"prompt_hash" text NOT NULL,
	"sample_count" integer NOT NULL,
	"task_count" integer NOT NULL,
	"oracle_samples" integer DEFAULT 0 NOT NULL,
	"token_counts" jsonb,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sft_replays" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"dataset_id" uuid NOT NULL,
	"state" "replay_state" DEFAULT 'grading' NOT NULL,
	"jobs" jsonb NOT NULL,
	"kept" integer,
	"dropped" jsonb,
	"result_dataset_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "sft_samples" (
	"dataset_id" uuid NOT NULL,
	"ordinal" integer NOT NULL,
	"hash" text NOT NULL,
	"candidate_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"task_key" text NOT NULL,
	"oracle" boolean NOT NULL,
	"messages" jsonb NOT NULL,
	CONSTRAINT "sft_samples_dataset_id_ordinal_pk" PRIMARY KEY("dataset_id","ordinal")
);
--> statement-breakpoint
CREATE TABLE "teacher_candidates" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"cache_key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"prompt_hash" text NOT NULL,
	"model" text NOT NULL,
	"params_hash" text NOT NULL,
	"sample_index" integer NOT NULL,
	"provider_kind" "provider_kind" NOT NULL,
	"oracle" boolean NOT NULL,
	"origin_task_row_id" uuid,
	"answer" text NOT NULL,
	"files" jsonb,
	"parse_error" text,
	"finish_reason" text,
	"tokens_in" integer DEFAULT 0 NOT NULL,
	"tokens_out" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"latency_ms" integer DEFAULT 0 NOT NULL,
	"verdict" text,
	"verdict_reasons" text[],
	"grade_result" jsonb,
	"grade_job_id" uuid,
	"graded_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "teacher_collection_items" (
	"collection_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"sample_index" integer NOT NULL,
	"candidate_id" uuid NOT NULL,
	"reused" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "teacher_collection_items_collection_id_task_row_id_sample_index_pk" PRIMARY KEY("collection_id","task_row_id","sample_index")
);
--> statement-breakpoint
CREATE TABLE "teacher_collections" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"experiment_id" uuid,
	"split_id" uuid NOT NULL,
	"provider_id" uuid NOT NULL,
	"provider_kind" "provider_kind" NOT NULL,
	"model" text NOT NULL,
	"parts" text[] NOT NULL,
	"task_ids" text[],
	"n_samples" integer NOT NULL,
	"params" jsonb NOT NULL,
	"params_hash" text NOT NULL,
	"prompt_hash" text NOT NULL,
	"concurrency" integer NOT NULL,
	"budget_usd" double precision,
	"max_retries" integer NOT NULL,
	"timeout_ms" integer NOT NULL,
	"grade" boolean DEFAULT true NOT NULL,
	"state" "collection_state" DEFAULT 'queued' NOT NULL,
	"stop_reason" text,
	"tasks_total" integer DEFAULT 0 NOT NULL,
	"samples_total" integer DEFAULT 0 NOT NULL,
	"samples_done" integer DEFAULT 0 NOT NULL,
	"samples_failed" integer DEFAULT 0 NOT NULL,
	"reused" integer DEFAULT 0 NOT NULL,
	"cost_saved_usd" double precision DEFAULT 0 NOT NULL,
	"tokens_in" integer DEFAULT 0 NOT NULL,
	"tokens_out" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "teacher_ledger" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"provider_id" uuid,
	"model" text NOT NULL,
	"experiment_id" uuid,
	"collection_id" uuid,
	"candidate_id" uuid,
	"tokens_in" integer NOT NULL,
	"tokens_out" integer NOT NULL,
	"cost_usd" double precision NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "teacher_prices" (
	"model" text PRIMARY KEY NOT NULL,
	"input_per_mtok" double precision NOT NULL,
	"output_per_mtok" double precision NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "teacher_providers" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"kind" "provider_kind" NOT NULL,
	"base_url" text,
	"model" text NOT NULL,
	"api_key_sealed" text,
	"extra_params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "teacher_providers_name_unique" UNIQUE("name")
);
--> statement-breakpoint
ALTER TABLE "sft_datasets" ADD CONSTRAINT "sft_datasets_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_datasets" ADD CONSTRAINT "sft_datasets_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_replays" ADD CONSTRAINT "sft_replays_dataset_id_sft_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."sft_datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_replays" ADD CONSTRAINT "sft_replays_result_dataset_id_sft_datasets_id_fk" FOREIGN KEY ("result_dataset_id") REFERENCES "public"."sft_datasets"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_samples" ADD CONSTRAINT "sft_samples_dataset_id_sft_datasets_id_fk" FOREIGN KEY ("dataset_id") REFERENCES "public"."sft_datasets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_samples" ADD CONSTRAINT "sft_samples_candidate_id_teacher_candidates_id_fk" FOREIGN KEY ("candidate_id") REFERENCES "public"."teacher_candidates"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sft_samples" ADD CONSTRAINT "sft_samples_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_candidates" ADD CONSTRAINT "teacher_candidates_origin_task_row_id_tasks_id_fk" FOREIGN KEY ("origin_task_row_id") REFERENCES "public"."tasks"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_candidates" ADD CONSTRAINT "teacher_candidates_grade_job_id_jobs_id_fk" FOREIGN KEY ("grade_job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collection_items" ADD CONSTRAINT "teacher_collection_items_collection_id_teacher_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."teacher_collections"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collection_items" ADD CONSTRAINT "teacher_collection_items_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collection_items" ADD CONSTRAINT "teacher_collection_items_candidate_id_teacher_candidates_id_fk" FOREIGN KEY ("candidate_id") REFERENCES "public"."teacher_candidates"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collections" ADD CONSTRAINT "teacher_collections_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collections" ADD CONSTRAINT "teacher_collections_provider_id_teacher_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."teacher_providers"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_collections" ADD CONSTRAINT "teacher_collections_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_ledger" ADD CONSTRAINT "teacher_ledger_provider_id_teacher_providers_id_fk" FOREIGN KEY ("provider_id") REFERENCES "public"."teacher_providers"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_ledger" ADD CONSTRAINT "teacher_ledger_collection_id_teacher_collections_id_fk" FOREIGN KEY ("collection_id") REFERENCES "public"."teacher_collections"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_ledger" ADD CONSTRAINT "teacher_ledger_candidate_id_teacher_candidates_id_fk" FOREIGN KEY ("candidate_id") REFERENCES "public"."teacher_candidates"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "teacher_providers" ADD CONSTRAINT "teacher_providers_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sft_datasets_hash_idx" ON "sft_datasets" USING btree ("hash");--> statement-breakpoint
CREATE INDEX "sft_samples_candidate_idx" ON "sft_samples" USING btree ("candidate_id");--> statement-breakpoint
CREATE UNIQUE INDEX "teacher_candidates_key_idx" ON "teacher_candidates" USING btree ("cache_key");--> statement-breakpoint
CREATE INDEX "teacher_candidates_fp_idx" ON "teacher_candidates" USING btree ("fingerprint");--> statement-breakpoint
CREATE INDEX "teacher_candidates_job_idx" ON "teacher_candidates" USING btree ("grade_job_id");--> statement-breakpoint
CREATE INDEX "teacher_items_candidate_idx" ON "teacher_collection_items" USING btree ("candidate_id");--> statement-breakpoint
CREATE INDEX "teacher_collections_experiment_idx" ON "teacher_collections" USING btree ("experiment_id");--> statement-breakpoint
CREATE INDEX "teacher_collections_created_idx" ON "teacher_collections" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "teacher_ledger_provider_idx" ON "teacher_ledger" USING btree ("provider_id");--> statement-breakpoint
CREATE INDEX "teacher_ledger_experiment_idx" ON "teacher_ledger" USING btree ("experiment_id");--> statement-breakpoint
CREATE INDEX "teacher_ledger_collection_idx" ON "teacher_ledger" USING btree ("collection_id");