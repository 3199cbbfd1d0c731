DROP INDEX "evaluations_unique_idx";--> statement-breakpoint
ALTER TABLE "evaluations" ADD COLUMN "sample_index" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "evaluations" ADD COLUMN "seed" integer;--> statement-breakpoint
ALTER TABLE "experiment_generations" ADD COLUMN "sample_index" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "experiment_generations" ADD COLUMN "seed" integer;--> statement-breakpoint
ALTER TABLE "experiment_generations" ADD COLUMN "cache_key" text;--> statement-breakpoint
ALTER TABLE "experiment_generations" DROP CONSTRAINT "experiment_generations_experiment_id_split_model_key_task_id_pk";--> statement-breakpoint
ALTER TABLE "experiment_generations" ADD CONSTRAINT "experiment_generations_experiment_id_split_model_key_task_id_sample_index_pk" PRIMARY KEY("experiment_id","split","model_key","task_id","sample_index");--> statement-breakpoint
CREATE INDEX "experiment_generations_cache_idx" ON "experiment_generations" USING btree ("cache_key");--> statement-breakpoint
CREATE UNIQUE INDEX "evaluations_unique_idx" ON "evaluations" USING btree ("experiment_id","split","model_key","task_id","sample_index");
