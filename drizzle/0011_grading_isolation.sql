CREATE TYPE "public"."grading_isolation" AS ENUM('judge', 'in_process');--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "grading_isolation" "grading_isolation" DEFAULT 'judge' NOT NULL;