ALTER TABLE slivers DROP COLUMN disk_gb;
