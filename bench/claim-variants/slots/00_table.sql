-- Prototype, measured only (see notes/postgres-claim.md): the pool's maxParallelism as slot rows instead
-- of the pool's row lock and a count. A running attempt holds one slot (work.slot, slots.holder); a
-- claim takes free slots with FOR UPDATE SKIP LOCKED, so claims of one pool run side by side; a
-- trigger frees the slot of every attempt that leaves running, whatever statement writes it.
-- Pools with a per-key or rate limit keep the pool's lock as well. enqueue_claim() is left as it is
-- (it takes no slot): drains only. Applied by claim-profile.mjs over a migrated schema.
ALTER TABLE :"schema".work ADD COLUMN slot INTEGER;
CREATE TABLE :"schema".slots (
  pool   TEXT COLLATE "C" NOT NULL,
  slot   INTEGER NOT NULL,
  holder TEXT COLLATE "C",
  PRIMARY KEY (pool, slot)
) WITH (fillfactor = 50);

CREATE FUNCTION :"schema".make_slots() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO :"schema".slots (pool, slot) SELECT NEW.name, g FROM generate_series(0, NEW.max_parallelism - 1) g
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER pool_slots AFTER INSERT OR UPDATE OF max_parallelism ON :"schema".pools
  FOR EACH ROW EXECUTE FUNCTION :"schema".make_slots();

CREATE FUNCTION :"schema".free_slot() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE :"schema".slots s SET holder = NULL WHERE s.pool = OLD.pool AND s.slot = OLD.slot AND s.holder = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER work_slot_freed AFTER UPDATE OF state ON :"schema".work
  FOR EACH ROW WHEN (OLD.state = 'running' AND NEW.state <> 'running' AND OLD.slot IS NOT NULL)
  EXECUTE FUNCTION :"schema".free_slot();
