-- The operator's side (`geni-am admin`): why a slice was shut down, and
-- whether the aggregate is draining (new Allocate and CreateSliver
-- refused, existing slivers kept), in one row every process sharing the
-- database sees. Additive: a running earlier release ignores both.
ALTER TABLE slices ADD COLUMN shut_down_reason TEXT;
CREATE TABLE drain (
    id BIGINT PRIMARY KEY NOT NULL,
    since BIGINT,
    operator TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    updated_at BIGINT NOT NULL
);
INSERT INTO drain (id, since, operator, reason, updated_at) VALUES (1, NULL, '', '', 0);
