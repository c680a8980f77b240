//! The AM API v2 lifecycle over TLS against the real binary, on SQLite and
//! on PostgreSQL: ListResources → CreateSliver → SliverStatus →
//! ListResources with `geni_slice_urn` (the manifest) → RenewSliver →
//! DeleteSliver.

use chrono::{Duration, Utc};
use geni_am::time;
use geni_am_tests::aggregate::{ALICE, Aggregate, DEMO_SLICE};
use geni_am_tests::calls::{call, s, st, users, with_version};
use geni_am_tests::database::Store;
use geni_am_tests::flows::{ALICE_KEY, V2Slice};
use geni_am_tests::requests::{self, node_client_ids};
use geni_xmlrpc::Value;

geni_am_tests::on_both_stores!(v2_lifecycle);

fn v2_lifecycle(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(2);
    // v2 credentials are bare XML strings.
    let slice_creds = Value::Array(vec![s(&aggregate.read("demo-slice-cred.xml"))]);
    let user_creds = Value::Array(vec![s(&aggregate.read("alice-user-cred.xml"))]);

    let version = call(&mut client, "GetVersion", vec![]).ok();
    assert_eq!(version.member("geni_api"), &Value::Integer(2));
    let ad = call(
        &mut client,
        "ListResources",
        vec![user_creds, with_version(vec![])],
    )
    .ok();
    assert!(ad.text().contains("type=\"advertisement\""));

    let request = requests::vms(&["pc1"]);
    let created = call(
        &mut client,
        "CreateSliver",
        vec![
            s(DEMO_SLICE),
            slice_creds.clone(),
            s(&request),
            users(ALICE, ALICE_KEY),
            st(vec![]),
        ],
    )
    .ok();
    assert!(created.text().contains("type=\"manifest\""));
    assert_eq!(node_client_ids(created.text()), ["pc1"]);

    let status = call(
        &mut client,
        "SliverStatus",
        vec![s(DEMO_SLICE), slice_creds.clone(), st(vec![])],
    )
    .ok();
    assert_eq!(
        geni_xmlrpc::as_str(status.member("geni_urn")),
        Some(DEMO_SLICE)
    );
    let Value::Array(resources) = status.member("geni_resources") else {
        panic!("geni_resources is not a list: {status:?}")
    };
    assert!(!resources.is_empty(), "SliverStatus lists the resources");
    for resource in resources {
        for key in ["geni_urn", "geni_status", "geni_error"] {
            assert!(
                geni_xmlrpc::member(resource, key)
                    .and_then(geni_xmlrpc::as_str)
                    .is_some(),
                "{key} is a string in {resource:?}"
            );
        }
    }
    let overall = geni_xmlrpc::as_str(status.member("geni_status")).expect("geni_status");
    assert!(
        ["configuring", "ready", "failed", "unknown"].contains(&overall),
        "v2 geni_status {overall}"
    );

    let manifest = call(
        &mut client,
        "ListResources",
        vec![
            slice_creds.clone(),
            with_version(vec![("geni_slice_urn", s(DEMO_SLICE))]),
        ],
    )
    .ok();
    assert!(manifest.text().contains("type=\"manifest\""));
    assert_eq!(node_client_ids(manifest.text()), ["pc1"]);

    let until = time::format(&(Utc::now() + Duration::days(2)));
    let mut slice = V2Slice {
        client: &mut client,
        credentials: slice_creds,
    };
    slice.renew(&until);
    let expires = slice.status().ok();
    let expires = geni_xmlrpc::as_str(expires.member("geni_expires")).expect("geni_expires");
    assert_eq!(expires, until, "SliverStatus shows the renewed expiry");

    slice.delete();
    let gone = slice.status();
    assert_ne!(gone.code, 0, "SliverStatus after DeleteSliver: {gone:?}");
}
