-- The size granted to a sliver at Allocate (<emulab:xen cores ram disk>, or
-- its sliver type's own), as the VM is created and the manifest shows it.
-- cpus and memory_mb hold the capacity the sliver takes on its host, in the
-- backend's unit (an OpenNebula CPU share is not a core), and drop to zero
-- when a sliver whose VM was never built fails. NULL cores and ram_mb (rows
-- of earlier releases) mean the capacity columns.
ALTER TABLE slivers ADD COLUMN disk_gb BIGINT;
ALTER TABLE slivers ADD COLUMN cores BIGINT;
ALTER TABLE slivers ADD COLUMN ram_mb BIGINT;
