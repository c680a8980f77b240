-- A sliver's disk size in GB, when the request sized it (<emulab:xen
-- disk>); cpus and memory_mb already hold the granted cores and memory.
ALTER TABLE slivers ADD COLUMN disk_gb BIGINT;
