//! Credential checks at the handler level (GENI AM API v3 "Authorization", SFA credentials, speaks-for): every bad
//! credential the acceptance suite sends answered with its exact
//! CREDENTIAL_* or FORBIDDEN code, credentials as structs or bare strings,
//! speaks-for, and the credential's expiry as the sliver's hard cap.

mod api_support;
mod core_support;

use api_support::*;
use chrono::{TimeDelta, Utc};
use geni_am::api::ApiVersion;
use geni_credentials::devca::Authority;
use geni_credentials::sign::{self, Algorithms};
use geni_xmlrpc::Value;

/// ListResources with `credentials`.
fn list(w: &World, credentials: Value) -> Answer {
    w.v3("ListResources", vec![credentials, st(&[geni3()])])
}

/// Describe of slice `name` with `credentials`.
fn describe(w: &World, name: &str, credentials: Value) -> Answer {
    w.v3(
        "Describe",
        vec![strings(&[&w.slice_urn(name)]), credentials, st(&[geni3()])],
    )
}

#[test]
fn a_good_user_credential_lists_resources_as_struct_or_bare_string() {
    let w = World::new();
    let user = w.user_credential();
    list(&w, creds(&[&user])).ok();
    list(&w, Value::Array(vec![s(&user)])).ok();
}

#[test]
fn listresources_without_any_credential_is_forbidden_unless_the_advertisement_is_public() {
    let w = World::new();
    let out = list(&w, Value::Array(vec![])).fails_with(3).to_owned();
    assert!(out.contains("no credential was presented"), "{out}");
    assert!(out.contains("not public"), "{out}");

    let mut config = api_support::config();
    config.aggregate.public_advertisement = true;
    let public = World::with_config(config);
    let advertisement = public.v3("ListResources", vec![Value::Array(vec![]), st(&[geni3()])]);
    let Value::String(rspec) = advertisement.ok() else {
        panic!("ListResources answered {:?}", advertisement.ok());
    };
    assert!(rspec.contains("type=\"advertisement\""), "{rspec}");
}

#[test]
fn a_refusal_of_many_bad_credentials_names_a_few_and_counts_them() {
    let w = World::new();
    let user = w.user_credential();
    let broken = &user[1..];
    let many: Vec<&str> = std::iter::repeat_n(broken, 200).collect();
    let out = list(&w, creds(&many)).fails_with(20).to_owned();
    assert!(out.contains("SFA credential 3:"), "{out}");
    assert!(!out.contains("SFA credential 4:"), "{out}");
    assert!(
        out.contains("and 197 more (200 credentials refused in all)"),
        "{out}"
    );
    assert!(out.len() < 2_000, "{} bytes: {out}", out.len());
}

#[test]
fn malformed_credential_is_invalid() {
    let w = World::new();
    let user = w.user_credential();
    let out = list(&w, creds(&[&user[1..]])).fails_with(20).to_owned();
    assert!(out.contains("SFA credential 1"), "{out}");
}

#[test]
fn altered_credential_is_invalid() {
    let w = World::new();
    let user = w.user_credential();
    let altered = user.replacen("<privileges>", "<foo/><privileges>", 1);
    assert_ne!(altered, user);
    list(&w, creds(&[&altered])).fails_with(20);
}

#[test]
fn wrong_type_only_is_invalid_but_unknown_types_beside_a_good_one_are_ignored() {
    let w = World::new();
    let user = w.user_credential();
    let broken = Value::Array(vec![st(&[
        ("geni_type", s("geni_sfaBROKEN")),
        ("geni_version", s("3")),
        ("geni_value", s(&user)),
    ])]);
    let out = list(&w, broken).fails_with(20).to_owned();
    assert!(out.contains("does not accept"), "{out}");
    let Value::Array(mut mixed) = creds(&[&user]) else {
        unreachable!()
    };
    mixed.push(st(&[
        ("geni_type", s("geni_sfaBROKEN")),
        ("geni_version", s("3")),
        ("geni_value", s("<x/>")),
    ]));
    list(&w, Value::Array(mixed)).ok();
}

#[test]
fn credential_from_an_untrusted_authority_is_refused() {
    let w = World::new();
    let stranger = Authority::root("evil.example", "sa").unwrap();
    let slice = stranger.slice("s1").unwrap();
    let spec_privileges = [geni_credentials::privilege::Privilege::new("*", true)];
    let spec = geni_credentials::sign::CredentialSpec {
        owner: &w.alice.chain(),
        target: &slice.chain(),
        expires: Utc::now() + TimeDelta::days(1),
        privileges: &spec_privileges,
    };
    let cred = sign::issue(
        &spec,
        &stranger.identity().signing_key(),
        Algorithms::default(),
    )
    .unwrap();
    list(&w, creds(&[&cred])).fails_with(23);
}

#[test]
fn real_untrusted_and_expired_corpus_credential_is_refused() {
    let w = World::new();
    let xml = corpus_text("creds/credentials/geni-tools__untrusted-usercred.xml");
    // Checked as of now, the credential has long expired.
    list(&w, creds(&[&xml])).fails_with(21);
}

#[test]
fn expired_credential_is_expired() {
    let w = World::new();
    let slice = w.authority.slice("old").unwrap();
    let cred = w.credential(&w.alice, &slice, &["*"], TimeDelta::seconds(-60));
    describe(&w, "old", creds(&[&cred])).fails_with(21);
}

#[test]
fn credential_for_another_slice_is_a_mismatch() {
    let w = World::new();
    let other = w.slice_credential("other", 30);
    let out = describe(&w, "mine", creds(&[&other]))
        .fails_with(22)
        .to_owned();
    assert!(out.contains("slice+other"), "{out}");
}

#[test]
fn user_credential_used_as_slice_credential_is_a_mismatch() {
    let w = World::new();
    describe(&w, "mine", creds(&[&w.user_credential()])).fails_with(22);
}

#[test]
fn someone_elses_credential_is_a_mismatch() {
    let w = World::new();
    let bob = w.authority.user("bob").unwrap();
    let slice = w.authority.slice("mine").unwrap();
    let bobs = w.credential(&bob, &slice, &["*"], TimeDelta::days(1));
    describe(&w, "mine", creds(&[&bobs])).fails_with(22);
}

#[test]
fn missing_credentials_or_privileges_are_forbidden() {
    let w = World::new();
    describe(&w, "mine", Value::Array(vec![])).fails_with(3);
    let slice = w.authority.slice("mine").unwrap();
    let info_only = w.credential(&w.alice, &slice, &["info"], TimeDelta::days(1));
    w.v3(
        "Allocate",
        vec![
            s(w.slice_urn("mine")),
            creds(&[&info_only]),
            s(request()),
            st(&[]),
        ],
    )
    .fails_with(3);
    w.v3(
        "Allocate",
        vec![
            s(w.slice_urn("mine")),
            s("not a list"),
            s(request()),
            st(&[]),
        ],
    )
    .fails_with(1);
}

#[test]
fn slivers_never_outlive_the_credential() {
    let w = World::new();
    let slice = w.authority.slice("short").unwrap();
    let cred = w.credential(&w.alice, &slice, &["*"], TimeDelta::minutes(3));
    let a = w.v3(
        "Allocate",
        vec![
            s(w.slice_urn("short")),
            creds(&[&cred]),
            s(request()),
            st(&[]),
        ],
    );
    let cap = Utc::now() + TimeDelta::minutes(3);
    for info in items(get(a.ok(), "geni_slivers")) {
        let expires = geni_am::time::parse(text(info, "geni_expires")).unwrap();
        assert!(expires <= cap, "{expires} > {cap}");
    }
}

#[test]
fn a_tool_speaks_for_the_user_with_an_abac_statement() {
    let w = World::new();
    let tool = w.authority.tool("portal").unwrap();
    let tool_chain = w.trust.verify_chain(&tool.chain(), Utc::now()).unwrap();
    let statement = sign::speaks_for(
        &w.alice.signing_key(),
        tool.cert(),
        Utc::now() + TimeDelta::days(1),
        Algorithms::default(),
    )
    .unwrap();
    let slice_cred = w.slice_credential("tooled", 30);
    let slice = w.slice_urn("tooled");
    let abac = st(&[
        ("geni_type", s("geni_abac")),
        ("geni_version", s("1")),
        ("geni_value", s(&statement)),
    ]);
    let Value::Array(mut flat) = creds(&[&slice_cred]) else {
        unreachable!()
    };
    flat.insert(0, abac);
    let speaking = st(&[geni3(), ("geni_speaking_for", s(w.alice.urn().to_string()))]);
    let call = |credentials: Value, options: Value| {
        w.call_as(
            &tool_chain,
            ApiVersion::V3,
            "Describe",
            vec![strings(&[&slice]), credentials, options],
        )
    };
    call(Value::Array(flat.clone()), speaking.clone()).ok();
    // Without the option the tool itself is the caller and owns nothing.
    call(Value::Array(flat), st(&[geni3()])).fails_with(22);
    // Without the statement the tool may not speak for alice.
    call(creds(&[&slice_cred]), speaking).fails_with(3);
}
