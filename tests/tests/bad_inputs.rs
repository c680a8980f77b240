//! Bad input over the wire (what the GENI AM API acceptance tests send, and
//! the API's answers for unknown or empty arguments), on SQLite and on
//! PostgreSQL: malformed, altered, wrong-type, untrusted and mismatched
//! credentials; empty, malformed and manifest RSpecs (from the corpus);
//! missing or unknown RSpec versions; unknown actions, slivers and slices;
//! an unknown method is an XML-RPC fault.

use chrono::{Duration, Utc};
use geni_am::client::Client;
use geni_am_tests::aggregate::{Aggregate, DEMO_SLICE};
use geni_am_tests::calls::{Envelope, call, creds, s, st, strs, with_version};
use geni_am_tests::creds::{DevAuthority, Stranger};
use geni_am_tests::database::Store;
use geni_am_tests::flows::Slice;
use geni_am_tests::requests;
use geni_xmlrpc::{Value, fault_code};

geni_am_tests::on_both_stores!(bad_credentials, bad_rspecs_and_options, unknown_things);

/// An unknown sliver of this aggregate.
const INVALID_SLIVER: &str = "urn:publicid:IDN+geni-am.test+sliver+INVALID";

fn list_resources(client: &mut Client, credentials: Value) -> Envelope {
    call(
        client,
        "ListResources",
        vec![credentials, with_version(vec![])],
    )
}

fn bad_credentials(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(3);
    let user = aggregate.read("alice-user-cred.xml");

    let malformed = list_resources(&mut client, creds(&user[1..]));
    assert_eq!(malformed.code, 20, "malformed XML: {malformed:?}");

    let altered = user.replacen("<expires>", "<foo/><expires>", 1);
    assert_ne!(altered, user);
    let altered = list_resources(&mut client, creds(&altered));
    assert_eq!(altered.code, 20, "altered object: {altered:?}");

    let bad_type = st(vec![
        ("geni_type", s("geni_sfaBROKEN")),
        ("geni_version", s("3")),
        ("geni_value", s(&user)),
    ]);
    let bad_type = list_resources(&mut client, Value::Array(vec![bad_type]));
    assert!(
        [3, 20].contains(&bad_type.code),
        "only an unknown credential type: {bad_type:?}"
    );

    let corpus_untrusted = requests::corpus("creds/credentials/geni-tools__untrusted-usercred.xml");
    let untrusted = list_resources(&mut client, creds(&corpus_untrusted));
    assert!(
        (20..=23).contains(&untrusted.code),
        "corpus untrusted credential: {untrusted:?}"
    );
    let dev = DevAuthority::open(aggregate.dir());
    let stranger = Stranger::new().credential_for(&dev, "elsewhere");
    let untrusted = list_resources(&mut client, creds(&stranger));
    assert_eq!(
        untrusted.code, 23,
        "credential of an untrusted signer: {untrusted:?}"
    );

    // A slice credential for another slice does not open the demo slice,
    // nor does the user credential.
    let (_, other) = dev.slice_credential("other", Utc::now() + Duration::days(7));
    for (what, credential) in [("other slice", other), ("user", user)] {
        let request = requests::vms(&["x"]);
        let refused = call(
            &mut client,
            "Allocate",
            vec![s(DEMO_SLICE), creds(&credential), s(&request), st(vec![])],
        );
        assert!(
            [3, 22].contains(&refused.code),
            "{what} credential on the demo slice: {refused:?}"
        );
    }
    let expired = dev
        .slice_credential("demo", Utc::now() - Duration::hours(1))
        .1;
    let refused = call(
        &mut client,
        "Describe",
        vec![strs(&[DEMO_SLICE]), creds(&expired), with_version(vec![])],
    );
    assert_eq!(refused.code, 21, "expired slice credential: {refused:?}");
}

fn bad_rspecs_and_options(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");
    let good = requests::vms(&["n"]);
    let bad_rspecs = [
        ("empty", 1, String::new()),
        ("malformed", 1, good.replace("</rspec>", "<rspec>")),
        (
            "manifest as request",
            1,
            requests::corpus("rspec/bad/geni-tools__bad.xml.sample"),
        ),
        (
            "manifest as request",
            1,
            requests::corpus("rspec/manifest/geni-tools__amapi2-manifest.xml"),
        ),
        (
            "no RSpec namespace (unknown version)",
            4,
            requests::corpus("rspec/bad/geni-tools__two-nodes.rspec"),
        ),
        (
            "truncated",
            1,
            requests::corpus("rspec/bad/iof-tools__twist_all.rspec"),
        ),
    ];
    for (what, code, rspec) in bad_rspecs {
        let refused = call(
            &mut client,
            "Allocate",
            vec![s(DEMO_SLICE), creds(&credential), s(&rspec), st(vec![])],
        );
        assert_eq!(refused.code, code, "{what} RSpec: {refused:?}");
        assert!(!refused.output.is_empty(), "{what}: the refusal says why");
    }
    // Nothing was allocated by the refusals.
    let describe = call(
        &mut client,
        "Describe",
        vec![
            strs(&[DEMO_SLICE]),
            creds(&credential),
            with_version(vec![]),
        ],
    )
    .ok();
    assert!(describe.slivers().is_empty());

    let user = aggregate.read("alice-user-cred.xml");
    let missing = call(&mut client, "ListResources", vec![creds(&user), st(vec![])]);
    assert_eq!(missing.code, 1, "no geni_rspec_version: {missing:?}");
    let unknown_version = st(vec![(
        "geni_rspec_version",
        st(vec![("type", s("ProtoGENI")), ("version", s("9"))]),
    )]);
    let unknown = call(
        &mut client,
        "ListResources",
        vec![creds(&user), unknown_version],
    );
    assert_eq!(unknown.code, 4, "unknown RSpec version: {unknown:?}");
}

fn unknown_things(store: Store) {
    let aggregate = Aggregate::start(store);
    let mut client = aggregate.client(3);
    let credential = aggregate.read("demo-slice-cred.xml");

    match client.call("NoSuchMethod", &[]) {
        Ok(Err(fault)) => assert_eq!(fault.code(), fault_code::METHOD_NOT_FOUND),
        other => panic!("unknown method answered {other:?}"),
    }

    let mut slice = Slice {
        client: &mut client,
        urn: DEMO_SLICE.to_owned(),
        credential,
    };
    // A slice with nothing here: Describe is an empty manifest, the
    // others find nothing.
    let empty = slice.describe(&[DEMO_SLICE]).ok();
    assert!(empty.slivers().is_empty());
    assert!(empty.rspec().contains("type=\"manifest\""));
    let status = slice.status(&[DEMO_SLICE]);
    assert!(
        status.code == 12 || (status.code == 0 && status.slivers().is_empty()),
        "Status of an empty slice: {status:?}"
    );

    let allocated = slice.allocate(&requests::vms(&["u"]));
    let sliver = allocated.slivers()[0].urn.clone();
    slice.provision(&[DEMO_SLICE]);
    for action in ["", "random_action"] {
        let refused = slice.action(&[DEMO_SLICE], action);
        assert_ne!(refused.code, 0, "action {action:?} accepted");
    }
    assert_eq!(slice.status(&[INVALID_SLIVER]).code, 12, "Status");
    assert_eq!(slice.describe(&[INVALID_SLIVER]).code, 12, "Describe");
    assert_eq!(
        slice.renew(&[INVALID_SLIVER], "2030-01-01T00:00:00Z").code,
        12,
        "Renew"
    );
    assert_eq!(
        slice.action(&[INVALID_SLIVER], "geni_start").code,
        12,
        "POA"
    );
    let delete = call(
        slice.client,
        "Delete",
        vec![
            strs(&[INVALID_SLIVER]),
            creds(&slice.credential),
            st(vec![]),
        ],
    );
    assert_eq!(delete.code, 12, "Delete of an unknown sliver");
    let node = "urn:publicid:IDN+geni-am.test+node+host1";
    assert_ne!(slice.describe(&[node]).code, 0, "Describe of a node URN");
    let mixed = slice.status(&[DEMO_SLICE, sliver.as_str()]);
    assert_eq!(mixed.code, 1, "slice and sliver URNs mixed: {mixed:?}");
    slice.delete(&[DEMO_SLICE]);
}
