ALTER TABLE "splits" ADD COLUMN "admission" jsonb;--> statement-breakpoint
ALTER TABLE "sft_datasets" ADD CONSTRAINT "sft_datasets_name_length" CHECK (char_length("sft_datasets"."name") <= 200);--> statement-breakpoint
ALTER TABLE "teacher_collections" ADD CONSTRAINT "teacher_collections_name_length" CHECK (char_length("teacher_collections"."name") <= 200);--> statement-breakpoint
ALTER TABLE "experiments" ADD CONSTRAINT "experiments_name_length" CHECK (char_length("experiments"."name") <= 200);