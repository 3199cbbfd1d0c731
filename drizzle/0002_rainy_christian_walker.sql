CREATE TYPE "public"."merge_status" AS ENUM('pending', 'accepted', 'rejected');--> statement-breakpoint
CREATE TYPE "public"."split_part" AS ENUM('train', 'dev', 'test');--> statement-breakpoint
CREATE TABLE "group_merge_proposals" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"pool_id" uuid NOT NULL,
	"group_a" text NOT NULL,
	"group_b" text NOT NULL,
	"similarity" real NOT NULL,
	"task_a" text NOT NULL,
	"task_b" text NOT NULL,
	"pairs" integer NOT NULL,
	"status" "merge_status" DEFAULT 'pending' NOT NULL,
	"decided_by" uuid,
	"decided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "split_assignments" (
	"split_id" uuid NOT NULL,
	"task_row_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"group_key" text NOT NULL,
	"part" "split_part" NOT NULL,
	CONSTRAINT "split_assignments_split_id_task_id_pk" PRIMARY KEY("split_id","task_id")
);
--> statement-breakpoint
CREATE TABLE "splits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"pool_id" uuid NOT NULL,
	"name" text NOT NULL,
	"seed" integer NOT NULL,
	"dev_ratio" real NOT NULL,
	"test_ratio" real NOT NULL,
	"pool_snapshot_hash" text NOT NULL,
	"manifest_hash" text NOT NULL,
	"counts" jsonb NOT NULL,
	"leakage" jsonb NOT NULL,
	"frozen" boolean DEFAULT false NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "task_pools" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"name" text NOT NULL,
	"description" text DEFAULT '' NOT NULL,
	"builtin" boolean DEFAULT false NOT NULL,
	"snapshot_hash" text NOT NULL,
	"task_count" integer DEFAULT 0 NOT NULL,
	"group_count" integer DEFAULT 0 NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "task_pools_name_unique" UNIQUE("name")
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"pool_id" uuid NOT NULL,
	"task_id" text NOT NULL,
	"source_group" text NOT NULL,
	"group_key" text NOT NULL,
	"language" text NOT NULL,
	"instruction" text NOT NULL,
	"files" jsonb NOT NULL,
	"public_tests" jsonb NOT NULL,
	"hidden_tests" jsonb NOT NULL,
	"reference" jsonb NOT NULL,
	"metadata" jsonb NOT NULL,
	"origin" text DEFAULT '' NOT NULL,
	"fingerprint" text NOT NULL,
	"normalized_hash" text NOT NULL,
	"minhash" integer[] NOT NULL,
	"size_bytes" integer NOT NULL,
	"import_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "group_merge_proposals" ADD CONSTRAINT "group_merge_proposals_pool_id_task_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."task_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "group_merge_proposals" ADD CONSTRAINT "group_merge_proposals_decided_by_users_id_fk" FOREIGN KEY ("decided_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_assignments" ADD CONSTRAINT "split_assignments_split_id_splits_id_fk" FOREIGN KEY ("split_id") REFERENCES "public"."splits"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "split_assignments" ADD CONSTRAINT "split_assignments_task_row_id_tasks_id_fk" FOREIGN KEY ("task_row_id") REFERENCES "public"."tasks"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "splits" ADD CONSTRAINT "splits_pool_id_task_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."task_pools"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "splits" ADD CONSTRAINT "splits_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_pools" ADD CONSTRAINT "task_pools_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_pool_id_task_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."task_pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "group_merge_pair_idx" ON "group_merge_proposals" USING btree ("pool_id","group_a","group_b");--> statement-breakpoint
CREATE INDEX "group_merge_status_idx" ON "group_merge_proposals" USING btree ("pool_id","status");--> statement-breakpoint
CREATE INDEX "split_assignments_part_idx" ON "split_assignments" USING btree ("split_id","part","task_id");--> statement-breakpoint
CREATE INDEX "split_assignments_group_idx" ON "split_assignments" USING btree ("split_id","group_key");--> statement-breakpoint
CREATE INDEX "splits_pool_idx" ON "splits" USING btree ("pool_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "splits_manifest_idx" ON "splits" USING btree ("pool_id","manifest_hash");--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_pool_task_idx" ON "tasks" USING btree ("pool_id","task_id" collate "C");--> statement-breakpoint
CREATE INDEX "tasks_pool_group_idx" ON "tasks" USING btree ("pool_id","group_key" collate "C");--> statement-breakpoint
CREATE INDEX "tasks_pool_fingerprint_idx" ON "tasks" USING btree ("pool_id","fingerprint");--> statement-breakpoint
CREATE INDEX "tasks_pool_normalized_idx" ON "tasks" USING btree ("pool_id","normalized_hash");--> statement-breakpoint
CREATE INDEX "tasks_pool_origin_idx" ON "tasks" USING btree ("pool_id","origin");