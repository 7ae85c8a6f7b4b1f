-- What a running action reports of itself: its last progress and its log lines, one row per attempt that
-- reported any. Written by its worker (coalesced, fenced by the attempt and worker holding the work),
-- read by status() and the admin API, deleted with its work.
CREATE TABLE workpool_attempt_output (
  work_id      TEXT NOT NULL,
  attempt      INTEGER NOT NULL,
  -- JSON of the last progress reported (a number 0..100 or an object); NULL when none was.
  progress     TEXT,
  progress_at  INTEGER,
  -- JSON array of the attempt's last log lines, oldest first: {at, level, message, fields?, cut?}.
  logs         TEXT,
  -- Earlier lines dropped to keep the attempt's lines within their bounds.
  logs_dropped INTEGER NOT NULL DEFAULT 0,
  updated_at   INTEGER NOT NULL,
  PRIMARY KEY (work_id, attempt)
) WITHOUT ROWID;

CREATE TRIGGER workpool_attempt_output_gone AFTER DELETE ON workpool_work
BEGIN
  DELETE FROM workpool_attempt_output WHERE work_id = OLD.id;
END;
