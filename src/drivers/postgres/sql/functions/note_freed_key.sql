-- Trigger work_key_freed: notes the key of an attempt leaving running (or of unparked pending work leaving
-- the queue), for the next claim to give its parked work back. A plain insert, no unique index: two
-- transactions noting the same keys in opposite orders would otherwise wait for each other's
-- uncommitted notes (a deadlock).
CREATE OR REPLACE FUNCTION :"schema".note_freed_key() RETURNS TRIGGER
LANGUAGE plpgsql
AS $$
BEGIN
  INSERT INTO :"schema".freed_keys (pool, key) VALUES (OLD.pool, OLD.key);
  RETURN NULL;
END
$$;
