DROP TABLE events;
DROP TABLE jobs;
DROP TABLE slice_users;
DROP TABLE slivers;
DROP TABLE components;
DROP TABLE requests;
DROP TABLE slices;
