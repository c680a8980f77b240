-- The VLAN tag the backend reports for a link's network (an OpenNebula
-- network's VLAN_ID, which a reservation takes from its parent), as the
-- manifest's vlantag shows it. NULL: untagged, or a row of an earlier
-- release (shown as 0 until the network is created again).
ALTER TABLE link_networks ADD COLUMN vlan_tag BIGINT;
