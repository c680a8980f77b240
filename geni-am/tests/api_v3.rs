//! AM API v3 at the handler level: every method and option of the GENI AM API v3
//! called with XML-RPC bodies as clients send them, by a caller with a
//! development-CA certificate and signed credentials, on a fresh SQLite
//! store; corpus requests and manifests as RSpecs.

mod api_support;
mod core_support;

use api_support::*;
use base64::Engine;
use chrono::{DateTime, TimeDelta, Utc};
use geni_am::api::ApiVersion;
use geni_xmlrpc::Value;
use std::io::Read;

/// Allocates the corpus request into slice `name`; the slice URN, its
/// credential and the sliver URNs.
fn allocated(w: &World, name: &str) -> (String, String, Vec<String>) {
    let slice = w.slice_urn(name);
    let cred = w.slice_credential(name, 30);
    let a = w.v3(
        "Allocate",
        vec![s(&slice), creds(&[&cred]), s(request()), st(&[])],
    );
    let urns = sliver_urns(get(a.ok(), "geni_slivers"));
    (slice, cred, urns)
}

fn expires(info: &Value) -> DateTime<Utc> {
    geni_am::time::parse(text(info, "geni_expires")).unwrap()
}

#[test]
fn get_version_answers_with_and_without_options() {
    let w = World::new();
    for params in [
        vec![],
        vec![st(&[("arbitrary_option", Value::Boolean(true))])],
    ] {
        let a = w.v3("GetVersion", params);
        assert_eq!(get(a.envelope(), "geni_api"), &Value::Integer(3));
        let v = a.ok();
        assert_eq!(get(v, "geni_api"), &Value::Integer(3));
        assert_eq!(
            text(get(v, "geni_api_versions"), "3"),
            "https://am.api.example:8443/am/3"
        );
        assert_eq!(
            text(get(v, "geni_api_versions"), "2"),
            "https://am.api.example:8443/am/2"
        );
        assert_eq!(text(v, "geni_allocate"), "geni_many");
        assert!(geni_xmlrpc::member(v, "geni_single_allocation").is_none());
        assert_eq!(
            text(v, "urn"),
            "urn:publicid:IDN+am.test.example+authority+am"
        );
        assert_eq!(a.output(), "");
    }
}

#[test]
fn unknown_methods_and_broken_envelopes_are_faults() {
    let w = World::new();
    let a = w.v3("CreateSliver", vec![]);
    let fault = a.0.as_ref().unwrap_err();
    assert_eq!(fault.code(), geni_xmlrpc::fault_code::METHOD_NOT_FOUND);
    let broken = w.send(
        &w.alice_chain(),
        ApiVersion::V3,
        b"<methodCall><methodName>",
    );
    assert!(broken.0.is_err());
}

#[test]
fn list_resources_plain_available_and_compressed() {
    let w = World::new();
    let user = w.user_credential();
    let plain = w.v3(
        "ListResources",
        vec![
            creds(&[&user]),
            st(&[geni3(), ("arbitrary_option", Value::Boolean(true))]),
        ],
    );
    let Value::String(ad) = plain.ok() else {
        panic!("ad is not a string")
    };
    assert!(ad.contains("type=\"advertisement\""));
    assert!(ad.contains("http://www.geni.net/resources/rspec/3/ad.xsd"));
    assert_eq!(ad.matches("<node ").count(), 2, "{ad}");

    let available = w.v3(
        "ListResources",
        vec![
            creds(&[&user]),
            st(&[geni3(), ("geni_available", s("true"))]),
        ],
    );
    let Value::String(available) = available.ok() else {
        panic!("ad is not a string")
    };
    assert!(available.contains("<available now=\"true\""), "{available}");

    let compressed = w.v3(
        "ListResources",
        vec![
            creds(&[&user]),
            st(&[geni3(), ("geni_compressed", Value::Integer(1))]),
        ],
    );
    let Value::String(packed) = compressed.ok() else {
        panic!("compressed ad is not a string")
    };
    let zlib = base64::engine::general_purpose::STANDARD
        .decode(packed)
        .unwrap();
    let mut unpacked = String::new();
    flate2::read::ZlibDecoder::new(&zlib[..])
        .read_to_string(&mut unpacked)
        .unwrap();
    assert!(unpacked.contains("type=\"advertisement\""), "{unpacked}");
    assert_eq!(unpacked.matches("<node ").count(), 2);
}

#[test]
fn list_resources_option_errors_have_their_codes() {
    let w = World::new();
    let user = w.user_credential();
    let call = |options: Value| w.v3("ListResources", vec![creds(&[&user]), options]);
    let out = call(st(&[])).fails_with(1).to_owned();
    assert!(out.contains("geni_rspec_version"), "{out}");
    call(st(&[(
        "geni_rspec_version",
        st(&[("type", s("ProtoGENI")), ("version", s("2"))]),
    )]))
    .fails_with(4);
    call(st(&[("geni_rspec_version", st(&[("type", s("GENI"))]))])).fails_with(1);
    let out = call(st(&[geni3(), ("geni_slice_urn", s(w.slice_urn("s1")))]))
        .fails_with(1)
        .to_owned();
    assert!(out.contains("Describe"), "{out}");
    call(st(&[geni3(), ("geni_available", s("perhaps"))])).fails_with(1);
}

#[test]
fn full_lifecycle_allocate_provision_start_status_describe_renew_delete() {
    let w = World::new();
    let (slice, cred, urns) = allocated(&w, "life");
    assert_eq!(urns.len(), 2);
    let c = || creds(&[&cred]);

    let users = Value::Array(vec![st(&[
        ("urn", s(w.alice.urn().to_string())),
        (
            "keys",
            strings(&["ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKx alice@laptop\n"]),
        ),
    ])]);
    let p = w.v3(
        "Provision",
        vec![
            strings(&[&slice]),
            c(),
            st(&[geni3(), ("geni_users", users)]),
        ],
    );
    let value = p.ok();
    for info in items(get(value, "geni_slivers")) {
        assert_eq!(text(info, "geni_allocation_status"), "geni_provisioned");
        assert!(expires(info) > Utc::now() + TimeDelta::days(5));
    }
    let manifest = text(value, "geni_rspec");
    assert!(manifest.contains("type=\"manifest\""));
    for urn in &urns {
        assert!(
            manifest.contains(&format!("sliver_id=\"{urn}\"")),
            "{manifest}"
        );
    }

    let start = w.v3(
        "PerformOperationalAction",
        vec![strings(&[&slice]), c(), s("geni_start"), st(&[])],
    );
    assert_eq!(items(start.ok()).len(), 2);

    let status = w.v3("Status", vec![strings(&[&slice]), c(), st(&[])]);
    let value = status.ok();
    assert_eq!(text(value, "geni_urn"), slice);
    for info in items(get(value, "geni_slivers")) {
        assert_eq!(text(info, "geni_error"), "");
        assert!(text(info, "geni_operational_status").starts_with("geni_"));
    }

    let one = w.v3("Status", vec![strings(&[&urns[0]]), c(), st(&[])]);
    assert_eq!(
        sliver_urns(get(one.ok(), "geni_slivers")),
        vec![urns[0].clone()]
    );

    let d = w.v3(
        "Describe",
        vec![
            strings(&[&slice]),
            c(),
            st(&[geni3(), ("geni_compressed", Value::Boolean(false))]),
        ],
    );
    let value = d.ok();
    assert_eq!(text(value, "geni_urn"), slice);
    assert!(text(value, "geni_rspec").contains("type=\"manifest\""));
    let mut described = sliver_urns(get(value, "geni_slivers"));
    described.sort();
    let mut expected = urns.clone();
    expected.sort();
    assert_eq!(described, expected);

    for days in [10, 2] {
        let wanted = Utc::now() + TimeDelta::days(days);
        let r = w.v3(
            "Renew",
            vec![strings(&[&slice]), c(), s(time(wanted)), st(&[])],
        );
        for info in items(r.ok()) {
            assert!((expires(info) - wanted).num_seconds().abs() <= 1);
        }
    }
    let past_slice = Utc::now() + TimeDelta::days(32);
    let refused = w.v3(
        "Renew",
        vec![strings(&[&slice]), c(), s(time(past_slice)), st(&[])],
    );
    refused.fails_with(19);
    let alap = w.v3(
        "Renew",
        vec![
            strings(&[&slice]),
            c(),
            s(time(past_slice)),
            st(&[("geni_extend_alap", Value::Boolean(true))]),
        ],
    );
    for info in items(alap.ok()) {
        assert!(expires(info) <= Utc::now() + TimeDelta::days(30));
    }

    let del = w.v3("Delete", vec![strings(&[&slice]), c(), st(&[])]);
    for info in items(del.ok()) {
        assert_eq!(text(info, "geni_allocation_status"), "geni_unallocated");
    }
    w.v3("Status", vec![strings(&[&slice]), c(), st(&[])])
        .fails_with(12);
}

#[test]
fn renew_reads_lenient_times_and_refuses_bad_ones() {
    let w = World::new();
    let (slice, cred, _) = allocated(&w, "times");
    let wanted = Utc::now() + TimeDelta::minutes(5);
    let spaced = wanted.format("%Y-%m-%d %H:%M:%S+00:00").to_string();
    let r = w.v3(
        "Renew",
        vec![strings(&[&slice]), creds(&[&cred]), s(spaced), st(&[])],
    );
    for info in items(r.ok()) {
        assert!((expires(info) - wanted).num_seconds().abs() <= 1);
    }
    w.v3(
        "Renew",
        vec![
            strings(&[&slice]),
            creds(&[&cred]),
            s("next tuesday"),
            st(&[]),
        ],
    )
    .fails_with(1);
}

#[test]
fn partial_delete_leaves_the_other_slivers() {
    let w = World::new();
    let (slice, cred, urns) = allocated(&w, "partial");
    let del = w.v3(
        "Delete",
        vec![strings(&[&urns[0]]), creds(&[&cred]), st(&[])],
    );
    assert_eq!(sliver_urns(del.ok()), vec![urns[0].clone()]);
    let status = w.v3("Status", vec![strings(&[&slice]), creds(&[&cred]), st(&[])]);
    assert_eq!(
        sliver_urns(get(status.ok(), "geni_slivers")),
        vec![urns[1].clone()]
    );
    w.v3(
        "Describe",
        vec![strings(&[&urns[0]]), creds(&[&cred]), st(&[geni3()])],
    )
    .fails_with(12);
}

#[test]
fn urns_must_name_one_slice_or_its_slivers() {
    let w = World::new();
    let (slice, cred, urns) = allocated(&w, "urns");
    let (other, other_cred, other_urns) = allocated(&w, "other");
    let describe = |urns: &[&str], cred: &str| {
        w.v3(
            "Describe",
            vec![strings(urns), creds(&[cred]), st(&[geni3()])],
        )
    };
    describe(&[&slice, &other], &cred).fails_with(1);
    describe(&[&slice, &urns[0]], &cred).fails_with(1);
    describe(&[&urns[0], &other_urns[0]], &cred).fails_with(1);
    describe(&["urn:publicid:IDN+am.test.example+node+h1"], &cred).fails_with(1);
    describe(&[], &cred).fails_with(1);
    describe(&["urn:publicid:IDN+am.test.example+sliver+INVALID"], &cred).fails_with(12);
    describe(&[&other_urns[0]], &cred).fails_with(22);
    describe(&[&urns[0], &urns[1]], &cred).ok();
    describe(&[&other], &other_cred).ok();
}

#[test]
fn describe_needs_an_rspec_version_and_answers_an_empty_slice() {
    let w = World::new();
    let slice = w.slice_urn("empty");
    let cred = w.slice_credential("empty", 30);
    w.v3(
        "Describe",
        vec![strings(&[&slice]), creds(&[&cred]), st(&[])],
    )
    .fails_with(1);
    let d = w.v3(
        "Describe",
        vec![strings(&[&slice]), creds(&[&cred]), st(&[geni3()])],
    );
    assert!(items(get(d.ok(), "geni_slivers")).is_empty());
    assert!(text(d.ok(), "geni_rspec").contains("type=\"manifest\""));
}

#[test]
fn bad_rspecs_are_refused() {
    let w = World::new();
    let slice = w.slice_urn("bad");
    let cred = w.slice_credential("bad", 30);
    let allocate = |rspec: String| {
        w.v3(
            "Allocate",
            vec![s(&slice), creds(&[&cred]), s(rspec), st(&[])],
        )
    };
    allocate(String::new()).fails_with(1);
    let malformed = request().replace("</rspec>", "<rspec>");
    allocate(malformed).fails_with(1);
    let manifest = corpus_text("rspec/manifest/felix__manifest-rspec.xml");
    allocate(manifest).fails_with(1);
    w.v3(
        "Allocate",
        vec![
            s(w.slice_urn("bad")),
            creds(&[&cred]),
            Value::Integer(3),
            st(&[]),
        ],
    )
    .fails_with(1);
    w.v3(
        "Allocate",
        vec![s(w.alice.urn().to_string()), creds(&[&cred]), s(request())],
    )
    .fails_with(1);
}

#[test]
fn operational_actions_unknown_and_empty_are_unsupported() {
    let w = World::new();
    let (slice, cred, _) = allocated(&w, "poa");
    w.v3(
        "Provision",
        vec![strings(&[&slice]), creds(&[&cred]), st(&[geni3()])],
    )
    .ok();
    // The acceptance suite's order; each must answer 0 or UNSUPPORTED.
    for action in ["geni_start", "geni_restart", "geni_stop"] {
        let code = w
            .v3(
                "PerformOperationalAction",
                vec![strings(&[&slice]), creds(&[&cred]), s(action), st(&[])],
            )
            .code();
        assert!(code == 0 || code == 13, "{action}: {code}");
    }
    for action in ["", "random_action"] {
        w.v3(
            "PerformOperationalAction",
            vec![strings(&[&slice]), creds(&[&cred]), s(action), st(&[])],
        )
        .fails_with(13);
    }
    w.v3(
        "PerformOperationalAction",
        vec![
            strings(&[&slice]),
            creds(&[&cred]),
            s("geni_update_users"),
            st(&[]),
        ],
    )
    .fails_with(1);
}

#[test]
fn provision_needs_an_rspec_version_and_known_slivers() {
    let w = World::new();
    let (slice, cred, _) = allocated(&w, "prov");
    w.v3(
        "Provision",
        vec![strings(&[&slice]), creds(&[&cred]), st(&[])],
    )
    .fails_with(1);
    w.v3(
        "Provision",
        vec![
            strings(&["urn:publicid:IDN+am.test.example+sliver+gone"]),
            creds(&[&cred]),
            st(&[geni3()]),
        ],
    )
    .fails_with(12);
    w.v3(
        "Provision",
        vec![
            strings(&[&slice]),
            creds(&[&cred]),
            st(&[geni3(), ("geni_end_time", s("soon"))]),
        ],
    )
    .fails_with(1);
}

#[test]
fn shutdown_answers_true_and_freezes_the_slice() {
    let w = World::new();
    let (slice, cred, _) = allocated(&w, "halt");
    let a = w.v3("Shutdown", vec![s(&slice), creds(&[&cred]), st(&[])]);
    assert_eq!(a.ok(), &Value::Boolean(true));
    let again = w.v3(
        "Provision",
        vec![strings(&[&slice]), creds(&[&cred]), st(&[geni3()])],
    );
    again.fails_with(3);
}
