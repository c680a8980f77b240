//! AM API v2 at the handler level (the GENI AM API v2 specification): GetVersion,
//! ListResources (advertisement, and with `geni_slice_urn` the slice's
//! manifest), CreateSliver with users, SliverStatus's shape, RenewSliver
//! with the real expiry in `output`, DeleteSliver and Shutdown, with
//! credentials as bare XML strings.

mod api_support;
mod core_support;

use api_support::*;
use chrono::{TimeDelta, Utc};
use geni_xmlrpc::Value;

/// Bare XML credential strings, as v2 clients send them.
fn bare(xmls: &[&str]) -> Value {
    strings(xmls)
}

/// Creates slivers in slice `name`; its URN and credential.
fn created(w: &World, name: &str) -> (String, String) {
    let slice = w.slice_urn(name);
    let cred = w.slice_credential(name, 30);
    let users = Value::Array(vec![st(&[
        ("urn", s(w.alice.urn().to_string())),
        ("keys", strings(&["ssh-rsa AAAAB3NzaC1yc2E alice@laptop"])),
    ])]);
    let a = w.v2(
        "CreateSliver",
        vec![s(&slice), bare(&[&cred]), s(request()), users, st(&[])],
    );
    let Value::String(manifest) = a.ok() else {
        panic!("manifest is not a string")
    };
    assert!(manifest.contains("type=\"manifest\""));
    assert!(manifest.contains("client_id=\"romeo\"") && manifest.contains("client_id=\"juliet\""));
    (slice, cred)
}

#[test]
fn get_version_says_api_2() {
    let w = World::new();
    let a = w.v2("GetVersion", vec![]);
    assert_eq!(get(a.envelope(), "geni_api"), &Value::Integer(2));
    assert_eq!(get(a.ok(), "geni_api"), &Value::Integer(2));
    assert_eq!(
        text(get(a.ok(), "geni_api_versions"), "2"),
        "https://am.api.example:8443/am/2"
    );
}

#[test]
fn list_resources_gives_the_ad_or_with_a_slice_its_manifest() {
    let w = World::new();
    let user = w.user_credential();
    let ad = w.v2("ListResources", vec![bare(&[&user]), st(&[geni3()])]);
    let Value::String(ad) = ad.ok() else {
        panic!("ad is not a string")
    };
    assert!(ad.contains("type=\"advertisement\""));
    w.v2("ListResources", vec![bare(&[&user]), st(&[])])
        .fails_with(1);

    let (slice, cred) = created(&w, "v2ls");
    let m = w.v2(
        "ListResources",
        vec![
            bare(&[&cred]),
            st(&[geni3(), ("geni_slice_urn", s(&slice))]),
        ],
    );
    let Value::String(manifest) = m.ok() else {
        panic!("manifest is not a string")
    };
    assert!(manifest.contains("type=\"manifest\""), "{manifest}");
    w.v2(
        "ListResources",
        vec![
            bare(&[&user]),
            st(&[geni3(), ("geni_slice_urn", s(&slice))]),
        ],
    )
    .fails_with(22);
}

#[test]
fn create_status_renew_delete() {
    let w = World::new();
    let (slice, cred) = created(&w, "v2life");
    w.v2(
        "CreateSliver",
        vec![
            s(&slice),
            bare(&[&cred]),
            s(request()),
            Value::Array(vec![]),
            st(&[]),
        ],
    )
    .fails_with(17);

    let status = w.v2("SliverStatus", vec![s(&slice), bare(&[&cred]), st(&[])]);
    let value = status.ok();
    assert_eq!(text(value, "geni_urn"), slice);
    let words = ["configuring", "ready", "failed", "unknown"];
    assert!(words.contains(&text(value, "geni_status")));
    geni_am::time::parse(text(value, "geni_expires")).unwrap();
    let resources = items(get(value, "geni_resources"));
    assert_eq!(resources.len(), 2);
    for r in resources {
        assert!(text(r, "geni_urn").contains("+sliver+"));
        assert!(words.contains(&text(r, "geni_status")));
        text(r, "geni_error");
    }

    let wanted = Utc::now() + TimeDelta::days(3);
    let r = w.v2(
        "RenewSliver",
        vec![s(&slice), bare(&[&cred]), s(time(wanted)), st(&[])],
    );
    assert_eq!(r.ok(), &Value::Boolean(true));
    let set = geni_am::time::parse(r.output()).unwrap();
    assert!((set - wanted).num_seconds().abs() <= 1);

    let far = Utc::now() + TimeDelta::days(40);
    w.v2(
        "RenewSliver",
        vec![s(&slice), bare(&[&cred]), s(time(far)), st(&[])],
    )
    .fails_with(19);
    let alap = w.v2(
        "RenewSliver",
        vec![
            s(&slice),
            bare(&[&cred]),
            s(time(far)),
            st(&[("geni_extend_alap", Value::Boolean(true))]),
        ],
    );
    assert_eq!(alap.ok(), &Value::Boolean(true));
    assert!(geni_am::time::parse(alap.output()).unwrap() < far);

    let d = w.v2("DeleteSliver", vec![s(&slice), bare(&[&cred]), st(&[])]);
    assert_eq!(d.ok(), &Value::Boolean(true));
    w.v2("SliverStatus", vec![s(&slice), bare(&[&cred]), st(&[])])
        .fails_with(12);
}

#[test]
fn shutdown_answers_true() {
    let w = World::new();
    let (slice, cred) = created(&w, "v2halt");
    let a = w.v2("Shutdown", vec![s(&slice), bare(&[&cred]), st(&[])]);
    assert_eq!(a.ok(), &Value::Boolean(true));
}

#[test]
fn bad_input_gets_its_code() {
    let w = World::new();
    let slice = w.slice_urn("v2bad");
    let cred = w.slice_credential("v2bad", 30);
    w.v2(
        "CreateSliver",
        vec![
            s(&slice),
            bare(&[&cred]),
            s(""),
            Value::Array(vec![]),
            st(&[]),
        ],
    )
    .fails_with(1);
    w.v2(
        "CreateSliver",
        vec![
            s(&slice),
            bare(&[&cred[1..]]),
            s(request()),
            Value::Array(vec![]),
            st(&[]),
        ],
    )
    .fails_with(20);
    w.v2(
        "RenewSliver",
        vec![s(&slice), bare(&[&cred]), s("whenever"), st(&[])],
    )
    .fails_with(1);
    let fault = w.v2("Allocate", vec![]);
    assert!(fault.0.is_err());
}
