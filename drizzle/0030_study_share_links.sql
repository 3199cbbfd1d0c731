ALTER TABLE "share_links" ALTER COLUMN "report_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "share_links" ADD COLUMN "study_id" uuid;--> statement-breakpoint
ALTER TABLE "share_links" ADD CONSTRAINT "share_links_study_id_studies_id_fk" FOREIGN KEY ("study_id") REFERENCES "public"."studies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "share_links_study_idx" ON "share_links" USING btree ("study_id");--> statement-breakpoint
ALTER TABLE "share_links" ADD CONSTRAINT "share_links_one_target" CHECK (("share_links"."report_id" is null) <> ("share_links"."study_id" is null));