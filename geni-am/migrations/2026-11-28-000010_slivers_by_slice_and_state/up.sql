-- A slice's live slivers are read on every call that names the slice
-- (Allocate, Provision, Status, Describe, Delete, ...). Indexed by the slice
-- alone, that read visited every sliver the slice ever had, deleted ones
-- included, until the retention purge removed them; with the state in the
-- index it visits only the live ones.
CREATE INDEX slivers_slice_state ON slivers (slice_urn, allocation_state);
DROP INDEX slivers_slice;
-- The state poller reads the provisioned slivers that wait for the
-- backend; among many ready slivers they are few.
CREATE INDEX slivers_operational ON slivers (operational_state, allocation_state);
