DROP TABLE link_networks;
