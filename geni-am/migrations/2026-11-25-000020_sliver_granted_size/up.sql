-- The size granted to a sliver at Allocate (<emulab:xen cores ram disk>, or
-- its sliver type's own), as the VM is created and the manifest shows it.
-- cpus and memory_mb hold the capacity the sliver takes on its host, in the
-- backend's unit (an OpenNebula CPU share is not a core), and drop to zero
-- when a sliver whose VM was never built fails. Rows of earlier releases
-- (NULL cores and ram_mb, cpus counted in cores) are given their size and
-- their capacity in the backend's unit by `serve` at start, once the
-- components follow the backend (Store::adopt_earlier_sizes).
ALTER TABLE slivers ADD COLUMN disk_gb BIGINT;
ALTER TABLE slivers ADD COLUMN cores BIGINT;
ALTER TABLE slivers ADD COLUMN ram_mb BIGINT;
