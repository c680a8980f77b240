DROP TABLE link_ranges;
