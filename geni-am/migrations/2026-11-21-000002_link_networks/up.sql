-- The backend networks of link slivers: one per link of a request at this
-- AM, created before the first VM on it and removed once destroyed.

CREATE TABLE link_networks (
    tag TEXT PRIMARY KEY NOT NULL,
    slice_urn TEXT NOT NULL REFERENCES slices (urn),
    name TEXT NOT NULL,
    handle TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX link_networks_slice ON link_networks (slice_urn);
