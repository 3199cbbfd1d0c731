-- A frozen split never changes (architecture brief §2): the database itself refuses any UPDATE or
-- DELETE of a frozen split and any INSERT/UPDATE/DELETE of its assignments. A split is inserted
-- unfrozen, filled and frozen inside one transaction; the only allowed change is frozen false→true.
CREATE OR REPLACE FUNCTION agentlab_refuse_frozen_split() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF OLD.frozen THEN
      RAISE EXCEPTION 'split % is frozen and cannot be deleted', OLD.id USING ERRCODE = 'check_violation';
    END IF;
    RETURN OLD;
  END IF;
  IF OLD.frozen THEN
    RAISE EXCEPTION 'split % is frozen and cannot be changed', OLD.id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER splits_frozen_guard BEFORE UPDATE OR DELETE ON "splits"
  FOR EACH ROW EXECUTE FUNCTION agentlab_refuse_frozen_split();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION agentlab_refuse_frozen_assignment() RETURNS trigger AS $$
DECLARE
  is_frozen boolean;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    SELECT frozen INTO is_frozen FROM splits WHERE id = OLD.split_id;
    IF is_frozen THEN
      RAISE EXCEPTION 'split % is frozen: its assignments cannot be changed', OLD.split_id USING ERRCODE = 'check_violation';
    END IF;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    SELECT frozen INTO is_frozen FROM splits WHERE id = NEW.split_id;
    IF is_frozen THEN
      RAISE EXCEPTION 'split % is frozen: no assignment can be added', NEW.split_id USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
  END IF;
  RETURN OLD;
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER split_assignments_frozen_guard BEFORE INSERT OR UPDATE OR DELETE ON "split_assignments"
  FOR EACH ROW EXECUTE FUNCTION agentlab_refuse_frozen_assignment();
--> statement-breakpoint
-- TRUNCATE bypasses row triggers, so it is refused outright on both tables.
CREATE OR REPLACE FUNCTION agentlab_refuse_split_truncate() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'splits are append-only: TRUNCATE of % is refused', TG_TABLE_NAME USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
--> statement-breakpoint
CREATE TRIGGER splits_no_truncate BEFORE TRUNCATE ON "splits" FOR EACH STATEMENT EXECUTE FUNCTION agentlab_refuse_split_truncate();
--> statement-breakpoint
CREATE TRIGGER split_assignments_no_truncate BEFORE TRUNCATE ON "split_assignments" FOR EACH STATEMENT EXECUTE FUNCTION agentlab_refuse_split_truncate();
