DROP TABLE backend_outage;
