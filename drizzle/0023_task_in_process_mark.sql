ALTER TABLE "tasks" ADD COLUMN "in_process_reason" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "in_process_marked_by" uuid;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "in_process_marked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_in_process_marked_by_users_id_fk" FOREIGN KEY ("in_process_marked_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;