CREATE INDEX slivers_slice ON slivers (slice_urn);
DROP INDEX slivers_slice_state;
DROP INDEX slivers_operational;
