-- The work an admin retry made of a finished work: NULL until it is retried. A retry sets it in the
-- statement that inserts the new work, only while it is NULL, so a work is retried once.
ALTER TABLE :"schema".work ADD COLUMN retried_as TEXT;
