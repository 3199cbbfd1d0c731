CREATE TYPE "public"."setup_token_kind" AS ENUM('setup', 'invite');--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "prefix" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "id" uuid DEFAULT gen_random_uuid() NOT NULL;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "kind" "setup_token_kind" DEFAULT 'invite' NOT NULL;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "email" text;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "created_by" uuid;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD COLUMN "used_by" uuid;--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_changed_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_used_by_users_id_fk" FOREIGN KEY ("used_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_tokens_user_idx" ON "api_tokens" USING btree ("user_id");--> statement-breakpoint
ALTER TABLE "setup_tokens" ADD CONSTRAINT "setup_tokens_id_unique" UNIQUE("id");