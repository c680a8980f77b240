ALTER TABLE slices DROP COLUMN shut_down_by;
