DROP TABLE drain;
ALTER TABLE slices DROP COLUMN shut_down_reason;
