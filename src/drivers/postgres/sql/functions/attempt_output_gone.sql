-- Deletes the attempt output of the work rows a DELETE statement removed (its transition table `gone`).
CREATE OR REPLACE FUNCTION :"schema".attempt_output_gone() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  DELETE FROM :"schema".attempt_output o USING gone g WHERE o.work_id = g.id;
  RETURN NULL;
END
$$;
