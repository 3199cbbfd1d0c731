CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"tat" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "rate_limits_tat_idx" ON "rate_limits" USING btree ("tat");