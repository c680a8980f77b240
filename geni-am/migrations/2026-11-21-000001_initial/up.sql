-- The aggregate's whole state, portable between SQLite and PostgreSQL:
-- TEXT ids, BIGINT unix-second timestamps, BOOLEAN flags, JSON in TEXT.

CREATE TABLE slices (
    urn TEXT PRIMARY KEY NOT NULL,
    created_at BIGINT NOT NULL,
    credential_expires BIGINT NOT NULL,
    shut_down BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE TABLE requests (
    id TEXT PRIMARY KEY NOT NULL,
    slice_urn TEXT NOT NULL REFERENCES slices (urn),
    created_at BIGINT NOT NULL,
    document TEXT NOT NULL
);
CREATE INDEX requests_slice ON requests (slice_urn);

CREATE TABLE components (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    cpus BIGINT NOT NULL,
    memory_mb BIGINT NOT NULL,
    max_vms BIGINT NOT NULL,
    exclusive BOOLEAN NOT NULL,
    available BOOLEAN NOT NULL,
    details TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE slivers (
    urn TEXT PRIMARY KEY NOT NULL,
    slice_urn TEXT NOT NULL REFERENCES slices (urn),
    request_id TEXT NOT NULL REFERENCES requests (id),
    client_id TEXT NOT NULL,
    component_id TEXT NOT NULL,
    sliver_type TEXT NOT NULL,
    disk_image TEXT,
    cpus BIGINT NOT NULL,
    memory_mb BIGINT NOT NULL,
    exclusive BOOLEAN NOT NULL,
    allocation_state TEXT NOT NULL,
    operational_state TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    error TEXT NOT NULL,
    annotations TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX slivers_slice ON slivers (slice_urn);
CREATE INDEX slivers_component ON slivers (component_id, allocation_state);
CREATE INDEX slivers_expiry ON slivers (allocation_state, expires_at);

CREATE TABLE slice_users (
    slice_urn TEXT NOT NULL REFERENCES slices (urn),
    user_urn TEXT NOT NULL,
    keys TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (slice_urn, user_urn)
);

CREATE TABLE jobs (
    id TEXT PRIMARY KEY NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    slice_urn TEXT NOT NULL,
    sliver_urn TEXT,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    run_after BIGINT NOT NULL,
    lease_owner TEXT,
    lease_expires BIGINT,
    last_error TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX jobs_ready ON jobs (state, run_after, seq);
CREATE INDEX jobs_seq ON jobs (seq);

CREATE TABLE events (
    id TEXT PRIMARY KEY NOT NULL,
    seq BIGINT NOT NULL,
    at BIGINT NOT NULL,
    slice_urn TEXT,
    sliver_urn TEXT,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE INDEX events_slice ON events (slice_urn, seq);
CREATE INDEX events_seq ON events (seq);
