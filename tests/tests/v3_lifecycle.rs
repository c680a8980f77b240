//! The AM API v3 lifecycle over TLS against the real binary, on SQLite and
//! on PostgreSQL: GetVersion → ListResources (plain, `geni_available`,
//! `geni_compressed`) → Allocate → Provision (with `geni_users`) →
//! `geni_start` → Status until `geni_ready` → Describe (with the LAN's
//! addresses) → Renew (longer,
//! shorter, past the slice: refused, and clamped with `geni_extend_alap`)
//! → Delete.

use chrono::{DateTime, Duration, Utc};
use geni_am::time;
use geni_am_tests::aggregate::{Aggregate, DEMO_SLICE};
use geni_am_tests::calls::{Envelope, call, creds, decompress, s, st, strs, with_version};
use geni_am_tests::creds::DevAuthority;
use geni_am_tests::database::Store;
use geni_am_tests::flows::{ALICE_KEY, Slice, urns};
use geni_am_tests::requests::{self, node_client_ids, node_sliver_ids};
use geni_xmlrpc::Value;

/// Days the lifecycle's slice credential is valid.
const SLICE_DAYS: i64 = 20;

geni_am_tests::on_both_stores!(full_lifecycle);

fn full_lifecycle(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(3);
    let user_credential = aggregate.read("alice-user-cred.xml");

    let version = call(&mut client, "GetVersion", vec![]).ok();
    assert_eq!(version.member("geni_api"), &Value::Integer(3));

    let list = |client: &mut _, extra| {
        call(
            client,
            "ListResources",
            vec![creds(&user_credential), with_version(extra)],
        )
        .ok()
    };
    let plain = list(&mut client, vec![]);
    let ad = plain.text().to_owned();
    assert!(
        ad.contains("type=\"advertisement\""),
        "not an advertisement: {ad}"
    );
    assert_eq!(
        node_client_ids(&ad).len(),
        0,
        "an advertisement has no client_ids"
    );
    let nodes = ad.matches("<node ").count();
    assert_eq!(nodes, 2, "the two simulated hosts are advertised: {ad}");

    let available = list(&mut client, vec![("geni_available", Value::Boolean(true))]);
    let available = available.text();
    assert_eq!(
        available.matches("<available now=\"true\"").count(),
        available.matches("<node ").count(),
        "every node available now: {available}"
    );

    let compressed = list(&mut client, vec![("geni_compressed", Value::Boolean(true))]);
    let unpacked = decompress(compressed.text());
    assert!(unpacked.contains("type=\"advertisement\""));
    assert_eq!(unpacked.matches("<node ").count(), nodes);

    // A slice credential that ends before the longest lease the
    // aggregate grants (30 days), so "past the slice" is its own refusal.
    let slice_end = Utc::now() + Duration::days(SLICE_DAYS);
    let (slice_urn, credential) =
        DevAuthority::open(aggregate.dir()).slice_credential("demo", slice_end);
    assert_eq!(slice_urn, DEMO_SLICE);
    let mut slice = Slice {
        client: &mut client,
        urn: DEMO_SLICE.to_owned(),
        credential,
    };
    let allocated = slice.allocate(&requests::vms_on_lan(&["vm1", "vm2"]));
    let manifest = allocated.rspec();
    assert!(manifest.contains("type=\"manifest\""));
    assert!(manifest.contains("http://www.geni.net/resources/rspec/3/manifest.xsd"));
    assert_eq!(node_client_ids(&manifest), ["vm1", "vm2"]);
    assert!(
        manifest.contains("urn:example:e2e"),
        "unknown extension kept"
    );
    let sliver_urns = urns(&allocated.slivers());
    assert_eq!(sliver_urns.len(), 2);

    slice.provision(&[DEMO_SLICE]);
    let started = slice.action(&[DEMO_SLICE], "geni_start").ok();
    assert_eq!(urns(&started.slivers()), sliver_urns);
    let status = slice.wait_ready(&[DEMO_SLICE]);
    assert_eq!(
        geni_xmlrpc::as_str(status.member("geni_urn")),
        Some(DEMO_SLICE),
        "Status names the slice"
    );
    assert!(status.slivers().iter().all(|s| s.error.is_empty()));

    let described = slice.describe(&[DEMO_SLICE]).ok();
    assert_eq!(
        geni_xmlrpc::as_str(described.member("geni_urn")),
        Some(DEMO_SLICE)
    );
    assert_describes(&described, &sliver_urns);

    renewals(&mut slice, &sliver_urns, slice_end);

    let deleted = slice.delete(&[DEMO_SLICE]);
    assert_eq!(urns(&deleted.slivers()), sliver_urns);
    let after = slice.status(&[DEMO_SLICE]);
    assert!(
        after.code == 12 || (after.code == 0 && after.slivers().is_empty()),
        "Status after Delete: {after:?}"
    );
}

/// The manifest joins the sliver-info on sliver_id, names logins and
/// carries alice's key in the ssh-user extension.
fn assert_describes(described: &Envelope, sliver_urns: &[String]) {
    let manifest = described.rspec();
    let mut ids = node_sliver_ids(&manifest);
    ids.sort();
    assert_eq!(ids, sliver_urns, "manifest sliver_id = geni_sliver_urn");
    assert_eq!(urns(&described.slivers()), sliver_urns);
    assert!(manifest.contains("<login "), "login service: {manifest}");
    assert!(
        manifest.contains("http://www.geni.net/resources/rspec/ext/user/1"),
        "ssh-user extension: {manifest}"
    );
    assert!(manifest.contains(ALICE_KEY), "alice's key in the manifest");
    for index in 0..sliver_urns.len() {
        let address = format!("address=\"{}\"", requests::lan_address(index));
        assert!(
            manifest.contains(&address),
            "the LAN address asked for is in the manifest: {manifest}"
        );
    }
    assert_eq!(
        manifest.matches("mac_address=\"02:00:").count(),
        sliver_urns.len(),
        "each interface has its MAC: {manifest}"
    );
}

/// Renew longer, then shorter, then past the slice credential (refused,
/// leaving the expiry as it was; with `geni_extend_alap` clamped to the
/// slice's end).
fn renewals(slice: &mut Slice<'_>, sliver_urns: &[String], slice_end: DateTime<Utc>) {
    let current = slice.status(&[DEMO_SLICE]).ok().slivers()[0].expires_at();
    let longer = current + Duration::days(3);
    let renewed = slice.renew(&[DEMO_SLICE], &time::format(&longer)).ok();
    for sliver in renewed.slivers() {
        assert_eq!(sliver.expires_at(), longer, "renewed longer: {sliver:?}");
    }
    let shorter = Utc::now() + Duration::days(1);
    let shorter = time::parse(&time::format(&shorter)).expect("own format parses");
    let first: Vec<&str> = sliver_urns[..1].iter().map(String::as_str).collect();
    let renewed = slice.renew(&first, &time::format(&shorter)).ok();
    assert_eq!(renewed.slivers().len(), 1, "only the named sliver renewed");
    assert_eq!(
        renewed.slivers()[0].expires_at(),
        shorter,
        "renewed shorter"
    );

    let past_slice = slice_end + Duration::days(1);
    let refused = slice.renew(&[DEMO_SLICE], &time::format(&past_slice));
    assert_ne!(refused.code, 0, "Renew past the slice credential accepted");
    let status = slice.status(&[DEMO_SLICE]).ok();
    for sliver in status.slivers() {
        let expected = if sliver.urn == sliver_urns[0] {
            shorter
        } else {
            longer
        };
        assert_eq!(sliver.expires_at(), expected, "unchanged by the refusal");
    }

    let alap = st(vec![("geni_extend_alap", Value::Boolean(true))]);
    let clamped = call(
        slice.client,
        "Renew",
        vec![
            strs(&[DEMO_SLICE]),
            creds(&slice.credential),
            s(&time::format(&past_slice)),
            alap,
        ],
    )
    .ok();
    for sliver in clamped.slivers() {
        let expires = sliver.expires_at();
        assert!(
            expires <= slice_end && expires > slice_end - Duration::seconds(2),
            "geni_extend_alap clamps to the slice's end {slice_end}: {sliver:?}"
        );
    }
}
