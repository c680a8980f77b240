DROP INDEX jobs_sliver_seq;
