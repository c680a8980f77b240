//! Link addresses at Allocate: with the address ranges the backend
//! reserves links from in the store, a request asking for an address
//! outside all of them is refused with BADARGS naming the link, the
//! address and the ranges, and nothing is allocated; an address inside
//! them, a link asking for none, and a backend that reports no ranges
//! allocate as before. On SQLite and PostgreSQL.

mod core_support;

use core_support::*;
use geni_am::core::Aggregate;
use geni_am::geni::GeniCode;
use geni_am::model::AddressRange;
use geni_am::store::Store;

/// Two nodes on link `lan0`, `a:if0` asking for `address`.
fn link_request(address: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n  <node client_id=\"a\" exclusive=\"false\">\n    <sliver_type name=\"default-vm\"/>\n    <interface client_id=\"a:if0\"><ip address=\"{address}\" netmask=\"255.255.255.0\" type=\"ipv4\"/></interface>\n  </node>\n  <node client_id=\"b\" exclusive=\"false\">\n    <sliver_type name=\"default-vm\"/>\n    <interface client_id=\"b:if0\"/>\n  </node>\n  <link client_id=\"lan0\">\n    <interface_ref client_id=\"a:if0\"/>\n    <interface_ref client_id=\"b:if0\"/>\n  </link>\n</rspec>\n"
    )
}

/// Stores `ranges` as the backend's, as the inventory refresh does.
fn store_ranges(url: &str, ranges: Option<&[AddressRange]>) {
    let store = Store::open(url, 2).expect("store opens");
    store
        .sync_link_ranges(ranges, start())
        .expect("ranges stored");
}

fn parent_range() -> AddressRange {
    AddressRange::starting_at("10.1.1.1".parse().unwrap(), 100).unwrap()
}

fn an_address_outside_the_ranges_is_refused_and_one_inside_allocated(am: &Aggregate, url: &str) {
    store_ranges(url, Some(&[parent_range()]));
    let err = am
        .allocate(&principal(7), SLICE, &link_request("10.9.9.9"))
        .unwrap_err()
        .answered();
    assert_eq!(err.code, GeniCode::BadArgs);
    for part in ["`lan0`", "10.9.9.9", "10.1.1.1–10.1.1.100"] {
        assert!(err.message.contains(part), "{part} in: {}", err.message);
    }
    let nothing = am.status(&slice());
    assert!(
        nothing.map_or(true, |s| s.slivers.is_empty()),
        "nothing is allocated"
    );
    let allocation = am
        .allocate(&principal(7), SLICE, &link_request("10.1.1.100"))
        .expect("the last address of the range");
    assert_eq!(allocation.slivers.len(), 2);
}

#[test]
fn an_address_outside_the_ranges_is_refused_and_one_inside_allocated_on_sqlite() {
    let f = fixture();
    an_address_outside_the_ranges_is_refused_and_one_inside_allocated(&f.am, &f.url);
}

#[test]
fn an_address_outside_the_ranges_is_refused_and_one_inside_allocated_on_postgres() {
    if let Some((db, am, _clock)) = pg_fixture_with("link_ranges", &[host("h1", 4)]) {
        an_address_outside_the_ranges_is_refused_and_one_inside_allocated(&am, &db.url);
    }
}

#[test]
fn without_ranges_any_address_is_allocated_as_before() {
    let f = fixture();
    f.am.allocate(&principal(7), SLICE, &link_request("10.9.9.9"))
        .expect("no ranges stored yet");
    store_ranges(&f.url, Some(&[parent_range()]));
    store_ranges(&f.url, None);
    let other = "urn:publicid:IDN+ch.test.example:proj+slice+exp2";
    let mut p = principal(7);
    p.slice_urn = Some(other.into());
    f.am.allocate(&p, other, &link_request("192.168.7.7"))
        .expect("a backend that gives any address");
}

#[test]
fn a_link_without_requested_addresses_is_not_checked() {
    let f = fixture();
    store_ranges(&f.url, Some(&[]));
    f.am.allocate(&principal(7), SLICE, &request(&["a", "b"], "default-vm"))
        .expect("no addresses asked for");
    let other = "urn:publicid:IDN+ch.test.example:proj+slice+exp2";
    let mut p = principal(7);
    p.slice_urn = Some(other.into());
    let err =
        f.am.allocate(&p, other, &link_request("10.1.1.5"))
            .unwrap_err()
            .answered();
    assert!(err.message.contains("(none)"), "{}", err.message);
}
