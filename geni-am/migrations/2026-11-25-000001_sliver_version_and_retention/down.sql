DROP INDEX events_at;
DROP INDEX jobs_finished;
DROP INDEX slivers_request;
DROP INDEX slivers_deleted;
ALTER TABLE slivers DROP COLUMN deleted_at;
ALTER TABLE slivers DROP COLUMN version;
