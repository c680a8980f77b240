-- Slivers carry a version, raised by every write, so an observation of
-- the backend is recorded only if no other writer changed the sliver
-- since it was read (compare-and-set); and the time they were deleted,
-- so deleted slivers can be purged once the retention period has passed.
-- Slivers deleted before this migration count as deleted at their expiry.
-- The indexes serve the purge of slivers, finished jobs and old events.

ALTER TABLE slivers ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE slivers ADD COLUMN deleted_at BIGINT;
UPDATE slivers SET deleted_at = expires_at WHERE allocation_state = 'geni_unallocated';
CREATE INDEX slivers_deleted ON slivers (deleted_at);
CREATE INDEX slivers_request ON slivers (request_id);
CREATE INDEX jobs_finished ON jobs (state, updated_at);
CREATE INDEX events_at ON events (at);
