//! Node plans at Allocate: every sliver gets the plan of its node, read
//! from the document Allocate validated, and that plan is the one the
//! stored request gives (what workers derive for a sliver of an earlier
//! release): NICs on this aggregate's LANs with the addresses asked for,
//! and the node's services.

mod core_support;

use core_support::*;
use geni_am::core::links::plan_from_stored;

/// Node `a` with services and two interfaces, `b` with one; `lan0` joins
/// `a:if0` and `b:if0`, `a:if1` is on no link.
const REQUEST: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rspec xmlns="http://www.geni.net/resources/rspec/3" type="request">
  <node client_id="a" exclusive="false">
    <sliver_type name="default-vm"/>
    <services><install url="http://x.example/a.tgz" install_path="/local"/><execute shell="bash" command="echo hi"/></services>
    <interface client_id="a:if0"><ip address="10.1.1.5" netmask="255.255.255.0" type="ipv4"/></interface>
    <interface client_id="a:if1"/>
  </node>
  <node client_id="b" exclusive="false">
    <sliver_type name="default-vm"/>
    <interface client_id="b:if0"/>
  </node>
  <link client_id="lan0">
    <interface_ref client_id="a:if0"/>
    <interface_ref client_id="b:if0"/>
  </link>
</rspec>
"#;

#[test]
fn each_sliver_stores_the_plan_its_stored_request_gives() {
    let f = fixture();
    let allocation = f.am.allocate(&principal(7), SLICE, REQUEST).unwrap();
    assert_eq!(allocation.slivers.len(), 2);
    for info in &allocation.slivers {
        let row = f.am.store().sliver(&info.urn).unwrap().unwrap();
        let stored = row.plan.as_ref().expect("a plan").value().clone();
        let derived =
            plan_from_stored(REQUEST, AUTHORITY, &row.request_id, &row.client_id).unwrap();
        assert_eq!(stored, derived, "{}", row.client_id);
        assert_eq!(stored.nics.len(), 1, "{}: one NIC, on lan0", row.client_id);
        assert_eq!(stored.nics[0].link.client_id, "lan0");
        assert_eq!(stored.nics[0].link.addresses, ["10.1.1.5"]);
        if row.client_id == "a" {
            assert_eq!(stored.nics[0].ip.as_deref(), Some("10.1.1.5"));
            assert_eq!(stored.install.len(), 1);
            assert_eq!(stored.execute[0].shell, "bash");
        } else {
            assert!(stored.install.is_empty() && stored.execute.is_empty());
        }
    }
}
