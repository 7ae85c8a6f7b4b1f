-- Placeholder: stands in for migration 004, which is written on another line of work; drop this file when that migration lands.
SELECT 1;
