//! The advertisement: every component with its sliver types, images and
//! `<available>`, minus current reservations, valid against the ad schema
//! with the opstate extension.

mod core_support;

use core_support::*;
use geni_rspec::Document;
use geni_rspec::RSpec;
use geni_rspec::{RspecKind, Validator};

/// `(component_name, available)` of every advertised node.
fn availability(ad: &str) -> Vec<(String, Option<bool>)> {
    let doc = Document::parse(ad.as_bytes()).unwrap();
    RSpec::new(&doc)
        .unwrap()
        .nodes()
        .map(|n| (n.component_name().unwrap().into_owned(), n.available_now()))
        .collect()
}

#[test]
fn advertisement_is_a_valid_ad_of_the_inventory() {
    let f = fixture();
    let ad = f.am.advertisement(false).unwrap();
    Validator::new()
        .unwrap()
        .validate_as(ad.as_bytes(), RspecKind::Advertisement)
        .unwrap_or_else(|e| panic!("{e}\n{ad}"));
    assert_eq!(
        availability(&ad),
        [("h1".into(), Some(true)), ("h2".into(), Some(true))]
    );
    for needle in [
        "component_id=\"urn:publicid:IDN+am.test.example+node+h1\"",
        &format!("component_manager_id=\"{CM}\""),
        "<sliver_type name=\"default-vm\">",
        IMAGE,
        "rspec_opstate",
        "geni_update_users",
    ] {
        assert!(ad.contains(needle), "{needle} missing:\n{ad}");
    }
}

#[test]
fn reservations_make_components_unavailable_until_freed() {
    let f = fixture_with(&[host("h1", 1), host("h2", 2)]);
    let p = principal(30);
    f.am.allocate(&p, SLICE, &request(&["a", "b", "c"], "default-vm"))
        .unwrap();
    let ad = f.am.advertisement(false).unwrap();
    assert_eq!(
        availability(&ad),
        [("h1".into(), Some(false)), ("h2".into(), Some(false))]
    );
    assert!(availability(&f.am.advertisement(true).unwrap()).is_empty());
    f.am.delete(&p, &slice()).unwrap();
    assert_eq!(availability(&f.am.advertisement(true).unwrap()).len(), 2);
}

#[test]
fn components_the_backend_no_longer_lists_are_unavailable() {
    let f = fixture();
    f.am.store()
        .sync_components(&[host("h2", 4)], f.clock.now())
        .unwrap();
    let ad = f.am.advertisement(false).unwrap();
    assert_eq!(
        availability(&ad),
        [("h1".into(), Some(false)), ("h2".into(), Some(true))]
    );
}
