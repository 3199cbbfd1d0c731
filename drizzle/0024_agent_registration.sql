ALTER TABLE "agents" ADD COLUMN "shell_jobs" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "registered_gpus" integer;--> statement-breakpoint
ALTER TABLE "agents" ADD COLUMN "registered_gpu_memory_mb" integer;--> statement-breakpoint
ALTER TABLE "enrollment_tokens" ADD COLUMN "shell_jobs" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Agents enrolled before the registration keep what they last reported (GPUs, declared labels);
-- the shell-job opt-in is not carried over: an admin grants it again (agents.register).
UPDATE "agents" SET "registered_gpus" = "gpu_count", "registered_gpu_memory_mb" = "gpu_memory_mb",
  "labels" = array(select distinct x from unnest("labels" || array(select jsonb_array_elements_text(coalesce("capabilities"->'labels', '[]'::jsonb)))) as x)
  WHERE "capabilities" IS NOT NULL;
