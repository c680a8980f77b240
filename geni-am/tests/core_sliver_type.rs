//! Leniency towards requests GENI v3 allows: a node without `sliver_type`
//! gets the configured default (or the first advertised type) and the
//! manifest shows it; what this aggregate cannot serve (a node of its own
//! with two sliver types, an end of its own link that no node declares) is
//! refused with the line and the reason, while another manager's link is
//! left to that manager.

mod core_support;

use core_support::*;
use geni_am::core::{Aggregate, AggregateConfig, Policy};
use geni_am::geni::GeniCode;
use geni_am::store::Store;
use geni_rspec::Document;
use geni_rspec::RSpec;
use geni_rspec::{RspecKind, Validator};
use std::sync::Arc;

/// A GENI v3 request around `body`.
fn request_of(body: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rspec xmlns=\"http://www.geni.net/resources/rspec/3\" type=\"request\">\n{body}\n</rspec>\n"
    )
}

/// An aggregate on `fixture`'s store whose default sliver type is `default`.
fn with_default(fixture: &Fixture, default: &str) -> Aggregate {
    let config = AggregateConfig {
        policy: Policy {
            default_sliver_type: Some(default.into()),
            ..Policy::default()
        },
        ..config()
    };
    let clock = fixture.clock.clone();
    Aggregate::new(Store::open(&fixture.url, 2).unwrap(), config)
        .unwrap()
        .with_clock(Arc::new(move || clock.now()))
}

/// The sliver type names of node `client_id` in `manifest`, which must be
/// a valid manifest.
fn sliver_types_in(manifest: &str, client_id: &str) -> Vec<String> {
    let valid = Validator::new()
        .unwrap()
        .validate_as(manifest.as_bytes(), RspecKind::Manifest);
    assert!(valid.is_ok(), "{valid:?}\n{manifest}");
    let doc = Document::parse(manifest.as_bytes()).unwrap();
    let root = RSpec::new(&doc).unwrap();
    let node = root.node(client_id).unwrap();
    node.sliver_types()
        .filter_map(|t| t.name().map(|n| n.into_owned()))
        .collect()
}

const UNTYPED: &str = "<node client_id=\"free\" exclusive=\"false\"/>";

#[test]
fn a_node_without_sliver_type_gets_the_first_advertised_type_shown_in_the_manifest() {
    let f = fixture();
    let allocation =
        f.am.allocate(&principal(30), SLICE, &request_of(UNTYPED))
            .unwrap();
    assert_eq!(
        sliver_types_in(&allocation.manifest, "free"),
        ["default-vm"]
    );
    let described = f.am.describe(&slice()).unwrap();
    assert_eq!(sliver_types_in(&described.manifest, "free"), ["default-vm"]);
}

#[test]
fn a_node_without_sliver_type_gets_the_configured_default() {
    let f = fixture();
    let am = with_default(&f, "emulab-xen");
    let allocation = am
        .allocate(&principal(30), SLICE, &request_of(UNTYPED))
        .unwrap();
    assert_eq!(
        sliver_types_in(&allocation.manifest, "free"),
        ["emulab-xen"]
    );
}

#[test]
fn a_requested_sliver_type_is_kept_whatever_the_default() {
    let f = fixture();
    let am = with_default(&f, "emulab-xen");
    let allocation = am
        .allocate(&principal(30), SLICE, &request(&["asked"], "default-vm"))
        .unwrap();
    assert_eq!(
        sliver_types_in(&allocation.manifest, "asked"),
        ["default-vm"]
    );
}

#[test]
fn a_default_no_component_offers_is_badargs_naming_it() {
    let f = fixture();
    let am = with_default(&f, "huge-vm");
    let err = am
        .allocate(&principal(30), SLICE, &request_of(UNTYPED))
        .unwrap_err()
        .answered();
    assert_eq!(err.code, GeniCode::BadArgs, "{err}");
    assert!(
        err.message.contains(
            "line 3: node `free` gets the default sliver type `huge-vm`, which is not offered"
        ),
        "{err}"
    );
}

#[test]
fn a_node_of_ours_with_two_sliver_types_is_badargs_saying_why() {
    let f = fixture();
    let body = "<node client_id=\"twice\">\n<sliver_type name=\"default-vm\"/>\n<sliver_type name=\"emulab-xen\"/>\n</node>";
    let err =
        f.am.allocate(&principal(30), SLICE, &request_of(body))
            .unwrap_err()
            .answered();
    assert_eq!(err.code, GeniCode::BadArgs, "{err}");
    assert!(
        err.message
            .contains("line 3: node `twice` has 2 sliver_type elements"),
        "{err}"
    );
    assert!(err.message.contains("one VM of one type"), "{err}");
}

const OURS: &str =
    "<node client_id=\"a\"><sliver_type name=\"default-vm\"/><interface client_id=\"a:0\"/></node>";

#[test]
fn an_end_of_our_link_that_no_node_declares_is_badargs_with_its_line() {
    let f = fixture();
    let body = format!(
        "{OURS}\n<link client_id=\"l\">\n<interface_ref client_id=\"a:0\"/>\n<interface_ref client_id=\"nowhere\"/>\n</link>"
    );
    let err =
        f.am.allocate(&principal(30), SLICE, &request_of(&body))
            .unwrap_err()
            .answered();
    assert_eq!(err.code, GeniCode::BadArgs, "{err}");
    assert!(
        err.message.contains(
            "line 6: link `l` of this aggregate names interface `nowhere`, which no node of this request declares"
        ),
        "{err}"
    );
}

#[test]
fn another_managers_link_to_interfaces_no_node_declares_is_copied() {
    let f = fixture();
    let link = "<link client_id=\"wan\"><component_manager name=\"urn:publicid:IDN+NSI+authority+tnrm\"/><interface_ref client_id=\"urn:publicid:tn:aist:stp1\"/></link>";
    let allocation =
        f.am.allocate(
            &principal(30),
            SLICE,
            &request_of(&format!("{OURS}\n{link}")),
        )
        .unwrap();
    assert!(
        allocation.manifest.contains(link),
        "{}",
        allocation.manifest
    );
}
