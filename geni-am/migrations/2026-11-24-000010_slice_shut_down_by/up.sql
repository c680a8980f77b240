-- Who shut a slice down (the caller of Shutdown, or the operator), so that
-- refusals name them instead of assuming the operators did it.
ALTER TABLE slices ADD COLUMN shut_down_by TEXT;
