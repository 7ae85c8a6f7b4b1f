-- Measured only (see notes/postgres-claim.md): the work table without its index of finished work (which
-- retention needs), to see what one index entry per finished job costs a drain.
DROP INDEX :"schema".work_finished;
