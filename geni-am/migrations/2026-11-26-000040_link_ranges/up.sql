-- The IPv4 address ranges a link's requested addresses must lie in (those
-- of the network links are reserved from), as the inventory refresh last
-- read them: one row, `ranges` a JSON list of {"first", "last"} addresses,
-- NULL when the backend gives a link any address asked for (or has not
-- been read yet), so that Allocate refuses what cannot be had.
CREATE TABLE link_ranges (
    id BIGINT PRIMARY KEY NOT NULL,
    ranges TEXT,
    updated_at BIGINT NOT NULL
);
INSERT INTO link_ranges (id, ranges, updated_at) VALUES (1, NULL, 0);
