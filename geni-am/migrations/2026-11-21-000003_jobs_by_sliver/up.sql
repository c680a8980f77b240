-- A job is claimed only when no earlier job of its sliver is queued or
-- running; this index serves that check on every claim.

CREATE INDEX jobs_sliver_seq ON jobs (sliver_urn, seq);
