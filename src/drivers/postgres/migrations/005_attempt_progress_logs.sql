-- What a running action reports of itself: its last progress and its log lines, one row per attempt that
-- reported any. Written by its worker (coalesced, fenced by the attempt and worker holding the work),
-- read by status() and the admin API, deleted with its work.
CREATE TABLE :"schema".attempt_output (
  work_id      TEXT COLLATE "C" NOT NULL,
  attempt      INTEGER NOT NULL,
  -- JSON of the last progress reported (a number 0..100 or an object); NULL when none was.
  progress     TEXT,
  progress_at  BIGINT,
  -- JSON array of the attempt's last log lines, oldest first: {at, level, message, fields?, cut?}.
  logs         TEXT,
  -- Earlier lines dropped to keep the attempt's lines within their bounds.
  logs_dropped INTEGER NOT NULL DEFAULT 0,
  updated_at   BIGINT NOT NULL,
  PRIMARY KEY (work_id, attempt)
);

-- Once per DELETE statement on work (not per row, and no foreign key, whose checks would lock work rows).
CREATE TRIGGER work_attempt_output_gone AFTER DELETE ON :"schema".work
  REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION :"schema".attempt_output_gone();
