ALTER TABLE link_networks DROP COLUMN vlan_tag;
