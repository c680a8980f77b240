-- The cloud's outage as the background jobs see it: one row, whose `since`
-- is set while the backend does not answer, so that Status and
-- ListResources (of every process sharing the database) can say so.
CREATE TABLE backend_outage (
    id BIGINT PRIMARY KEY NOT NULL,
    since BIGINT,
    detail TEXT NOT NULL DEFAULT '',
    updated_at BIGINT NOT NULL
);
INSERT INTO backend_outage (id, since, detail, updated_at) VALUES (1, NULL, '', 0);
