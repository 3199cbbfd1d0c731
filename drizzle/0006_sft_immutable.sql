-- SFT dataset snapshots are immutable (issue 5): samples can never change or disappear, and a
-- dataset row can only have its supervised-token counts filled in, once.
CREATE OR REPLACE FUNCTION sft_samples_immutable() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'SFT dataset samples are immutable' USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER sft_samples_immutable BEFORE UPDATE OR DELETE ON sft_samples FOR EACH ROW EXECUTE FUNCTION sft_samples_immutable();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION sft_datasets_immutable() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    RAISE EXCEPTION 'SFT dataset snapshots are immutable' USING ERRCODE = 'check_violation';
  END IF;
  IF (to_jsonb(NEW) - 'token_counts') IS DISTINCT FROM (to_jsonb(OLD) - 'token_counts')
     OR (OLD.token_counts IS NOT NULL AND NEW.token_counts IS DISTINCT FROM OLD.token_counts) THEN
    RAISE EXCEPTION 'SFT dataset snapshots are immutable (only token counts may be set, once)' USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER sft_datasets_immutable BEFORE UPDATE OR DELETE ON sft_datasets FOR EACH ROW EXECUTE FUNCTION sft_datasets_immutable();
