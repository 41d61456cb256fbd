-- Whatever adds jobs to the outbox (accepted triggers, schedules come due) wakes the relay when it
-- commits: one statement's NOTIFY, not a statement of its own in every accepting transaction.
CREATE FUNCTION notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM added) THEN
    PERFORM pg_notify('triggers_outbox', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_notify AFTER INSERT ON outbox
  REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION notify_outbox();
