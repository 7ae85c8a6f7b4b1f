-- Per-work options read by the runtime and the enqueue's trace context.

-- JSON object, NULL when the work has none: onCompleteExcludeKinds (result kinds whose onComplete is
-- skipped), logLevel (the work's own log threshold) and trace (the enqueuing span's propagation
-- fields, such as traceparent), so each attempt's span joins the trace that enqueued the work.
ALTER TABLE workpool_work ADD COLUMN meta TEXT;
