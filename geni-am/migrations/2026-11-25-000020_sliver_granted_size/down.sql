ALTER TABLE slivers DROP COLUMN ram_mb;
ALTER TABLE slivers DROP COLUMN cores;
ALTER TABLE slivers DROP COLUMN disk_gb;
