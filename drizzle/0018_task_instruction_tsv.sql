DROP INDEX "tasks_instruction_fts_idx";--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "instruction_tsv" "tsvector" GENERATED ALWAYS AS (to_tsvector('english', "instruction")) STORED;--> statement-breakpoint
CREATE INDEX "tasks_instruction_tsv_idx" ON "tasks" USING gin ("instruction_tsv");